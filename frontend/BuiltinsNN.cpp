// Linear algebra and neural-network ops: `@`/`matmul` (torch.matmul),
// `conv2d`, `max_pool2d`, `avg_pool2d`, `layer_norm`, `embedding`, `dropout`
// and `attention`. Float operands of one element type throughout.
#include "frontend/BuiltinsArgs.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace modelc::builtins {

std::optional<CValue> emitMatmul(GraphBuilder &builder, const Arg &lhs,
                                 const Arg &rhs, SourceLoc loc) {
  DiagnosticEngine &diag = builder.diagnostics();
  for (const Arg *side : {&lhs, &rhs}) {
    if (!side->value.isTensor()) {
      diag.error(side->loc, "'matmul' needs tensors, got " +
                                describe(side->value, builder) +
                                "; use '*' to scale");
      return std::nullopt;
    }
  }
  const TensorType a = builder.typeOf(lhs.value);
  const TensorType b = builder.typeOf(rhs.value);
  if (a.dtype != b.dtype || !isFloat(a.dtype)) {
    diag.error(loc, "'matmul' needs float operands of one element type, got " +
                        a.str() + " and " + b.str());
    return std::nullopt;
  }
  for (const Arg *side : {&lhs, &rhs}) {
    if (builder.typeOf(side->value).shape.empty()) {
      diag.error(side->loc,
                 "'matmul' needs tensors of at least one dimension, got " +
                     builder.typeOf(side->value).str());
      return std::nullopt;
    }
  }
  // As torch.matmul: a 1-D left operand is a row [1, k], a 1-D right operand
  // a column [k, 1], and the added dimension is removed from the result.
  shape_rules::MatmulShapes shapes =
      shape_rules::inferMatmulShapes(a.shape, b.shape);
  if (shapes.lhsK != shapes.rhsK) {
    diag.error(loc, "'matmul' cannot multiply " + a.str() + " by " + b.str() +
                        ": inner dimensions " + std::to_string(shapes.lhsK) +
                        " and " + std::to_string(shapes.rhsK) + " differ");
    return std::nullopt;
  }
  if (!shapes.result) {
    diag.error(loc, "'matmul' cannot broadcast the batch dimensions " +
                        formatShape(shapes.lhsBatch) + " and " +
                        formatShape(shapes.rhsBatch) + " of " + a.str() +
                        " and " + b.str());
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> checked =
      checkResultShape(builder, "'matmul'", *shapes.result, loc);
  if (!checked)
    return std::nullopt;
  return CValue::ofTensor(
      builder.emit1("matmul", {lhs.value.tensor, rhs.value.tensor},
                    TensorType{a.dtype, *checked}, {}, loc));
}

namespace {
std::optional<CValue> matmul(BuiltinCall &call) {
  return emitMatmul(call.builder, call.arg(0), call.arg(1), call.loc);
}

/// A float tensor of rank `rank` (any rank when -1) and the element type
/// `dtype` (when given); `layout` describes the expected shape.
std::optional<TensorType> operand(BuiltinCall &call, size_t i, int rank,
                                  const char *layout,
                                  std::optional<DType> dtype = std::nullopt) {
  std::optional<int> v = call.floatTensor(i);
  if (!v)
    return std::nullopt;
  TensorType type = call.typeOf(*v);
  if (rank >= 0 && type.shape.size() != static_cast<size_t>(rank))
    return call.error(i, call.quoted() + " expects '" + call.param(i) +
                             "' of rank " + std::to_string(rank) + " " +
                             layout + ", got " + type.str());
  if (dtype && type.dtype != *dtype)
    return call.error(i, call.quoted() + " needs '" + call.param(i) +
                             "' of element type " + dtypeName(*dtype) +
                             " like the input, got " + type.str());
  return type;
}

std::string pairText(const std::vector<int64_t> &p) { return formatShape(p); }

/// The last step of the built-ins here: checks that the result shape fits in
/// int64, then emits the op with its operands and attributes.
template <typename Size>
std::optional<CValue> emitChecked(BuiltinCall &call, const std::string &opName,
                                  std::vector<int> operands, DType dtype,
                                  const std::vector<Size> &shape,
                                  AttrDict attrs = {}) {
  std::optional<std::vector<int64_t>> checked =
      checkResultShape(call.builder, call.quoted(), shape, call.loc);
  if (!checked)
    return std::nullopt;
  return CValue::ofTensor(call.builder.emit1(opName, std::move(operands),
                                             TensorType{dtype, *checked},
                                             std::move(attrs), call.loc));
}

/// Whether `shape` has at most 2^63 - 1 elements.
bool isCountable(const std::vector<WideSize> &shape) {
  WideSize count = 1;
  for (WideSize d : shape)
    if ((count *= d) > std::numeric_limits<int64_t>::max())
      return false;
  return true;
}

/// Whether the working buffer `shape` that lowering the call needs besides
/// its operands and result (conv2d's im2col columns, attention's scores) is
/// countable; an error at the call otherwise.
bool checkWorkingBuffer(BuiltinCall &call, const std::string &what,
                        const std::vector<WideSize> &shape) {
  if (isCountable(shape))
    return true;
  call.error(call.loc,
             call.quoted() + " needs " + what + " with too many elements");
  return false;
}

/// Appends argument `i`, a convolution's optional bias `[cout]` of x's
/// dtype, to `operands`; `weightText` says where cout comes from. False
/// after reporting.
bool appendConvBias(BuiltinCall &call, size_t i, int64_t cout, DType dtype,
                    const std::string &weightText, std::vector<int> &operands) {
  if (!call.has(i))
    return true;
  std::optional<TensorType> b = operand(call, i, 1, "[cout]", dtype);
  if (!b)
    return false;
  if (b->shape[0] != cout) {
    call.error(i, call.quoted() + " expects 'b' of shape [" +
                      std::to_string(cout) + "] for w " + weightText +
                      ", got " + b->str());
    return false;
  }
  operands.push_back(call.value(i).tensor);
  return true;
}

enum ConvParam { kX, kW, kB, kStride, kPadding, kDilation, kGroups };

/// `conv2d(x, w, b?, stride, padding, dilation, groups)`: NCHW input, OIHW
/// weight `[cout, cin/groups, kh, kw]`, bias `[cout]`.
std::optional<CValue> conv2d(BuiltinCall &call) {
  std::optional<TensorType> x = operand(call, kX, 4, "[n, c, h, w]");
  if (!x)
    return std::nullopt;
  std::optional<TensorType> w =
      operand(call, kW, 4, "[cout, cin / groups, kh, kw]", x->dtype);
  std::optional<int64_t> groups = w ? call.intArg(kGroups, 1) : std::nullopt;
  std::optional<std::vector<int64_t>> stride, padding, dilation;
  if (groups) {
    stride = call.intPair(kStride, {1, 1}, 1);
    padding = stride ? call.intPair(kPadding, {0, 0}, 0) : std::nullopt;
    dilation = padding ? call.intPair(kDilation, {1, 1}, 1) : std::nullopt;
  }
  if (!dilation)
    return std::nullopt;
  if (*groups < 1 || x->shape[1] % *groups != 0 || w->shape[0] % *groups != 0)
    return call.error(kGroups, "'conv2d' needs 'groups' to divide the " +
                                   std::to_string(x->shape[1]) + " input and " +
                                   std::to_string(w->shape[0]) +
                                   " output channels, got " +
                                   std::to_string(*groups));
  const int64_t cout = w->shape[0], cinPerGroup = x->shape[1] / *groups;
  if (w->shape[1] != cinPerGroup)
    return call.error(
        kW, "'conv2d' expects 'w' of shape [" + std::to_string(cout) + ", " +
                std::to_string(cinPerGroup) + ", kh, kw] for x " + x->str() +
                " with groups = " + std::to_string(*groups) + ", got " +
                w->str());
  std::vector<int> operands{call.value(kX).tensor, call.value(kW).tensor};
  if (!appendConvBias(call, kB, cout, x->dtype, w->str(), operands))
    return std::nullopt;
  std::vector<WideSize> shape{x->shape[0], cout};
  for (int d = 0; d < 2; ++d) {
    std::optional<WideSize> count = shape_rules::getWideWindowCount(
        x->shape[2 + d], w->shape[2 + d], (*stride)[d], (*padding)[d],
        (*dilation)[d]);
    if (!count)
      return call.error(kW, "'conv2d' output is empty: kernel " + w->str() +
                                " with dilation " + pairText(*dilation) +
                                " does not fit x " + x->str() + " padded by " +
                                pairText(*padding));
    shape.push_back(*count);
  }
  // im2col: one column of cin/groups * kh * kw taps per output pixel (a
  // result too large is emitChecked's error).
  if (isCountable(shape) &&
      !checkWorkingBuffer(call, "an im2col buffer",
                          {x->shape[1], w->shape[2], w->shape[3], x->shape[0],
                           shape[2], shape[3]}))
    return std::nullopt;
  AttrDict attrs{{"stride", Attr(*stride)},
                 {"padding", Attr(*padding)},
                 {"dilation", Attr(*dilation)},
                 {"groups", Attr(*groups)}};
  return emitChecked(call, "conv2d", operands, x->dtype, shape,
                     std::move(attrs));
}

enum ConvTransposeParam {
  kTX, kTW, kTB, kTStride, kTPadding, kTOutputPadding, kTGroups, kTDilation
};

/// `conv_transpose2d(x, w, b?, stride, padding, output_padding, groups,
/// dilation)` as torch's: NCHW input, weight `[cin, cout/groups, kh, kw]`,
/// bias `[cout]`; `Ho = (H - 1) * stride - 2 * padding + dilation * (kh -
/// 1) + output_padding + 1`, output_padding below the stride.
std::optional<CValue> convTranspose2d(BuiltinCall &call) {
  std::optional<TensorType> x = operand(call, kTX, 4, "[n, c, h, w]");
  if (!x)
    return std::nullopt;
  std::optional<TensorType> w =
      operand(call, kTW, 4, "[cin, cout / groups, kh, kw]", x->dtype);
  std::optional<int64_t> groups = w ? call.intArg(kTGroups, 1) : std::nullopt;
  std::optional<std::vector<int64_t>> stride, padding, outputPadding, dilation;
  if (groups) {
    stride = call.intPair(kTStride, {1, 1}, 1);
    padding = stride ? call.intPair(kTPadding, {0, 0}, 0) : std::nullopt;
    outputPadding =
        padding ? call.intPair(kTOutputPadding, {0, 0}, 0) : std::nullopt;
    dilation = outputPadding ? call.intPair(kTDilation, {1, 1}, 1)
                             : std::nullopt;
  }
  if (!dilation)
    return std::nullopt;
  const int64_t cin = x->shape[1];
  if (*groups < 1 || cin % *groups != 0)
    return call.error(kTGroups, "'conv_transpose2d' needs 'groups' to divide "
                                "the " + std::to_string(cin) +
                                    " input channels, got " +
                                    std::to_string(*groups));
  if (w->shape[0] != cin)
    return call.error(kTW, "'conv_transpose2d' expects 'w' of shape [" +
                               std::to_string(cin) +
                               ", cout / groups, kh, kw] for x " + x->str() +
                               ", got " + w->str());
  const int64_t cout = w->shape[1] * *groups;
  std::vector<int> operands{call.value(kTX).tensor, call.value(kTW).tensor};
  if (!appendConvBias(call, kTB, cout, x->dtype,
                      w->str() + " with groups = " + std::to_string(*groups),
                      operands))
    return std::nullopt;
  std::vector<WideSize> shape{x->shape[0], cout};
  for (int d = 0; d < 2; ++d) {
    int64_t s = (*stride)[d], p = (*padding)[d], op = (*outputPadding)[d],
            dl = (*dilation)[d];
    // torch also takes an output padding below the dilation; the rows it
    // adds past the stride's are zero (plus the bias). Not supported.
    if (op >= s)
      return call.error(kTOutputPadding,
                        "'conv_transpose2d' needs 'output_padding' below the "
                        "stride, got " +
                            pairText(*outputPadding) + " with stride " +
                            pairText(*stride));
    WideSize size = WideSize(x->shape[2 + d] - 1) * s - WideSize(2) * p +
                    WideSize(dl) * (w->shape[2 + d] - 1) + op + 1;
    if (size < 1)
      return call.error(kTPadding,
                        "'conv_transpose2d' output is empty: padding " +
                            pairText(*padding) + " removes all of it for x " +
                            x->str() + " and w " + w->str());
    shape.push_back(size);
  }
  AttrDict attrs{{"stride", Attr(*stride)},
                 {"padding", Attr(*padding)},
                 {"dilation", Attr(*dilation)},
                 {"groups", Attr(*groups)}};
  return emitChecked(call, "conv_transpose2d", operands, x->dtype, shape,
                     std::move(attrs));
}

/// `max_pool2d(x, k, stride = k, padding = 0)`, `avg_pool2d` likewise: NCHW,
/// floor mode; padding at most half the kernel, as PyTorch requires.
std::optional<CValue> pool2d(BuiltinCall &call) {
  std::optional<TensorType> x = operand(call, 0, 4, "[n, c, h, w]");
  std::optional<std::vector<int64_t>> kernel =
      x ? call.intPair(1, {1, 1}, 1) : std::nullopt;
  std::optional<std::vector<int64_t>> stride =
      kernel ? call.intPair(2, *kernel, 1) : std::nullopt;
  std::optional<std::vector<int64_t>> padding =
      stride ? call.intPair(3, {0, 0}, 0) : std::nullopt;
  if (!padding)
    return std::nullopt;
  std::vector<WideSize> shape{x->shape[0], x->shape[1]};
  for (int d = 0; d < 2; ++d) {
    if (2 * (*padding)[d] > (*kernel)[d])
      return call.error(
          3, call.quoted() + " needs 'padding' of at most half the kernel " +
                 pairText(*kernel) + ", got " + pairText(*padding));
    // With padding, the output can be one longer than the input.
    std::optional<WideSize> count = shape_rules::getWideWindowCount(
        x->shape[2 + d], (*kernel)[d], (*stride)[d], (*padding)[d]);
    if (!count)
      return call.error(1, call.quoted() + " kernel " + pairText(*kernel) +
                               " is larger than x " + x->str() + " padded by " +
                               pairText(*padding));
    shape.push_back(*count);
  }
  AttrDict attrs{{"kernel", Attr(*kernel)},
                 {"stride", Attr(*stride)},
                 {"padding", Attr(*padding)}};
  return emitChecked(call, call.name(), {call.value(0).tensor}, x->dtype, shape,
                     std::move(attrs));
}

/// `layer_norm(x, w, b, eps = 1e-5)` over the last axis; w and b `[D]`.
std::optional<CValue> layerNorm(BuiltinCall &call) {
  std::optional<TensorType> x = operand(call, 0, -1, "");
  if (!x)
    return std::nullopt;
  if (x->shape.empty())
    return call.error(
        0, "'layer_norm' needs 'x' of at least one dimension, got " + x->str());
  const int64_t d = x->shape.back();
  for (size_t i : {1, 2}) {
    std::optional<TensorType> t = operand(call, i, 1, "[D]", x->dtype);
    if (!t)
      return std::nullopt;
    if (t->shape[0] != d)
      return call.error(i, "'layer_norm' expects '" +
                               std::string(call.param(i)) + "' of shape [" +
                               std::to_string(d) + "] for x " + x->str() +
                               ", got " + t->str());
  }
  std::optional<double> eps = call.floatArg(3, 1e-5);
  if (!eps)
    return std::nullopt;
  if (!(*eps > 0))
    return call.error(3, "'layer_norm' needs a positive 'eps', got " +
                             call.describeArg(3));
  AttrDict attrs{{"eps", Attr(*eps)}};
  return CValue::ofTensor(call.builder.emit1(
      "layer_norm",
      {call.value(0).tensor, call.value(1).tensor, call.value(2).tensor}, *x,
      std::move(attrs), call.loc));
}

/// `rms_norm(x, w?, eps = ?)` over the last axis, w `[D]`; without eps, the
/// machine epsilon of x's float type (f32's for 16-bit x), as torch's
/// `eps=None`.
std::optional<CValue> rmsNorm(BuiltinCall &call) {
  std::optional<TensorType> x = operand(call, 0, -1, "");
  if (!x)
    return std::nullopt;
  if (x->shape.empty())
    return call.error(
        0, "'rms_norm' needs 'x' of at least one dimension, got " + x->str());
  std::vector<int> operands{call.value(0).tensor};
  if (call.has(1)) {
    std::optional<TensorType> w = operand(call, 1, 1, "[D]", x->dtype);
    if (!w)
      return std::nullopt;
    if (w->shape[0] != x->shape.back())
      return call.error(1, "'rms_norm' expects 'w' of shape [" +
                               std::to_string(x->shape.back()) + "] for x " +
                               x->str() + ", got " + w->str());
    operands.push_back(call.value(1).tensor);
  }
  const double machineEps = x->dtype == DType::F64
                                ? std::numeric_limits<double>::epsilon()
                                : std::numeric_limits<float>::epsilon();
  std::optional<double> eps = call.floatArg(2, machineEps);
  if (!eps)
    return std::nullopt;
  if (!(*eps >= 0) || std::isinf(*eps))
    return call.error(2, "'rms_norm' needs a finite 'eps' >= 0, got " +
                             call.describeArg(2));
  AttrDict attrs{{"eps", Attr(*eps)}};
  return CValue::ofTensor(call.builder.emit1("rms_norm", std::move(operands),
                                             *x, std::move(attrs), call.loc));
}

/// `batch_norm(x, running_mean, running_var, weight, bias,
/// num_batches_tracked = ?, momentum = 0.1, eps = 1e-5)` as
/// torch.nn.functional.batch_norm on `[n, c, ...]`, whose `training` is the
/// function's: batch statistics and an update of the running ones (which
/// must be buffers, `--mdl-decompose` checks) in the train step, the
/// running statistics in eval and infer.
std::optional<CValue> batchNorm(BuiltinCall &call) {
  std::optional<TensorType> x = operand(call, 0, -1, "");
  if (!x)
    return std::nullopt;
  if (x->shape.size() < 2)
    return call.error(0, "'batch_norm' needs 'x' of shape [n, c, ...], got " +
                             x->str());
  const int64_t channels = x->shape[1];
  std::vector<int> operands{call.value(0).tensor};
  // The op's operand order: weight, bias, running_mean, running_var.
  for (size_t i : {3, 4, 1, 2}) {
    std::optional<TensorType> t = operand(call, i, 1, "[C]", x->dtype);
    if (!t)
      return std::nullopt;
    if (t->shape[0] != channels)
      return call.error(i, "'batch_norm' expects '" +
                               std::string(call.param(i)) + "' of shape [" +
                               std::to_string(channels) +
                               "] (the channels of x " + x->str() + "), got " +
                               t->str());
    operands.push_back(call.value(i).tensor);
  }
  if (call.has(5)) {
    std::optional<int> tracked = call.tensor(5);
    if (!tracked)
      return std::nullopt;
    const TensorType &t = call.typeOf(*tracked);
    if (!t.shape.empty() || (t.dtype != DType::I64 && t.dtype != DType::I32))
      return call.error(5, "'batch_norm' expects 'num_batches_tracked' of "
                           "type i64[], got " + t.str());
    operands.push_back(*tracked);
  }
  std::optional<double> momentum = call.floatArg(6, 0.1);
  std::optional<double> eps = call.floatArg(7, 1e-5);
  if (!momentum || !eps)
    return std::nullopt;
  if (!(*momentum >= 0 && *momentum <= 1))
    return call.error(6, "'batch_norm' needs 'momentum' in [0, 1], got " +
                             call.describeArg(6));
  if (!(*eps > 0) || std::isinf(*eps))
    return call.error(7, "'batch_norm' needs a finite positive 'eps', got " +
                             call.describeArg(7));
  AttrDict attrs{{"momentum", Attr(*momentum)}, {"eps", Attr(*eps)}};
  return CValue::ofTensor(call.builder.emit1("batch_norm", std::move(operands),
                                             *x, std::move(attrs), call.loc));
}

/// The operands of a recurrent layer built-in, checked: `x` `[b, t, n]` in
/// f32 or f64, then `states` states `[b, h]`, `weight_ih` `[g h, n]`,
/// `weight_hh` `[g h, h]` (g = `gates`), and the optional `bias_ih`,
/// `bias_hh` `[g h]`, in that parameter order.
struct RecurrentArgs {
  TensorType x;
  int64_t hidden = 0;
  std::vector<int> states;
  int weightIh = -1, weightHh = -1;
  std::optional<int> biasIh, biasHh;
};

std::optional<RecurrentArgs> recurrentArgs(BuiltinCall &call, int64_t gates,
                                           size_t stateCount) {
  RecurrentArgs args;
  std::optional<TensorType> x = operand(call, 0, 3, "[b, t, n]");
  if (!x)
    return std::nullopt;
  if (x->dtype != DType::F32 && x->dtype != DType::F64)
    return call.error(0, call.quoted() + " runs in f32 or f64, got " +
                             x->str() + " (cast it first)");
  args.x = *x;
  const size_t weightIh = 1 + stateCount, weightHh = weightIh + 1;
  const std::string width = std::to_string(gates) + "h";
  const std::string recurrentLayout = "[" + width + ", h]";
  std::optional<TensorType> recurrent =
      operand(call, weightHh, 2, recurrentLayout.c_str(), x->dtype);
  if (!recurrent)
    return std::nullopt;
  args.hidden = recurrent->shape[1];
  if (recurrent->shape[0] != gates * args.hidden)
    return call.error(weightHh,
                      call.quoted() + " expects 'weight_hh' of shape " +
                          recurrentLayout + ", got " + recurrent->str());
  const int64_t batch = x->shape[0];
  auto expect = [&](size_t i, std::vector<int64_t> shape,
                    const std::string &layout) -> std::optional<int> {
    std::optional<TensorType> t = operand(
        call, i, static_cast<int>(shape.size()), layout.c_str(), x->dtype);
    if (!t)
      return std::nullopt;
    if (t->shape != shape)
      return call.error(i, call.quoted() + " expects '" +
                               std::string(call.param(i)) + "' of shape " +
                               formatShape(shape) + " " + layout + ", got " +
                               t->str());
    return call.value(i).tensor;
  };
  for (size_t i = 1; i <= stateCount; ++i) {
    std::optional<int> state = expect(i, {batch, args.hidden}, "[b, h]");
    if (!state)
      return std::nullopt;
    args.states.push_back(*state);
  }
  std::optional<int> input = expect(
      weightIh, {gates * args.hidden, x->shape[2]}, "[" + width + ", n]");
  if (!input)
    return std::nullopt;
  args.weightIh = *input;
  args.weightHh = call.value(weightHh).tensor;
  for (size_t i : {weightHh + 1, weightHh + 2}) {
    if (!call.has(i))
      continue;
    std::optional<int> bias =
        expect(i, {gates * args.hidden}, "[" + width + "]");
    if (!bias)
      return std::nullopt;
    (i == weightHh + 1 ? args.biasIh : args.biasHh) = *bias;
  }
  return args;
}

/// `x W_ih^T (+ biases)` for every step: `[b, t, g h]`, one matrix product.
int inputProjection(BuiltinCall &call, const RecurrentArgs &args, int64_t gates,
                    const std::vector<int> &biases) {
  GraphBuilder &builder = call.builder;
  const DType dtype = args.x.dtype;
  const int64_t width = gates * args.hidden;
  TensorType projected{dtype, {args.x.shape[0], args.x.shape[1], width}};
  int transposed = builder.emit1(
      "transpose", {args.weightIh}, TensorType{dtype, {args.x.shape[2], width}},
      {{"perm", Attr(std::vector<int64_t>{1, 0})}}, call.loc);
  int input = builder.emit1("matmul", {call.value(0).tensor, transposed},
                            projected, {}, call.loc);
  for (int bias : biases)
    input = builder.emit1("add", {input, bias}, projected, {}, call.loc);
  return input;
}

/// The results of a recurrent layer from its `[b, t + 1, h]` steps: every
/// step's output `[b, t, h]` (steps 1..t), or the last state `[b, h]`.
int recurrentOutput(BuiltinCall &call, const RecurrentArgs &args, int steps) {
  const int64_t batch = args.x.shape[0], time = args.x.shape[1];
  AttrDict attrs{
      {"starts", Attr(std::vector<int64_t>{0, 1, 0})},
      {"limits", Attr(std::vector<int64_t>{batch, time + 1, args.hidden})},
      {"strides", Attr(std::vector<int64_t>{1, 1, 1})}};
  return call.builder.emit1(
      "slice", {steps}, TensorType{args.x.dtype, {batch, time, args.hidden}},
      std::move(attrs), call.loc);
}
int recurrentLastState(BuiltinCall &call, const RecurrentArgs &args,
                       int steps) {
  const int64_t batch = args.x.shape[0], time = args.x.shape[1];
  AttrDict attrs{
      {"starts", Attr(std::vector<int64_t>{0, time, 0})},
      {"limits", Attr(std::vector<int64_t>{batch, time + 1, args.hidden})},
      {"strides", Attr(std::vector<int64_t>{1, 1, 1})}};
  int last = call.builder.emit1(
      "slice", {steps}, TensorType{args.x.dtype, {batch, 1, args.hidden}},
      std::move(attrs), call.loc);
  return call.builder.emit1("reshape", {last},
                            TensorType{args.x.dtype, {batch, args.hidden}}, {},
                            call.loc);
}

/// `lstm_layer(x, h0, c0, weight_ih, weight_hh, bias_ih = ?, bias_hh = ?)`:
/// one layer of torch.nn.LSTM (batch_first) over `x` `[b, t, n]` from the
/// state `h0`, `c0` (`[b, h]`), with torch's weights `[4h, n]`, `[4h, h]`
/// and biases `[4h]` (gates i, f, g, o). Returns `[output, h_n, c_n]`:
/// every step's hidden state `[b, t, h]` and the last state. The input
/// projection of all steps (both biases included) is one matrix product;
/// the recurrence is mdl.lstm_scan, a loop over time.
std::optional<CValue> lstmLayer(BuiltinCall &call) {
  std::optional<RecurrentArgs> args = recurrentArgs(call, 4, 2);
  if (!args)
    return std::nullopt;
  std::vector<int> biases;
  for (const std::optional<int> &bias : {args->biasIh, args->biasHh})
    if (bias)
      biases.push_back(*bias);
  int input = inputProjection(call, *args, 4, biases);
  const TensorType &x = args->x;
  TensorType steps{x.dtype, {x.shape[0], x.shape[1] + 1, args->hidden}};
  std::vector<int> scan = call.builder.emit(
      "lstm_scan", {input, args->weightHh, args->states[0], args->states[1]},
      {steps, steps, call.typeOf(input)}, {}, call.loc);
  return CValue::ofList(
      {CValue::ofTensor(recurrentOutput(call, *args, scan[0])),
       CValue::ofTensor(recurrentLastState(call, *args, scan[0])),
       CValue::ofTensor(recurrentLastState(call, *args, scan[1]))});
}

/// `gru_layer(x, h0, weight_ih, weight_hh, bias_ih = ?, bias_hh = ?)`: one
/// layer of torch.nn.GRU (batch_first), weights `[3h, n]`, `[3h, h]`,
/// biases `[3h]` (gates r, z, n). Returns `[output, h_n]`. `bias_ih` joins
/// the input projection; `bias_hh` stays in the loop (n reads r * (W_hn h
/// + b_hn)), zeros when absent; the recurrence is mdl.gru_scan.
std::optional<CValue> gruLayer(BuiltinCall &call) {
  std::optional<RecurrentArgs> args = recurrentArgs(call, 3, 1);
  if (!args)
    return std::nullopt;
  std::vector<int> biases;
  if (args->biasIh)
    biases.push_back(*args->biasIh);
  int input = inputProjection(call, *args, 3, biases);
  const TensorType &x = args->x;
  int biasHh =
      args->biasHh
          ? *args->biasHh
          : call.builder.constant(0.0, TensorType{x.dtype, {3 * args->hidden}},
                                  call.loc);
  TensorType steps{x.dtype, {x.shape[0], x.shape[1] + 1, args->hidden}};
  std::vector<int> scan = call.builder.emit(
      "gru_scan", {input, args->weightHh, biasHh, args->states[0]},
      {steps, call.typeOf(input),
       TensorType{x.dtype, {x.shape[0], x.shape[1], args->hidden}}},
      {}, call.loc);
  return CValue::ofList(
      {CValue::ofTensor(recurrentOutput(call, *args, scan[0])),
       CValue::ofTensor(recurrentLastState(call, *args, scan[0]))});
}

/// `update(buffer, value)`: the module buffer takes `value` after the
/// train step (as `buffer.copy_(value)` under `if self.training`); eval and
/// infer leave it as it is. The first argument must be a buffer as read
/// (its name), the value of its exact type; the value is stored as it is,
/// with no gradient. Returns nothing.
std::optional<CValue> updateBuffer(BuiltinCall &call) {
  std::optional<int> buffer = call.tensor(0);
  std::optional<int> value = buffer ? call.tensor(1) : std::nullopt;
  if (!value)
    return std::nullopt;
  // In an entry a buffer is read by a load; in a block it is a parameter
  // slot, created here as a buffer or tied (`&path`, checked once the
  // program is whole: --mdl-decompose).
  const Function &fn = call.builder.function();
  bool isBuffer = false;
  for (const Op &op : fn.ops)
    if (op.name == "load" && op.results.size() == 1 && op.results[0] == *buffer)
      isBuffer = true;
  for (const ParamSlot &slot : fn.params)
    if (slot.value == *buffer && (slot.buffer || slot.tied))
      isBuffer = true;
  if (!isBuffer)
    return call.error(0, "'update' needs a buffer (a name bound by `buffer "
                         "NAME: TYPE = INIT`) as its first argument, got " +
                             call.describeArg(0));
  for (const Op &op : fn.ops)
    if (op.name == "update_buffer" && op.operands[0] == *buffer)
      return call.error(0, "'update' updates this buffer a second time in one "
                           "step; a buffer takes one value per step");
  const TensorType &type = call.typeOf(*buffer);
  if (call.typeOf(*value) != type)
    return call.error(1, "'update' needs a value of the buffer's type " +
                             type.str() + ", got " + call.typeOf(*value).str());
  call.builder.emit("update_buffer", {*buffer, *value}, {}, {}, call.loc);
  return CValue();
}

/// `embedding(ids, table)`: integer ids, table `[V, D]` -> ids.shape + [D].
std::optional<CValue> embedding(BuiltinCall &call) {
  std::optional<int> ids = call.tensor(0);
  if (!ids)
    return std::nullopt;
  const TensorType idsType = call.typeOf(*ids);
  if (!isInteger(idsType.dtype))
    return call.error(0, "'embedding' needs integer 'ids', got " +
                             idsType.str() + "; convert with i32(...)");
  std::optional<TensorType> table = operand(call, 1, 2, "[V, D]");
  if (!table)
    return std::nullopt;
  std::vector<int64_t> shape = idsType.shape;
  shape.push_back(table->shape[1]);
  return emitChecked(call, "embedding", {*ids, call.value(1).tensor},
                     table->dtype, shape);
}

/// `dropout(x, p)`: identity outside training; 0 <= p < 1.
std::optional<CValue> dropout(BuiltinCall &call) {
  std::optional<TensorType> x = operand(call, 0, -1, "");
  std::optional<double> p = x ? call.floatArg(1, 0) : std::nullopt;
  if (!p)
    return std::nullopt;
  if (!(*p >= 0 && *p < 1))
    return call.error(1, "'dropout' needs 'p' in [0, 1), got " +
                             call.describeArg(1));
  AttrDict attrs{{"p", Attr(*p)}};
  return CValue::ofTensor(call.builder.emit1("dropout", {call.value(0).tensor},
                                             *x, std::move(attrs), call.loc));
}

enum AttentionParam {
  kQ, kK, kV, kCausal, kScale, kMask, kKeyPadding, kAttentionDropout
};

/// The boolean mask of attention (true = attend) from its `mask` and
/// `key_padding_mask` arguments (true = padding, ignored, as
/// nn.MultiheadAttention's): `mask and not key_padding_mask[:, None, None,
/// :]`; -1 when neither is given, nullopt after an error. `scores` is
/// `[b, h, t, s]`.
std::optional<int> attentionMask(BuiltinCall &call,
                                 const std::vector<int64_t> &scores,
                                 bool causal) {
  int mask = -1;
  std::vector<int64_t> maskShape;
  if (call.has(kMask)) {
    std::optional<int> m = call.tensor(kMask);
    if (!m)
      return std::nullopt;
    const TensorType type = call.typeOf(*m);
    std::optional<std::vector<int64_t>> shape =
        broadcastShapes(type.shape, scores);
    if (type.dtype != DType::Bool || !shape || *shape != scores)
      return call.error(kMask, "'attention' needs a bool 'mask' (true = "
                               "attend) that broadcasts to the scores " +
                                   formatShape(scores) + ", got " +
                                   type.str());
    if (causal)
      return call.error(kMask, "'attention' takes 'mask' or 'causal = "
                               "true', not both (as "
                               "scaled_dot_product_attention); put the "
                               "causal pattern into the mask");
    mask = *m;
    maskShape = type.shape;
  }
  if (!call.has(kKeyPadding))
    return mask;
  std::optional<int> pad = call.tensor(kKeyPadding);
  if (!pad)
    return std::nullopt;
  const TensorType padType = call.typeOf(*pad);
  if (padType.dtype != DType::Bool ||
      padType.shape != std::vector<int64_t>{scores[0], scores[3]})
    return call.error(kKeyPadding,
                      "'attention' needs a bool 'key_padding_mask' of shape "
                      "[b, s] = " +
                          formatShape({scores[0], scores[3]}) +
                          " (true = padding, ignored), got " + padType.str());
  const std::vector<int64_t> column{scores[0], 1, 1, scores[3]};
  int keys = call.builder.emit1("reshape", {*pad},
                                TensorType{DType::Bool, column}, {}, call.loc);
  keys = call.builder.emit1("not", {keys}, TensorType{DType::Bool, column}, {},
                            call.loc);
  if (mask < 0)
    return keys;
  return call.builder.emit1(
      "and", {mask, keys},
      TensorType{DType::Bool, *broadcastShapes(maskShape, column)}, {},
      call.loc);
}

/// `attention(q, k, v, causal = false, scale = 1/sqrt(d), mask = none,
/// key_padding_mask = none, dropout = 0.0)` as scaled_dot_product_attention:
/// q `[b, h, t, d]`, k `[b, h, s, d]`, v `[b, h, s, dv]` -> `[b, h, t, dv]`.
/// The `scale` attr is always set.
std::optional<CValue> attention(BuiltinCall &call) {
  std::optional<TensorType> q = operand(call, 0, 4, "[b, h, t, d]");
  std::optional<TensorType> k =
      q ? operand(call, 1, 4, "[b, h, s, d]", q->dtype) : std::nullopt;
  std::optional<TensorType> v =
      k ? operand(call, 2, 4, "[b, h, s, dv]", q->dtype) : std::nullopt;
  if (!v)
    return std::nullopt;
  const std::vector<int64_t> &qs = q->shape, &ks = k->shape, &vs = v->shape;
  if (ks[0] != qs[0] || ks[1] != qs[1] || ks[3] != qs[3])
    return call.error(
        1, "'attention' expects 'k' of shape [" + std::to_string(qs[0]) + ", " +
               std::to_string(qs[1]) + ", s, " + std::to_string(qs[3]) +
               "] for q " + q->str() + ", got " + k->str());
  if (vs[0] != qs[0] || vs[1] != qs[1] || vs[2] != ks[2])
    return call.error(
        2, "'attention' expects 'v' of shape [" + std::to_string(qs[0]) + ", " +
               std::to_string(qs[1]) + ", " + std::to_string(ks[2]) +
               ", dv] for k " + k->str() + ", got " + v->str());
  std::optional<bool> causal = call.boolArg(3, false);
  std::optional<double> scale =
      causal ? call.floatArg(4, 1 / std::sqrt(static_cast<double>(qs[3])))
             : std::nullopt;
  if (!scale)
    return std::nullopt;
  if (!std::isfinite(*scale))
    return call.error(4, "'attention' needs a finite 'scale', got " +
                             call.describeArg(4));
  if (!checkWorkingBuffer(call, "scores [b, h, t, s]",
                          {qs[0], qs[1], qs[2], ks[2]}))
    return std::nullopt;
  std::optional<double> dropout = call.floatArg(kAttentionDropout, 0.0);
  if (!dropout)
    return std::nullopt;
  if (!(*dropout >= 0 && *dropout < 1))
    return call.error(kAttentionDropout,
                      "'attention' needs 'dropout' in [0, 1), got " +
                          call.describeArg(kAttentionDropout));
  std::optional<int> mask =
      attentionMask(call, {qs[0], qs[1], qs[2], ks[2]}, *causal);
  if (!mask)
    return std::nullopt;
  std::vector<int> operands{call.value(0).tensor, call.value(1).tensor,
                            call.value(2).tensor};
  if (*mask >= 0)
    operands.push_back(*mask);
  AttrDict attrs{{"causal", Attr(*causal)},
                 {"scale", Attr(*scale)},
                 {"dropout", Attr(*dropout)}};
  return emitChecked(call, "attention", operands, q->dtype,
                     std::vector<int64_t>{qs[0], qs[1], qs[2], vs[3]},
                     std::move(attrs));
}
} // namespace

const std::vector<BuiltinDef> &nnBuiltins() {
  static const std::vector<BuiltinDef> defs = {
      {"matmul", {{"a", nullptr}, {"b", nullptr}}, matmul},
      {"conv2d",
       {{"x", nullptr},
        {"w", nullptr},
        {"b", "?"},
        {"stride", "1"},
        {"padding", "0"},
        {"dilation", "1"},
        {"groups", "1"}},
       conv2d},
      {"conv_transpose2d",
       {{"x", nullptr},
        {"w", nullptr},
        {"b", "?"},
        {"stride", "1"},
        {"padding", "0"},
        {"output_padding", "0"},
        {"groups", "1"},
        {"dilation", "1"}},
       convTranspose2d},
      {"max_pool2d",
       {{"x", nullptr}, {"k", nullptr}, {"stride", "k"}, {"padding", "0"}},
       pool2d},
      {"avg_pool2d",
       {{"x", nullptr}, {"k", nullptr}, {"stride", "k"}, {"padding", "0"}},
       pool2d},
      {"layer_norm",
       {{"x", nullptr}, {"w", nullptr}, {"b", nullptr}, {"eps", "1e-5"}},
       layerNorm},
      {"rms_norm",
       {{"x", nullptr}, {"w", "?"}, {"eps", "eps of x's dtype"}},
       rmsNorm},
      {"gru_layer",
       {{"x", nullptr},
        {"h0", nullptr},
        {"weight_ih", nullptr},
        {"weight_hh", nullptr},
        {"bias_ih", "?"},
        {"bias_hh", "?"}},
       gruLayer},
      {"lstm_layer",
       {{"x", nullptr},
        {"h0", nullptr},
        {"c0", nullptr},
        {"weight_ih", nullptr},
        {"weight_hh", nullptr},
        {"bias_ih", "?"},
        {"bias_hh", "?"}},
       lstmLayer},
      {"update", {{"buffer", nullptr}, {"value", nullptr}}, updateBuffer},
      {"batch_norm",
       {{"x", nullptr},
        {"running_mean", nullptr},
        {"running_var", nullptr},
        {"weight", nullptr},
        {"bias", nullptr},
        {"num_batches_tracked", "?"},
        {"momentum", "0.1"},
        {"eps", "1e-5"}},
       batchNorm},
      {"embedding", {{"ids", nullptr}, {"table", nullptr}}, embedding},
      {"dropout", {{"x", nullptr}, {"p", nullptr}}, dropout},
      {"attention",
       {{"q", nullptr},
        {"k", nullptr},
        {"v", nullptr},
        {"causal", "false"},
        {"scale", "1/sqrt(d)"},
        {"mask", "?"},
        {"key_padding_mask", "?"},
        {"dropout", "0.0"}},
       attention},
  };
  return defs;
}

} // namespace modelc::builtins
