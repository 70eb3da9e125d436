// Vector-Jacobian products of the reductions (sum, mean, max, min) and of
// softmax and log_softmax.
//
// Formulas are PyTorch's (tools/autograd/derivatives.yaml and
// FunctionsManual.cpp); `g` is the result's adjoint.
#include "dialects/mdl/VJPBuilder.h"

using namespace mlir;
using namespace mlir::mdl;

// sum: sum_backward: grad with the reduced axes restored, expanded to the
// input's shape.
SmallVector<Value> SumOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Type inputType = getInput().getType();
  return {b.broadcastTo(
      b.restoreReducedAxes(resultAdjoints[0], inputType, getAxes()),
      inputType)};
}

// mean: mean_backward: sum_backward(grad) / n, n the number of elements
// reduced into each result. Dividing before expanding gives the same values
// with fewer operations.
SmallVector<Value> MeanOp::buildVJP(OpBuilder &builder,
                                    ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Type inputType = getInput().getType();
  double count = getReducedCount(inputType, getAxes());
  Value scaled = b.div(g, b.scalar(count, g));
  return {b.broadcastTo(b.restoreReducedAxes(scaled, inputType, getAxes()),
                        inputType)};
}

// max and min over axes are torch.amax / torch.amin, whose backward
// (scale_grad_by_count) spreads the gradient evenly over the elements equal
// to the extremum:
//   mask = (self == restore(result))
//   grad_in = restore(grad) / sum(mask) * mask
// with restore() putting the reduced axes back as size 1.
static Value buildAmaxVJP(Operation *op, OpBuilder &builder, Value g,
                          ArrayRef<int64_t> axes) {
  VJPBuilder b(builder, op->getLoc());
  Value input = op->getOperand(0);
  Type inputType = input.getType();
  Value extremum = b.restoreReducedAxes(op->getResult(0), inputType, axes);
  Value mask = b.cast(b.compare(CmpPredicate::eq, input, extremum),
                      cast<RankedTensorType>(inputType).getElementType());
  Value count = b.sum(mask, axes, /*keepdim=*/true);
  Value share = b.div(b.restoreReducedAxes(g, inputType, axes), count);
  return b.mul(share, mask);
}

SmallVector<Value> MaxOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  return {buildAmaxVJP(*this, builder, resultAdjoints[0], getAxes())};
}

SmallVector<Value> MinOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  return {buildAmaxVJP(*this, builder, resultAdjoints[0], getAxes())};
}

// softmax: _softmax_backward_data(grad, result, axis):
//   result * (grad - sum(grad * result, axis, keepdim)).
SmallVector<Value> SoftmaxOp::buildVJP(OpBuilder &builder,
                                       ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value y = getResult();
  Value dot = b.sum(b.mul(g, y), {getAxis()}, /*keepdim=*/true);
  return {b.mul(y, b.sub(g, dot))};
}

// log_softmax: _log_softmax_backward_data(grad, result, axis):
//   grad - exp(result) * sum(grad, axis, keepdim).
SmallVector<Value> LogSoftmaxOp::buildVJP(OpBuilder &builder,
                                          ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value total = b.sum(g, {getAxis()}, /*keepdim=*/true);
  return {b.sub(g, b.mul(b.exp(getResult()), total))};
}
