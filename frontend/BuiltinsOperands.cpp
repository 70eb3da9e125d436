// Operands of elementwise ops: one element type across tensors, Python-like
// scalars that take the tensors' type, and NumPy broadcasting of shapes.
#include "frontend/BuiltinsArgs.h"

#include <algorithm>
#include <limits>

namespace modelc {

namespace builtins {

namespace {
/// The inclusive range of integers that `dtype` holds.
std::pair<int64_t, int64_t> integerRange(DType dtype) {
  switch (dtype) {
  case DType::I32:
    return {std::numeric_limits<int32_t>::min(),
            std::numeric_limits<int32_t>::max()};
  case DType::U8:
    return {0, std::numeric_limits<uint8_t>::max()};
  case DType::U16:
    return {0, std::numeric_limits<uint16_t>::max()};
  default:
    return {std::numeric_limits<int64_t>::min(),
            std::numeric_limits<int64_t>::max()};
  }
}

/// Checks that the compile-time scalar `value` can take `dtype`; `context`
/// names what it meets ("f32[4]" or "f32 scalars").
bool scalarFits(GraphBuilder &builder, const std::string &op, const Arg &arg,
                DType dtype, const std::string &context) {
  const CValue &v = arg.value;
  std::string what =
      op + " cannot combine " + describe(v, builder) + " with " + context;
  DiagnosticEngine &diag = builder.diagnostics();
  switch (v.kind) {
  case CValue::Kind::Float:
    if (isFloat(dtype))
      return true;
    diag.error(arg.loc, what + ": a float scalar needs a float tensor; convert "
                               "the tensor with f32(...)");
    return false;
  case CValue::Kind::Int: {
    if (dtype == DType::Bool) {
      diag.error(arg.loc, what + "; use true or false");
      return false;
    }
    if (isFloat(dtype))
      return true;
    auto [lo, hi] = integerRange(dtype);
    if (v.i >= lo && v.i <= hi)
      return true;
    diag.error(arg.loc, what + ": " + std::to_string(v.i) +
                            " is out of range for " + dtypeName(dtype));
    return false;
  }
  case CValue::Kind::Bool:
    if (dtype == DType::Bool)
      return true;
    diag.error(arg.loc, what + ": a bool needs a bool tensor");
    return false;
  default:
    diag.error(arg.loc, op + " expects a tensor or a number, got " +
                            describe(v, builder));
    return false;
  }
}
} // namespace

int scalarConstant(GraphBuilder &builder, const CValue &value, DType dtype,
                   SourceLoc loc) {
  AttrDict attrs;
  if (isFloat(dtype))
    attrs["value"] =
        Attr(value.kind == CValue::Kind::Float ? value.f
                                               : static_cast<double>(value.i));
  else if (value.kind == CValue::Kind::Bool)
    attrs["value"] = Attr(static_cast<int64_t>(value.b ? 1 : 0));
  else
    attrs["value"] = Attr(value.i);
  return builder.emit1("constant", {}, TensorType{dtype, {}}, std::move(attrs),
                       loc);
}

std::optional<std::vector<int>>
unifyOperands(GraphBuilder &builder, const std::string &op,
              const std::vector<const Arg *> &operands, SourceLoc loc) {
  // The element type comes from the tensors, which must agree.
  const Arg *first = nullptr;
  for (const Arg *a : operands) {
    if (!a->value.isTensor())
      continue;
    if (!first) {
      first = a;
      continue;
    }
    const TensorType &t0 = builder.typeOf(first->value);
    const TensorType &t1 = builder.typeOf(a->value);
    if (t0.dtype == t1.dtype)
      continue;
    DType target =
        !isFloat(t0.dtype) && isFloat(t1.dtype) ? t1.dtype : t0.dtype;
    builder.diagnostics().error(
        loc, op + " needs operands of one element type, got " + t0.str() +
                 " and " + t1.str() + "; convert with " + dtypeName(target) +
                 "(...)");
    return std::nullopt;
  }

  DType dtype = DType::Bool;
  std::string context;
  if (first) {
    dtype = builder.typeOf(first->value).dtype;
    context = builder.typeOf(first->value).str();
  } else {
    auto anyOf = [&](CValue::Kind kind) {
      return std::any_of(operands.begin(), operands.end(),
                         [&](const Arg *a) { return a->value.kind == kind; });
    };
    if (anyOf(CValue::Kind::Float))
      dtype = DType::F32;
    else if (anyOf(CValue::Kind::Int))
      dtype = DType::I64;
    context = std::string(dtypeName(dtype)) + " scalars";
  }

  std::vector<int> ids;
  for (const Arg *a : operands) {
    if (a->value.isTensor()) {
      ids.push_back(a->value.tensor);
      continue;
    }
    if (!scalarFits(builder, op, *a, dtype, context))
      return std::nullopt;
    ids.push_back(scalarConstant(builder, a->value, dtype, a->loc));
  }
  return ids;
}

std::optional<std::vector<int64_t>>
broadcastOperands(GraphBuilder &builder, const std::string &op,
                  const std::vector<int> &operands, SourceLoc loc) {
  std::vector<int64_t> shape;
  bool ok = true;
  for (int id : operands) {
    std::optional<std::vector<int64_t>> next =
        broadcastShapes(shape, builder.typeOf(id).shape);
    if (!next) {
      ok = false;
      break;
    }
    shape = *next;
  }
  if (ok)
    return checkResultShape(builder, op, shape, loc);
  std::string types;
  for (size_t i = 0; i < operands.size(); ++i) {
    const char *sep = i == 0 ? "" : i + 1 == operands.size() ? " and " : ", ";
    types += sep + builder.typeOf(operands[i]).str();
  }
  builder.diagnostics().error(
      loc, op + " cannot broadcast " + types +
               ": each trailing dimension must match or be 1");
  return std::nullopt;
}

} // namespace builtins
} // namespace modelc
