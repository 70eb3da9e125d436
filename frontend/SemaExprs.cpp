// Evaluation of expressions: names, members, operators, indexing and lists.
// Compile-time operands fold (through the built-ins' rules); tensors emit ops
// into the current function. A poisoned operand (an error was reported for
// it) makes the whole expression poisoned without a second message.
#include "frontend/Sema.h"

namespace modelc::sema {

namespace {
bool poisoned(const CValue &v) {
  if (v.kind == CValue::Kind::None)
    return true;
  if (v.kind == CValue::Kind::List)
    for (const CValue &e : v.list)
      if (poisoned(e))
        return true;
  return false;
}
} // namespace

CValue Sema::eval(const ast::Expr *expr) {
  if (!expr || aborted)
    return CValue();
  DepthGuard guard(*this, expr->loc);
  if (!guard.ok())
    return CValue();
  switch (expr->kind) {
  case ast::Expr::Kind::Int:
    return CValue::ofInt(expr->as<ast::IntExpr>()->value);
  case ast::Expr::Kind::Float:
    return CValue::ofFloat(expr->as<ast::FloatExpr>()->value);
  case ast::Expr::Kind::String:
    return CValue::ofString(expr->as<ast::StringExpr>()->value);
  case ast::Expr::Kind::Bool:
    return CValue::ofBool(expr->as<ast::BoolExpr>()->value);
  case ast::Expr::Kind::Name:
    return evalName(*expr->as<ast::NameExpr>());
  case ast::Expr::Kind::Member:
    return evalMember(*expr->as<ast::MemberExpr>());
  case ast::Expr::Kind::Unary:
    return evalUnary(*expr->as<ast::UnaryExpr>());
  case ast::Expr::Kind::Binary:
    return evalBinary(*expr->as<ast::BinaryExpr>());
  case ast::Expr::Kind::Index:
    return evalIndex(*expr->as<ast::IndexExpr>());
  case ast::Expr::Kind::List:
    return evalList(*expr->as<ast::ListExpr>());
  case ast::Expr::Kind::Call:
    return evalCall(*expr->as<ast::CallExpr>(), nullptr, SourceLoc{});
  case ast::Expr::Kind::As:
    return evalAs(*expr->as<ast::AsExpr>());
  case ast::Expr::Kind::ParamRef:
    return evalParamRef(*expr->as<ast::ParamRefExpr>());
  case ast::Expr::Kind::Interpolated: {
    std::optional<std::string> name =
        interpolatedName(*expr->as<ast::InterpolatedNameExpr>());
    if (!name)
      return CValue();
    return evalName(ast::NameExpr(expr->loc, *name));
  }
  case ast::Expr::Kind::Range:
    diag.error(expr->loc, "a range 'lo .. hi' is only allowed in 'for'");
    return CValue();
  }
  return CValue();
}

const Binding *Sema::lookup(const std::string &name) const {
  const std::vector<Scope> &scopes = cur().scopes;
  for (auto s = scopes.rbegin(); s != scopes.rend(); ++s) {
    auto it = s->find(name);
    if (it != s->end())
      return &it->second;
  }
  return nullptr;
}

Binding *Sema::lookupMutable(const std::string &name) {
  std::vector<Scope> &scopes = cur().scopes;
  for (auto s = scopes.rbegin(); s != scopes.rend(); ++s) {
    auto it = s->find(name);
    if (it != s->end())
      return &it->second;
  }
  return nullptr;
}

std::optional<int> Sema::importedModule(const std::string &name) const {
  const ModuleInfo &mod = curModule();
  auto it = mod.imports.find(name);
  if (it != mod.imports.end())
    return it->second;
  return std::nullopt;
}

std::string Sema::describe(const CValue &v) const {
  return describeValue(v, cur().fn);
}

CValue Sema::checkNewValues(size_t before, const std::string &what,
                            SourceLoc loc, std::optional<CValue> result) {
  if (!result)
    return CValue();
  const std::vector<TensorType> &values = cur().fn.values;
  for (size_t i = before; i < values.size(); ++i) {
    if (checkedElementCount(values[i].shape))
      continue;
    diag.error(loc, what + " gives a tensor with too many elements");
    return CValue();
  }
  return *result;
}

std::optional<std::string>
Sema::interpolatedName(const ast::InterpolatedNameExpr &e) {
  std::string name = e.texts[0];
  for (size_t i = 0; i < e.parts.size(); ++i) {
    std::optional<int64_t> v = evalInt(e.parts[i].get(), "a part of a name");
    if (!v)
      return std::nullopt;
    if (*v < 0) {
      diag.error(e.parts[i]->loc, "a part of a name must be an int >= 0, got " +
                                      std::to_string(*v));
      return std::nullopt;
    }
    name += std::to_string(*v) + e.texts[i + 1];
  }
  return name;
}

CValue Sema::evalName(const ast::NameExpr &e) {
  if (const Binding *b = lookup(e.name))
    return b->value;
  const ModuleInfo &mod = curModule();
  auto c = mod.consts.find(e.name);
  if (c != mod.consts.end())
    return c->second;
  DType dtype;
  if (mod.constDecls.count(e.name))
    diag.error(e.loc, "const '" + e.name +
                          "' is used before its definition; consts are "
                          "evaluated in order");
  else if (e.name == "batch" && cur().entry && cur().entry->isTrain)
    diag.error(e.loc, "'batch' is not a value by itself; use a field of the "
                      "current batch, batch.FIELD");
  else if (mod.blocks.count(e.name))
    diag.error(e.loc,
               "'" + e.name + "' is a block; call it: " + e.name + "(...)");
  else if (importedModule(e.name))
    diag.error(e.loc, "'" + e.name + "' is a module; use its members as " +
                          e.name + ".NAME");
  else if (parseDType(e.name, dtype))
    diag.error(e.loc, "'" + e.name + "' is an element type; convert with " +
                          e.name + "(x)");
  else if (isBuiltin(e.name))
    diag.error(e.loc, "'" + e.name + "' is a built-in operation; call it: " +
                          e.name + "(...)");
  else if (mod.data.count(e.name))
    diag.error(e.loc, "'" + e.name +
                          "' is a data declaration; a train entry uses it "
                          "with `data = " +
                          e.name + "`");
  else {
    std::vector<std::string> candidates;
    for (const Scope &s : cur().scopes)
      for (const auto &entry : s)
        candidates.push_back(entry.first);
    for (const auto &entry : mod.consts)
      candidates.push_back(entry.first);
    diag.error(e.loc, "unknown name '" + e.name + "'" +
                          didYouMean(e.name, candidates));
  }
  return CValue();
}

CValue Sema::evalMember(const ast::MemberExpr &e) {
  const auto *base = e.base ? e.base->as<ast::NameExpr>() : nullptr;
  SourceLoc at = e.fieldLoc.isValid() ? e.fieldLoc : e.loc;
  if (base && !lookup(base->name)) {
    EntryState *entry = cur().entry;
    if (base->name == "batch" && entry && entry->isTrain) {
      if (!entry->batchReady)
        return CValue(); // `data` or `batch` is wrong; already reported
      auto it = entry->batchFields.find(e.field);
      if (it != entry->batchFields.end())
        return it->second;
      diag.error(at, "the data of " + entry->label + " has no field '" +
                         e.field + "'" +
                         didYouMean(e.field, entry->fieldNames) +
                         "; its fields are " + joinNames(entry->fieldNames));
      return CValue();
    }
    if (std::optional<int> m = importedModule(base->name)) {
      if (*m < 0)
        return CValue();
      const ModuleInfo &mod = *modules[*m];
      auto c = mod.consts.find(e.field);
      if (c != mod.consts.end())
        return c->second;
      std::string qual = base->name + "." + e.field;
      if (mod.blocks.count(e.field)) {
        diag.error(at, "'" + qual + "' is a block; call it: " + qual + "(...)");
      } else if (mod.data.count(e.field)) {
        diag.error(at, "'" + qual +
                           "' is a data declaration; a train entry "
                           "uses it with `data = " +
                           qual + "`");
      } else {
        std::vector<std::string> names;
        for (const auto &entry : mod.consts)
          names.push_back(entry.first);
        diag.error(at, "module '" + base->name + "' has no const '" + e.field +
                           "'" + didYouMean(e.field, names));
      }
      return CValue();
    }
    if (base->name == "batch") {
      diag.error(e.loc, "'batch." + e.field +
                            "' is only available in train entries; pass the "
                            "tensor to the block as an argument");
      return CValue();
    }
  }
  CValue v = eval(e.base.get());
  if (!poisoned(v))
    diag.error(at, "'." + e.field +
                       "' applies only to modules (nn.linear) and, in train "
                       "entries, to the batch (batch.image); this is " +
                       describe(v));
  return CValue();
}

CValue Sema::evalUnary(const ast::UnaryExpr &e) {
  CValue operand = eval(e.operand.get());
  if (poisoned(operand))
    return CValue();
  size_t before = cur().fn.values.size();
  std::optional<CValue> r = applyUnary(
      e.op, Arg{operand, ast::startLoc(*e.operand), ""}, e.loc, cur().builder);
  return checkNewValues(before, "this operation", e.loc, r);
}

CValue Sema::evalBinary(const ast::BinaryExpr &e) {
  using Op = ast::BinaryExpr::Op;
  CValue lhs = eval(e.lhs.get());
  // `&&` and `||` on compile-time bools short-circuit, as guards in asserts
  // (`k > 0 && n % k == 0`) expect.
  if (lhs.kind == CValue::Kind::Bool &&
      ((e.op == Op::And && !lhs.b) || (e.op == Op::Or && lhs.b)))
    return lhs;
  CValue rhs = eval(e.rhs.get());
  if (poisoned(lhs) || poisoned(rhs))
    return CValue();
  size_t before = cur().fn.values.size();
  std::optional<CValue> r =
      applyBinary(e.op, Arg{lhs, ast::startLoc(*e.lhs), ""},
                  Arg{rhs, ast::startLoc(*e.rhs), ""}, e.loc, cur().builder);
  return checkNewValues(before, "this operation", e.loc, r);
}

CValue Sema::evalIndex(const ast::IndexExpr &e) {
  CValue base = eval(e.base.get());
  std::vector<IndexSpec> specs;
  bool ok = true;
  auto bound = [&](const ast::ExprPtr &x) -> std::optional<int64_t> {
    if (!x)
      return std::nullopt;
    std::optional<int64_t> v = evalInt(x.get(), "a slice bound");
    ok = ok && v.has_value();
    return v;
  };
  for (const ast::IndexItem &item : e.items) {
    IndexSpec spec;
    spec.kind = item.kind;
    spec.loc = item.loc;
    if (item.kind == ast::IndexItem::Kind::Single) {
      spec.index = evalInt(item.index.get(), "an index (gathers with tensor "
                                             "indices are not supported)");
      ok = ok && spec.index.has_value();
    } else if (item.kind == ast::IndexItem::Kind::Slice) {
      spec.lo = bound(item.lo);
      spec.hi = bound(item.hi);
      spec.step = bound(item.step);
    }
    specs.push_back(spec);
  }
  if (!ok || poisoned(base))
    return CValue();
  size_t before = cur().fn.values.size();
  std::optional<CValue> r = applyIndex(Arg{base, ast::startLoc(*e.base), ""},
                                       specs, e.loc, cur().builder);
  return checkNewValues(before, "indexing", e.loc, r);
}

CValue Sema::evalList(const ast::ListExpr &e) {
  std::vector<CValue> elements;
  bool bad = false;
  for (const ast::ExprPtr &x : e.elements) {
    elements.push_back(eval(x.get()));
    bad = bad || poisoned(elements.back());
  }
  return bad ? CValue() : CValue::ofList(std::move(elements));
}

CValue Sema::evalAs(const ast::AsExpr &e) {
  const auto *call = e.call ? e.call->as<ast::CallExpr>() : nullptr;
  if (!call) {
    if (e.call)
      diag.error(e.loc, "'as' names the scope of a block call's parameters; "
                        "it must follow a call such as nn.linear(x, 10)");
    return CValue();
  }
  std::optional<std::string> scope = evalPath(e.scope);
  if (!scope)
    return CValue();
  return evalCall(*call, &*scope,
                  e.scope.empty() ? e.loc : e.scope.front().loc);
}

std::optional<std::string>
Sema::evalPath(const std::vector<ast::PathComponent> &path) {
  std::string out;
  bool ok = true;
  for (const ast::PathComponent &c : path) {
    out = joinPath(out, c.name);
    if (!c.index)
      continue;
    std::optional<int64_t> i = evalInt(c.index.get(), "a scope index");
    if (i && *i < 0) {
      diag.error(c.index->loc, "a scope index must not be negative, got " +
                                   std::to_string(*i));
      i.reset();
    }
    if (!i)
      ok = false;
    else
      out += "." + std::to_string(*i);
  }
  if (!ok)
    return std::nullopt;
  return out;
}

std::optional<int64_t> Sema::evalInt(const ast::Expr *e,
                                     const std::string &what) {
  CValue v = eval(e);
  if (v.kind == CValue::Kind::Int)
    return v.i;
  if (!poisoned(v))
    diag.error(e->loc,
               what + " must be a compile-time int, got " + describe(v));
  return std::nullopt;
}

std::optional<double> Sema::evalFloat(const ast::Expr *e,
                                      const std::string &what) {
  CValue v = eval(e);
  if (v.kind == CValue::Kind::Int)
    return static_cast<double>(v.i);
  if (v.kind == CValue::Kind::Float)
    return v.f;
  if (!poisoned(v))
    diag.error(e->loc,
               what + " must be a compile-time number, got " + describe(v));
  return std::nullopt;
}

std::optional<bool> Sema::evalBool(const ast::Expr *e,
                                   const std::string &what) {
  CValue v = eval(e);
  if (v.kind == CValue::Kind::Bool)
    return v.b;
  if (!poisoned(v))
    diag.error(e->loc,
               what + " must be a compile-time bool, got " + describe(v));
  return std::nullopt;
}

std::optional<std::string> Sema::evalString(const ast::Expr *e,
                                            const std::string &what) {
  CValue v = eval(e);
  if (v.kind == CValue::Kind::String)
    return v.s;
  if (!poisoned(v))
    diag.error(e->loc,
               what + " must be a compile-time string, got " + describe(v));
  return std::nullopt;
}

} // namespace modelc::sema
