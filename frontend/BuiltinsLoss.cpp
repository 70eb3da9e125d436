// Losses and metrics: `cross_entropy` and `nll_loss` (class axis last),
// `mse_loss` and `binary_cross_entropy_with_logits` (means), and `accuracy`,
// which only metrics may use.
#include "frontend/BuiltinsArgs.h"

namespace modelc::builtins {

namespace {
/// Logits `[..., C]` (float) and integer labels of the logits' shape less
/// the last axis; false after reporting.
bool checkClassification(BuiltinCall &call) {
  std::optional<int> logits = call.floatTensor(0);
  std::optional<int> labels = logits ? call.tensor(1) : std::nullopt;
  if (!labels)
    return false;
  const TensorType &lt = call.typeOf(*logits);
  const TensorType &yt = call.typeOf(*labels);
  if (lt.shape.empty()) {
    call.error(0, call.quoted() + " needs '" + std::string(call.param(0)) +
                      "' with a class axis, got " + lt.str());
    return false;
  }
  if (!isInteger(yt.dtype)) {
    call.error(1, call.quoted() +
                      " needs integer class indices for 'labels', got " +
                      yt.str() + "; convert with i32(...)");
    return false;
  }
  std::vector<int64_t> expected(lt.shape.begin(), lt.shape.end() - 1);
  if (yt.shape != expected) {
    call.error(1, call.quoted() + " expects 'labels' of shape " +
                      formatShape(expected) + " for " +
                      std::string(call.param(0)) + " " + lt.str() + ", got " +
                      yt.str());
    return false;
  }
  return true;
}

/// The f32 scalar of the losses over classes (f64 for f64 inputs).
TensorType classLossType(const TensorType &input) {
  return TensorType{input.dtype == DType::F64 ? DType::F64 : DType::F32, {}};
}

/// `nll_loss` of `logProbs` (a value of the call's) with the call's labels
/// (argument 1), as `mdl.nll_loss`.
std::optional<CValue> emitNllLoss(BuiltinCall &call, int logProbs,
                                  int64_t ignoreIndex, double smoothing) {
  AttrDict attrs{{"ignore_index", Attr(ignoreIndex)},
                 {"label_smoothing", Attr(smoothing)}};
  return CValue::ofTensor(call.builder.emit1(
      "nll_loss", {logProbs, call.value(1).tensor},
      classLossType(call.typeOf(logProbs)), std::move(attrs), call.loc));
}

/// `cross_entropy(logits, labels, ignore_index = -100, label_smoothing =
/// 0)`: f32 scalar, the mean over positions whose label is not
/// ignore_index. With label smoothing, torch's composite: log_softmax, then
/// nll_loss mixed with the mean of -sum(log_softmax) / C.
std::optional<CValue> crossEntropy(BuiltinCall &call) {
  if (!checkClassification(call))
    return std::nullopt;
  std::optional<int64_t> ignoreIndex = call.intArg(2, -100);
  std::optional<double> smoothing =
      ignoreIndex ? call.floatArg(3, 0.0) : std::nullopt;
  if (!smoothing)
    return std::nullopt;
  if (!(*smoothing >= 0 && *smoothing <= 1))
    return call.error(3, "'cross_entropy' needs 'label_smoothing' in [0, 1], "
                         "got " +
                             call.describeArg(3));
  if (*smoothing > 0) {
    const TensorType logits = call.typeOf(call.value(0).tensor);
    int logProbs = call.builder.emit1(
        "log_softmax", {call.value(0).tensor}, logits,
        {{"axis", Attr(int64_t(logits.shape.size()) - 1)}}, call.loc);
    return emitNllLoss(call, logProbs, *ignoreIndex, *smoothing);
  }
  AttrDict attrs{{"ignore_index", Attr(*ignoreIndex)}};
  return CValue::ofTensor(call.builder.emit1(
      "cross_entropy", {call.value(0).tensor, call.value(1).tensor},
      TensorType{DType::F32, {}}, std::move(attrs), call.loc));
}

/// `nll_loss(log_probs, labels, ignore_index = -100)`: as cross_entropy on
/// log-probabilities (class axis last); f32 scalar.
std::optional<CValue> nllLoss(BuiltinCall &call) {
  if (!checkClassification(call))
    return std::nullopt;
  std::optional<int64_t> ignoreIndex = call.intArg(2, -100);
  if (!ignoreIndex)
    return std::nullopt;
  return emitNllLoss(call, call.value(0).tensor, *ignoreIndex, 0.0);
}

/// `binary_cross_entropy_with_logits(x, target, pos_weight = none)`: x and
/// target of one float type and shape, pos_weight `[C]` (x's last axis); a
/// scalar of x's type, the mean over all elements.
std::optional<CValue> bceWithLogits(BuiltinCall &call) {
  std::optional<int> x = call.floatTensor(0);
  std::optional<int> target = x ? call.floatTensor(1) : std::nullopt;
  if (!target)
    return std::nullopt;
  const TensorType xt = call.typeOf(*x);
  const TensorType tt = call.typeOf(*target);
  if (xt != tt)
    return call.error(1, call.quoted() + " needs 'target' of the type of x (" +
                             xt.str() + "), got " + tt.str());
  std::vector<int> operands{*x, *target};
  if (call.has(2)) {
    std::optional<int> weight = call.floatTensor(2);
    if (!weight)
      return std::nullopt;
    const TensorType wt = call.typeOf(*weight);
    if (xt.shape.empty() || wt.dtype != xt.dtype ||
        wt.shape != std::vector<int64_t>{xt.shape.back()})
      return call.error(
          2, call.quoted() + " needs 'pos_weight' of shape [C] for x " +
                 xt.str() + " (C its last axis, the type of x), got " +
                 wt.str());
    operands.push_back(*weight);
  }
  return CValue::ofTensor(call.builder.emit1("bce_with_logits", operands,
                                             TensorType{xt.dtype, {}}, {},
                                             call.loc));
}

/// `mse_loss(a, b)`: float tensors of one type and shape; a scalar of it.
std::optional<CValue> mseLoss(BuiltinCall &call) {
  std::optional<int> a = call.floatTensor(0);
  std::optional<int> b = a ? call.floatTensor(1) : std::nullopt;
  if (!b)
    return std::nullopt;
  const TensorType &at = call.typeOf(*a);
  const TensorType &bt = call.typeOf(*b);
  if (at != bt)
    return call.error(1, "'mse_loss' needs 'b' of the type of a (" + at.str() +
                             "), got " + bt.str());
  return CValue::ofTensor(call.builder.emit1(
      "mse_loss", {*a, *b}, TensorType{at.dtype, {}}, {}, call.loc));
}

/// `accuracy(logits, labels)`: the fraction of argmax(logits) == labels as
/// an f32 scalar; not differentiable, so only in metrics.
std::optional<CValue> accuracy(BuiltinCall &call) {
  if (!call.ctx.inMetrics)
    return call.error(call.loc,
                      "'accuracy' is a metric: use it in `metrics { }`");
  if (!checkClassification(call))
    return std::nullopt;
  return CValue::ofTensor(call.builder.emit1(
      "accuracy", {call.value(0).tensor, call.value(1).tensor},
      TensorType{DType::F32, {}}, {}, call.loc));
}
} // namespace

const std::vector<BuiltinDef> &lossBuiltins() {
  static const std::vector<BuiltinDef> defs = {
      {"cross_entropy",
       {{"logits", nullptr},
        {"labels", nullptr},
        {"ignore_index", "-100"},
        {"label_smoothing", "0.0"}},
       crossEntropy},
      {"nll_loss",
       {{"log_probs", nullptr}, {"labels", nullptr}, {"ignore_index", "-100"}},
       nllLoss},
      {"binary_cross_entropy_with_logits",
       {{"x", nullptr}, {"target", nullptr}, {"pos_weight", "?"}},
       bceWithLogits},
      {"mse_loss", {{"a", nullptr}, {"b", nullptr}}, mseLoss},
      {"accuracy", {{"logits", nullptr}, {"labels", nullptr}}, accuracy},
  };
  return defs;
}

} // namespace modelc::builtins
