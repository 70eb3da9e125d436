// Shape operations: `reshape`, `flatten`, `transpose`, `concat`, `split`,
// `broadcast_to`, `arange` and nearest `interpolate`, and the value
// constructors `zeros`, `ones`,
// `full` and their `_like` forms. Ops that would not change their input
// return it unchanged.
#include "frontend/BuiltinsArgs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace modelc::builtins {

namespace {
int64_t product(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

CValue reshapeTo(BuiltinCall &call, int x, const std::vector<int64_t> &shape) {
  TensorType result{call.typeOf(x).dtype, shape};
  if (result == call.typeOf(x))
    return CValue::ofTensor(x);
  return CValue::ofTensor(
      call.builder.emit1("reshape", {x}, result, {}, call.loc));
}

/// `reshape(x, shape)`: the same element count; one -1 is inferred.
std::optional<CValue> reshape(BuiltinCall &call) {
  std::optional<int> x = call.tensor(0);
  std::optional<std::vector<int64_t>> shape =
      x ? call.intList(1) : std::nullopt;
  if (!x || !shape)
    return std::nullopt;
  const TensorType type = call.typeOf(*x);
  auto inferred = std::find(shape->begin(), shape->end(), -1);
  if (std::count(shape->begin(), shape->end(), -1) > 1)
    return call.error(1, "'reshape' allows one -1 in 'shape', got " +
                             formatShape(*shape));
  for (int64_t d : *shape)
    if (d <= 0 && d != -1)
      return call.error(1,
                        "'reshape' needs sizes of at least 1 in 'shape', got " +
                            formatShape(*shape));
  int64_t known = 1;
  for (int64_t d : *shape)
    if (d != -1 && __builtin_mul_overflow(known, d, &known))
      return call.error(1, "'reshape' shape " + formatShape(*shape) +
                               " has too many elements");
  int64_t count = type.numElements();
  if (inferred != shape->end() && count % known == 0)
    *inferred = count / known;
  else if (inferred != shape->end() || known != count)
    return call.error(
        1, "'reshape' cannot reshape " + type.str() + " (" +
               std::to_string(count) + " elements) to " + formatShape(*shape) +
               (inferred != shape->end()
                    ? ": " + std::to_string(count) + " is not a multiple of " +
                          std::to_string(known)
                    : " (" + std::to_string(known) + " elements)"));
  return reshapeTo(call, *x, *shape);
}

/// `flatten(x, start = 1, end = -1)`: axes start..end merged into one.
std::optional<CValue> flatten(BuiltinCall &call) {
  std::optional<int> x = call.tensor(0);
  if (!x)
    return std::nullopt;
  const TensorType type = call.typeOf(*x);
  std::optional<int64_t> start = call.axis(1, 1, type);
  std::optional<int64_t> end = start ? call.axis(2, -1, type) : std::nullopt;
  if (!start || !end)
    return std::nullopt;
  if (*start > *end)
    return call.error(2, "'flatten' needs 'start' <= 'end', got axes " +
                             std::to_string(*start) + " and " +
                             std::to_string(*end) + " of " + type.str());
  std::vector<int64_t> shape(type.shape.begin(), type.shape.begin() + *start);
  shape.push_back(product(std::vector<int64_t>(type.shape.begin() + *start,
                                               type.shape.begin() + *end + 1)));
  shape.insert(shape.end(), type.shape.begin() + *end + 1, type.shape.end());
  return reshapeTo(call, *x, shape);
}

/// `transpose(x)` swaps the last two axes; `transpose(x, perm)` permutes
/// (attr `perm`, the full permutation, normalised non-negative).
std::optional<CValue> transpose(BuiltinCall &call) {
  std::optional<int> x = call.tensor(0);
  if (!x)
    return std::nullopt;
  const TensorType type = call.typeOf(*x);
  const int64_t rank = static_cast<int64_t>(type.shape.size());
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  if (!call.has(1)) {
    if (rank < 2)
      return call.error(0, "'transpose' without 'perm' swaps the last two axes "
                           "and needs at least 2, got " +
                               type.str());
    std::swap(perm[rank - 2], perm[rank - 1]);
  } else {
    std::optional<std::vector<int64_t>> given = call.intList(1);
    if (!given)
      return std::nullopt;
    if (static_cast<int64_t>(given->size()) != rank)
      return call.error(1, "'transpose' needs a permutation of " +
                               std::to_string(rank) + " axes for " +
                               type.str() + ", got " + formatShape(*given));
    std::vector<bool> seen(rank, false);
    for (int64_t d = 0; d < rank; ++d) {
      std::optional<int64_t> axis =
          normaliseAxis(call.builder, "'transpose'", "perm", (*given)[d], type,
                        call.locOf(1));
      if (!axis)
        return std::nullopt;
      if (seen[*axis])
        return call.error(1, "'transpose' 'perm' " + formatShape(*given) +
                                 " is not a permutation: axis " +
                                 std::to_string(*axis) + " appears twice");
      seen[*axis] = true;
      perm[d] = *axis;
    }
  }
  TensorType result{type.dtype, {}};
  for (int64_t d : perm)
    result.shape.push_back(type.shape[d]);
  bool identity = std::is_sorted(perm.begin(), perm.end());
  if (identity)
    return CValue::ofTensor(*x);
  AttrDict attrs{{"perm", Attr(perm)}};
  return CValue::ofTensor(call.builder.emit1("transpose", {*x}, result,
                                             std::move(attrs), call.loc));
}

/// `concat(xs, axis = 0)`: a list of tensors of one type, equal except
/// along `axis`.
std::optional<CValue> concat(BuiltinCall &call) {
  const CValue &list = call.value(0);
  bool tensors = list.kind == CValue::Kind::List && !list.list.empty() &&
                 std::all_of(list.list.begin(), list.list.end(),
                             [](const CValue &v) { return v.isTensor(); });
  if (!tensors)
    return call.error(
        0, "'concat' expects a non-empty list of tensors for 'xs', got " +
               call.describeArg(0));
  const TensorType first = call.typeOf(list.list[0].tensor);
  std::optional<int64_t> axis = call.axis(1, 0, first);
  if (!axis)
    return std::nullopt;
  WideSize joined = first.shape[*axis];
  std::vector<int> operands{list.list[0].tensor};
  for (size_t i = 1; i < list.list.size(); ++i) {
    const TensorType &t = call.typeOf(list.list[i].tensor);
    if (t.dtype != first.dtype)
      return call.error(0, "'concat' needs tensors of one element type, got " +
                               first.str() + " and " + t.str());
    bool match = t.shape.size() == first.shape.size();
    for (size_t d = 0; match && d < t.shape.size(); ++d)
      match = static_cast<int64_t>(d) == *axis || t.shape[d] == first.shape[d];
    if (!match)
      return call.error(0, "'concat' cannot join " + first.str() + " and " +
                               t.str() + " along axis " +
                               std::to_string(*axis) +
                               ": other dimensions must be equal");
    joined += t.shape[*axis];
    operands.push_back(list.list[i].tensor);
  }
  if (operands.size() == 1)
    return list.list[0];
  std::vector<WideSize> wide(first.shape.begin(), first.shape.end());
  wide[*axis] = joined;
  std::optional<std::vector<int64_t>> shape =
      checkResultShape(call.builder, call.quoted(), wide, call.loc);
  if (!shape)
    return std::nullopt;
  TensorType result{first.dtype, *shape};
  AttrDict attrs{{"axis", Attr(*axis)}};
  return CValue::ofTensor(call.builder.emit1("concat", operands, result,
                                             std::move(attrs), call.loc));
}

/// `split(x, n, axis = 0)`: n equal parts (as torch.chunk, but the size must
/// divide); a list of n tensors.
std::optional<CValue> split(BuiltinCall &call) {
  std::optional<int> x = call.tensor(0);
  std::optional<int64_t> n = x ? call.intArg(1, 1) : std::nullopt;
  if (!x || !n)
    return std::nullopt;
  const TensorType type = call.typeOf(*x);
  std::optional<int64_t> axis = call.axis(2, 0, type);
  if (!axis)
    return std::nullopt;
  // Each part is a result of one op; more than this is not a model.
  const int64_t maxParts = 65536;
  if (*n < 1 || *n > maxParts)
    return call.error(1, "'split' needs 'n' from 1 to " +
                             std::to_string(maxParts) + ", got " +
                             std::to_string(*n));
  int64_t size = type.shape[*axis];
  if (size % *n != 0)
    return call.error(1, "'split' cannot split axis " + std::to_string(*axis) +
                             " of " + type.str() + " (size " +
                             std::to_string(size) + ") into " +
                             std::to_string(*n) + " equal parts");
  if (*n == 1)
    return CValue::ofList({CValue::ofTensor(*x)});
  TensorType part = type;
  part.shape[*axis] = size / *n;
  AttrDict attrs{{"axis", Attr(*axis)}};
  std::vector<int> results =
      call.builder.emit("split", {*x}, std::vector<TensorType>(*n, part),
                        std::move(attrs), call.loc);
  std::vector<CValue> parts;
  for (int r : results)
    parts.push_back(CValue::ofTensor(r));
  return CValue::ofList(std::move(parts));
}

/// `broadcast_to(x, shape)` by NumPy rules.
std::optional<CValue> broadcastTo(BuiltinCall &call) {
  std::optional<int> x = call.tensor(0);
  std::optional<std::vector<int64_t>> shape =
      x ? call.intList(1) : std::nullopt;
  if (!x || !shape)
    return std::nullopt;
  const TensorType type = call.typeOf(*x);
  std::optional<std::vector<int64_t>> joined =
      broadcastShapes(type.shape, *shape);
  bool positive = std::all_of(shape->begin(), shape->end(),
                              [](int64_t d) { return d >= 1; });
  if (!positive || !joined || *joined != *shape)
    return call.error(1, "'broadcast_to' cannot broadcast " + type.str() +
                             " to " + formatShape(*shape));
  if (type.shape == *shape)
    return CValue::ofTensor(*x);
  if (!checkResultShape(call.builder, call.quoted(), *shape, call.locOf(1)))
    return std::nullopt;
  return CValue::ofTensor(call.builder.emit1(
      "broadcast_to", {*x}, TensorType{type.dtype, *shape}, {}, call.loc));
}

/// `arange(n)`: i32 0..n-1.
std::optional<CValue> arange(BuiltinCall &call) {
  std::optional<int64_t> n = call.intArg(0, 0);
  if (!n)
    return std::nullopt;
  if (*n < 1 || *n > INT32_MAX)
    return call.error(0, "'arange' needs 'n' from 1 to " +
                             std::to_string(INT32_MAX) + ", got " +
                             std::to_string(*n));
  return CValue::ofTensor(call.builder.emit1(
      "arange", {}, TensorType{DType::I32, {*n}}, {}, call.loc));
}
namespace {
/// Bilinear upsampling (align_corners = false) by the whole factor `s` along
/// `axis` of x: output o = i * s + r reads source i + f_r, f_r = (r + 0.5) /
/// s - 0.5 (torch's area_pixel_compute_source_index, a negative source
/// clamped to 0), so it is (1 + f) x[i] - f x[i - 1] for f < 0 and (1 - f)
/// x[i] + f x[i + 1] otherwise, the neighbours clamped at the edges (x[-1]
/// = x[0], x[L] = x[L - 1]). The s phases are concatenated along a new axis
/// after `axis` and merged into it, so only slices, concats, products, sums
/// and reshapes appear (and differentiate).
int upsampleLinear(BuiltinCall &call, int x, int64_t axis, int64_t s) {
  GraphBuilder &builder = call.builder;
  const TensorType type = call.typeOf(x);
  const int64_t length = type.shape[axis];
  auto slice = [&](int value, int64_t from, int64_t to) {
    TensorType sliced = type;
    sliced.shape[axis] = to - from;
    std::vector<int64_t> starts(type.shape.size(), 0), limits = type.shape,
                         strides(type.shape.size(), 1);
    starts[axis] = from;
    limits[axis] = to;
    AttrDict attrs{{"starts", Attr(starts)},
                   {"limits", Attr(limits)},
                   {"strides", Attr(strides)}};
    return builder.emit1("slice", {value}, sliced, std::move(attrs), call.loc);
  };
  auto concat = [&](std::vector<int> parts, const TensorType &result,
                    int64_t along) {
    AttrDict attrs{{"axis", Attr(along)}};
    return builder.emit1("concat", std::move(parts), result, std::move(attrs),
                         call.loc);
  };
  auto scaled = [&](int value, double factor) {
    int c = scalarConstant(builder, CValue::ofFloat(factor), type.dtype,
                           call.loc);
    return builder.emit1("mul", {value, c}, call.typeOf(value), {}, call.loc);
  };
  int previous = x, next = x;
  if (length > 1) {
    previous = concat({slice(x, 0, 1), slice(x, 0, length - 1)}, type, axis);
    next = concat({slice(x, 1, length), slice(x, length - 1, length)}, type,
                  axis);
  }
  TensorType phaseType = type;
  phaseType.shape.insert(phaseType.shape.begin() + axis + 1, 1);
  std::vector<int> phases;
  for (int64_t r = 0; r < s; ++r) {
    double f = (double(r) + 0.5) / double(s) - 0.5;
    int neighbour = f < 0 ? previous : next;
    int phase = builder.emit1("add",
                              {scaled(x, 1.0 - std::fabs(f)),
                               scaled(neighbour, std::fabs(f))},
                              type, {}, call.loc);
    phases.push_back(reshapeTo(call, phase, phaseType.shape).tensor);
  }
  TensorType stacked = phaseType;
  stacked.shape[axis + 1] = s;
  int all = concat(phases, stacked, axis + 1);
  std::vector<int64_t> merged = type.shape;
  merged[axis] = length * s;
  return reshapeTo(call, all, merged).tensor;
}
} // namespace

/// `interpolate(x, scale_factor, mode = "nearest")` on NCHW by a whole
/// factor s, as torch's. "nearest": each pixel repeated `s` times along both
/// spatial axes (out[i] = in[floor(i / s)]): a reshape to [n, c, h, 1, w,
/// 1], a broadcast to [n, c, h, s, w, s] and a reshape back, so the gradient
/// sums each s x s block. "bilinear" (align_corners = false):
/// upsampleLinear along h, then along w. Other modes and fractional factors
/// are refused.
std::optional<CValue> interpolate(BuiltinCall &call) {
  std::optional<int> x = call.tensor(0);
  std::optional<int64_t> scale = x ? call.intArg(1, 1) : std::nullopt;
  std::optional<std::string> mode =
      scale ? call.stringArg(2, "nearest") : std::nullopt;
  if (!mode)
    return std::nullopt;
  const TensorType type = call.typeOf(*x);
  if (type.shape.size() != 4)
    return call.error(0, "'interpolate' needs x of shape [n, c, h, w], got " +
                             type.str());
  if (*scale < 1 || *scale > 4096)
    return call.error(1, "'interpolate' needs a whole 'scale_factor' from 1 "
                         "to 4096, got " +
                             call.describeArg(1));
  if (*mode != "nearest" && *mode != "bilinear")
    return call.error(2, "'interpolate' supports modes \"nearest\" and "
                         "\"bilinear\" (align_corners = false, a whole scale "
                         "factor); got \"" +
                             *mode + "\"");
  if (*mode == "bilinear" && !isFloat(type.dtype))
    return call.error(0, "'interpolate' needs a float x for \"bilinear\", "
                         "got " +
                             type.str());
  const int64_t n = type.shape[0], c = type.shape[1], h = type.shape[2],
                w = type.shape[3], s = *scale;
  int64_t count;
  if (__builtin_mul_overflow(type.numElements(), s * s, &count))
    return call.error(1, "'interpolate' output has too many elements");
  if (s == 1)
    return CValue::ofTensor(*x);
  if (*mode == "bilinear")
    return CValue::ofTensor(
        upsampleLinear(call, upsampleLinear(call, *x, 2, s), 3, s));
  CValue column = reshapeTo(call, *x, {n, c, h, 1, w, 1});
  int spread = call.builder.emit1("broadcast_to", {column.tensor},
                                  TensorType{type.dtype, {n, c, h, s, w, s}},
                                  {}, call.loc);
  return reshapeTo(call, spread, {n, c, h * s, w * s});
}

/// `zeros(shape, dtype = "f32")`, `ones(shape, dtype)`, `full(shape, value,
/// dtype)` as torch.zeros/ones/full: a constant of compile-time `shape`
/// (sizes >= 1; `[]` for a scalar); `zeros_like(x)`, `ones_like(x)`,
/// `full_like(x, value)` take x's type. Never differentiated (constants).
std::optional<CValue> filled(BuiltinCall &call) {
  const std::string name = call.name();
  const bool like = name.size() > 5 && name.rfind("_like") == name.size() - 5;
  const bool full = name.rfind("full", 0) == 0;
  TensorType type;
  if (like) {
    std::optional<int> x = call.tensor(0);
    if (!x)
      return std::nullopt;
    type = call.typeOf(*x);
  } else {
    std::optional<std::vector<int64_t>> shape = call.intList(0);
    if (!shape)
      return std::nullopt;
    int64_t count = 1;
    for (int64_t d : *shape)
      if (d < 1 || __builtin_mul_overflow(count, d, &count))
        return call.error(0, call.quoted() +
                                 " needs sizes of at least 1 and at most "
                                 "2^63 - 1 elements in 'shape', got " +
                                 formatShape(*shape));
    const size_t dtypeIndex = full ? 2 : 1;
    std::optional<std::string> dtypeText = call.stringArg(dtypeIndex, "f32");
    if (!dtypeText)
      return std::nullopt;
    if (!parseDType(*dtypeText, type.dtype))
      return call.error(dtypeIndex,
                        call.quoted() + " needs a 'dtype' such as \"f32\" or "
                                        "\"i32\", got \"" +
                            *dtypeText + "\"");
    type.shape = *shape;
  }
  double value = name.rfind("ones", 0) == 0 ? 1.0 : 0.0;
  if (full) {
    std::optional<double> v = call.floatArg(1, 0.0);
    if (!v)
      return std::nullopt;
    value = *v;
    const bool exact = !isFloat(type.dtype);
    if (exact && (value != std::trunc(value) ||
                  (type.dtype == DType::Bool && value != 0 && value != 1)))
      return call.error(1, call.quoted() + " needs a value that " +
                               dtypeName(type.dtype) + " holds, got " +
                               call.describeArg(1));
  }
  return CValue::ofTensor(call.builder.constant(value, type, call.loc));
}
} // namespace

const std::vector<BuiltinDef> &shapeBuiltins() {
  static const std::vector<BuiltinDef> defs = {
      {"reshape", {{"x", nullptr}, {"shape", nullptr}}, reshape},
      {"flatten", {{"x", nullptr}, {"start", "1"}, {"end", "-1"}}, flatten},
      {"transpose", {{"x", nullptr}, {"perm", "?"}}, transpose},
      {"concat", {{"xs", nullptr}, {"axis", "0"}}, concat},
      {"split", {{"x", nullptr}, {"n", nullptr}, {"axis", "0"}}, split},
      {"broadcast_to", {{"x", nullptr}, {"shape", nullptr}}, broadcastTo},
      {"arange", {{"n", nullptr}}, arange},
      {"interpolate",
       {{"x", nullptr}, {"scale_factor", nullptr}, {"mode", "\"nearest\""}},
       interpolate},
      {"zeros", {{"shape", nullptr}, {"dtype", "\"f32\""}}, filled},
      {"ones", {{"shape", nullptr}, {"dtype", "\"f32\""}}, filled},
      {"full",
       {{"shape", nullptr}, {"value", nullptr}, {"dtype", "\"f32\""}},
       filled},
      {"zeros_like", {{"x", nullptr}}, filled},
      {"ones_like", {{"x", nullptr}}, filled},
      {"full_like", {{"x", nullptr}, {"value", nullptr}}, filled},
  };
  return defs;
}

} // namespace modelc::builtins
