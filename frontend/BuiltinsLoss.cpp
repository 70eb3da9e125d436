// Losses and metrics: `cross_entropy` (class axis last), `mse_loss` (mean),
// and `accuracy`, which only metrics may use.
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
    call.error(0, call.quoted() + " needs 'logits' with a class axis, got " +
                      lt.str());
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
                      formatShape(expected) + " for logits " + lt.str() +
                      ", got " + yt.str());
    return false;
  }
  return true;
}

/// `cross_entropy(logits, labels, ignore_index = -100)`: f32 scalar, the
/// mean over positions whose label is not ignore_index.
std::optional<CValue> crossEntropy(BuiltinCall &call) {
  if (!checkClassification(call))
    return std::nullopt;
  std::optional<int64_t> ignoreIndex = call.intArg(2, -100);
  if (!ignoreIndex)
    return std::nullopt;
  AttrDict attrs{{"ignore_index", Attr(*ignoreIndex)}};
  return CValue::ofTensor(call.builder.emit1(
      "cross_entropy", {call.value(0).tensor, call.value(1).tensor},
      TensorType{DType::F32, {}}, std::move(attrs), call.loc));
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
       {{"logits", nullptr}, {"labels", nullptr}, {"ignore_index", "-100"}},
       crossEntropy},
      {"mse_loss", {{"a", nullptr}, {"b", nullptr}}, mseLoss},
      {"accuracy", {{"logits", nullptr}, {"labels", nullptr}}, accuracy},
  };
  return defs;
}

} // namespace modelc::builtins
