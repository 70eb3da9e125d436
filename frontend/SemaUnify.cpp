// Types in declarations: unifying an actual tensor type with a block
// signature's declared type (binding size variables and `*name` dims at
// their first occurrence, checking them at later ones), and evaluating the
// fully known types of parameters, inputs and data fields.
#include "frontend/Sema.h"

namespace modelc::sema {

namespace {
std::string shapeText(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string fromArgument(const std::string &origin) {
  return origin.empty() ? "" : " from argument '" + origin + "'";
}
} // namespace

namespace {
/// Records a mismatch; the first reason is the one reported.
void addMismatch(UnifyResult &r, const std::string &reason) {
  if (r.ok || r.reason.empty())
    r.reason = reason;
  r.ok = false;
}
} // namespace

UnifyResult Sema::unify(const ast::TypeExpr &type, const TensorType &actual,
                        const std::string &argName) {
  UnifyResult r;
  DType dtype;
  if (!parseDType(type.name, dtype)) {
    r.poisoned = true; // reported by the declaration check
    return r;
  }
  if (dtype != actual.dtype)
    r.ok = false;
  size_t variadic = type.dims.size();
  for (size_t i = 0; i < type.dims.size(); ++i)
    if (type.dims[i].variadic)
      variadic = i;
  bool hasVariadic = variadic < type.dims.size();
  size_t fixed = type.dims.size() - (hasVariadic ? 1 : 0);
  size_t rank = actual.shape.size();
  if (hasVariadic ? rank < fixed : rank != fixed) {
    r.ok = false;
    r.reason = std::string("expected ") + (hasVariadic ? "at least " : "") +
               std::to_string(fixed) + " dimension" + (fixed == 1 ? "" : "s") +
               ", got " + std::to_string(rank);
    return r;
  }
  std::vector<int64_t> expected;
  size_t pos = 0;
  for (const ast::DimExpr &d : type.dims) {
    if (d.variadic) {
      std::vector<int64_t> part(actual.shape.begin() + pos,
                                actual.shape.begin() + pos + (rank - fixed));
      pos += rank - fixed;
      if (!unifyVariadicDim(d, part, argName, expected, r))
        return r;
    } else if (!unifyDim(d, actual.shape[pos], pos, argName, expected, r)) {
      return r;
    } else {
      ++pos;
    }
  }
  r.expected = TensorType{dtype, expected}.str();
  return r;
}

bool Sema::unifyVariadicDim(const ast::DimExpr &d,
                            const std::vector<int64_t> &part,
                            const std::string &argName,
                            std::vector<int64_t> &expected, UnifyResult &r) {
  FunctionState &st = cur();
  const Binding *b = lookup(d.variadicName);
  if (!b) {
    std::vector<CValue> dims;
    for (int64_t x : part)
      dims.push_back(CValue::ofInt(x));
    st.scopes.back()[d.variadicName] = Binding{
        CValue::ofList(std::move(dims)), d.loc, BindingKind::SizeVar};
    st.sizeVarOrigin[d.variadicName] = argName;
    expected.insert(expected.end(), part.begin(), part.end());
    return true;
  }
  std::vector<int64_t> bound;
  bool isDims = b->value.kind == CValue::Kind::List;
  for (const CValue &x : b->value.list) {
    isDims = isDims && x.kind == CValue::Kind::Int;
    bound.push_back(x.i);
  }
  if (!isDims) {
    if (b->value.kind != CValue::Kind::None)
      diag.error(d.loc, "'*" + d.variadicName +
                            "' must name a list of dimensions, but it is " +
                            describe(b->value));
    r.poisoned = true;
    return false;
  }
  expected.insert(expected.end(), bound.begin(), bound.end());
  if (bound != part)
    addMismatch(r, "*" + d.variadicName + " = " + shapeText(bound) +
                       fromArgument(st.sizeVarOrigin[d.variadicName]) +
                       ", but " + shapeText(part) + " here");
  return true;
}

bool Sema::unifyDim(const ast::DimExpr &d, int64_t got, size_t pos,
                    const std::string &argName, std::vector<int64_t> &expected,
                    UnifyResult &r) {
  FunctionState &st = cur();
  const ast::Expr *size = d.size.get();
  const auto *name = size ? size->as<ast::NameExpr>() : nullptr;
  const ModuleInfo &mod = curModule();
  if (name && !lookup(name->name) && !mod.consts.count(name->name) &&
      !mod.constDecls.count(name->name)) {
    // A fresh name: a size variable, bound here.
    st.scopes.back()[name->name] =
        Binding{CValue::ofInt(got), size->loc, BindingKind::SizeVar};
    st.sizeVarOrigin[name->name] = argName;
    expected.push_back(got);
    return true;
  }
  CValue v = eval(size);
  if (v.kind != CValue::Kind::Int) {
    if (v.kind != CValue::Kind::None)
      diag.error(size->loc, "a dimension must be a compile-time int, got " +
                                describe(v));
    r.poisoned = true;
    return false;
  }
  expected.push_back(v.i);
  if (v.i == got)
    return true;
  std::string at = "dimension " + std::to_string(pos);
  auto origin =
      name ? st.sizeVarOrigin.find(name->name) : st.sizeVarOrigin.end();
  if (origin != st.sizeVarOrigin.end())
    addMismatch(r, name->name + " = " + std::to_string(v.i) +
                       fromArgument(origin->second) + ", but " +
                       std::to_string(got) + " here");
  else if (size->kind == ast::Expr::Kind::Int)
    addMismatch(r, at + " is " + std::to_string(got) + ", expected " +
                       std::to_string(v.i));
  else
    addMismatch(r, at + " is " + std::to_string(got) + ", but " +
                       exprText(size) + " = " + std::to_string(v.i));
  return true;
}

std::optional<TensorType> Sema::evalTensorType(const ast::TypeExpr &type,
                                               const std::string &what) {
  bool allowVariadic = cur().block != nullptr;
  if (!checkTypeExpr(type, /*allowScalar=*/false, allowVariadic))
    return std::nullopt;
  TensorType t;
  parseDType(type.name, t.dtype);
  bool ok = true;
  for (const ast::DimExpr &d : type.dims) {
    if (d.variadic) {
      const Binding *b = lookup(d.variadicName);
      bool isDims = b && b->value.kind == CValue::Kind::List;
      if (isDims)
        for (const CValue &x : b->value.list)
          isDims = isDims && x.kind == CValue::Kind::Int;
      if (!isDims) {
        if (!b || b->value.kind != CValue::Kind::None)
          diag.error(d.loc, "'*" + d.variadicName +
                                "' must name dimensions bound by the block's "
                                "signature");
        ok = false;
        continue;
      }
      for (const CValue &x : b->value.list)
        t.shape.push_back(x.i);
      continue;
    }
    std::optional<int64_t> n = evalInt(d.size.get(), "a dimension");
    if (n && *n < 1) {
      diag.error(d.size->loc, "the dimensions of " + what +
                                  " must be at least 1, got " +
                                  std::to_string(*n));
      n.reset();
    }
    if (!n)
      ok = false;
    else
      t.shape.push_back(*n);
  }
  if (!ok)
    return std::nullopt;
  if (!checkedElementCount(t.shape)) {
    diag.error(type.loc, "the type of " + what + ", " + t.str() +
                             ", has too many elements");
    return std::nullopt;
  }
  return t;
}

} // namespace modelc::sema
