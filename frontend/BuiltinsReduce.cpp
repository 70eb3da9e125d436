// Reductions: `sum mean max min` over one or more axes, `argmax`, and the
// normalisations along one axis `softmax` and `log_softmax`.
#include "frontend/BuiltinsArgs.h"

namespace modelc::builtins {

namespace {
enum ReduceParam { kX, kAxis, kKeepdim };

std::vector<int64_t> reducedShape(const std::vector<int64_t> &shape,
                                  const std::vector<int64_t> &axes,
                                  bool keepdim) {
  std::vector<int64_t> result;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool reduced = false;
    for (int64_t a : axes)
      reduced |= a == static_cast<int64_t>(d);
    if (!reduced)
      result.push_back(shape[d]);
    else if (keepdim)
      result.push_back(1);
  }
  return result;
}

/// `sum`, `mean`, `max`, `min` with attrs `axes` (sorted, non-negative) and
/// `keepdim`. As in PyTorch, `sum` of an integer or bool tensor is i64 (the
/// input is cast first), `mean` needs floats, `max`/`min` numbers.
std::optional<CValue> reduce(BuiltinCall &call) {
  const std::string name = call.name();
  std::optional<int> x =
      name == "mean" ? call.floatTensor(kX) : call.tensor(kX);
  if (!x)
    return std::nullopt;
  TensorType type = call.typeOf(*x);
  std::optional<std::vector<int64_t>> axes = call.axes(kAxis, type);
  std::optional<bool> keepdim = call.boolArg(kKeepdim, false);
  if (!axes || !keepdim)
    return std::nullopt;
  if ((name == "max" || name == "min") && type.dtype == DType::Bool)
    return call.error(kX, call.quoted() +
                              " needs a numeric tensor for 'x', got " +
                              type.str() + "; convert with i32(...)");
  if (name == "sum" && !isFloat(type.dtype) && type.dtype != DType::I64) {
    type.dtype = DType::I64;
    x = call.builder.emit1("cast", {*x}, type, {}, call.loc);
  }
  // A 0-d tensor has no axis to reduce: it is its own sum, mean, max and
  // min, as in PyTorch.
  if (axes->empty())
    return CValue::ofTensor(*x);
  TensorType result{type.dtype, reducedShape(type.shape, *axes, *keepdim)};
  AttrDict attrs{{"axes", Attr(*axes)}, {"keepdim", Attr(*keepdim)}};
  return CValue::ofTensor(
      call.builder.emit1(name, {*x}, result, std::move(attrs), call.loc));
}

/// `argmax(x, axis, keepdim = false)` gives i64 indices.
std::optional<CValue> argmax(BuiltinCall &call) {
  std::optional<int> x = call.tensor(kX);
  if (!x)
    return std::nullopt;
  const TensorType &type = call.typeOf(*x);
  if (type.dtype == DType::Bool)
    return call.error(kX, "'argmax' needs a numeric tensor for 'x', got " +
                              type.str() + "; convert with i32(...)");
  std::optional<int64_t> axis = call.axis(kAxis, 0, type);
  std::optional<bool> keepdim = call.boolArg(kKeepdim, false);
  if (!axis || !keepdim)
    return std::nullopt;
  TensorType result{DType::I64, reducedShape(type.shape, {*axis}, *keepdim)};
  AttrDict attrs{{"axis", Attr(*axis)}, {"keepdim", Attr(*keepdim)}};
  return CValue::ofTensor(
      call.builder.emit1("argmax", {*x}, result, std::move(attrs), call.loc));
}

/// `softmax(x, axis = -1)`, `log_softmax(x, axis = -1)`: float, same type.
std::optional<CValue> softmax(BuiltinCall &call) {
  std::optional<int> x = call.floatTensor(kX);
  if (!x)
    return std::nullopt;
  const TensorType type = call.typeOf(*x);
  std::optional<int64_t> axis = call.axis(kAxis, -1, type);
  if (!axis)
    return std::nullopt;
  AttrDict attrs{{"axis", Attr(*axis)}};
  return CValue::ofTensor(
      call.builder.emit1(call.name(), {*x}, type, std::move(attrs), call.loc));
}
} // namespace

const std::vector<BuiltinDef> &reduceBuiltins() {
  static const std::vector<BuiltinDef> defs = [] {
    std::vector<BuiltinDef> d;
    for (const char *name : {"sum", "mean", "max", "min"})
      d.push_back({name,
                   {{"x", nullptr}, {"axis", "all"}, {"keepdim", "false"}},
                   reduce});
    d.push_back({"argmax",
                 {{"x", nullptr}, {"axis", nullptr}, {"keepdim", "false"}},
                 argmax});
    for (const char *name : {"softmax", "log_softmax"})
      d.push_back({name, {{"x", nullptr}, {"axis", "-1"}}, softmax});
    return d;
  }();
  return defs;
}

} // namespace modelc::builtins
