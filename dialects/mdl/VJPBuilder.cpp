// Helpers shared by the vector-Jacobian products of the mdl ops: op builders
// with inferred result types, and undoing broadcasts and reductions.
#include "dialects/mdl/VJPBuilder.h"

#include "mlir/IR/TypeUtilities.h"

#include <numeric>

using namespace mlir;
using namespace mlir::mdl;

bool mlir::mdl::isDifferentiableType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

SmallVector<Value> mlir::mdl::noGradients(Operation *op) {
  return SmallVector<Value>(op->getNumOperands(), Value());
}

int64_t mlir::mdl::getReducedCount(Type type, ArrayRef<int64_t> axes) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
  return std::accumulate(
      axes.begin(), axes.end(), int64_t(1),
      [&](int64_t count, int64_t axis) { return count * shape[axis]; });
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

Value VJPBuilder::add(Value lhs, Value rhs) {
  return builder.create<AddOp>(loc, lhs, rhs);
}
Value VJPBuilder::sub(Value lhs, Value rhs) {
  return builder.create<SubOp>(loc, lhs, rhs);
}
Value VJPBuilder::mul(Value lhs, Value rhs) {
  return builder.create<MulOp>(loc, lhs, rhs);
}
Value VJPBuilder::div(Value lhs, Value rhs) {
  return builder.create<DivOp>(loc, lhs, rhs);
}
Value VJPBuilder::pow(Value base, Value exponent) {
  return builder.create<PowOp>(loc, base, exponent);
}
Value VJPBuilder::neg(Value input) { return builder.create<NegOp>(loc, input); }
Value VJPBuilder::exp(Value input) { return builder.create<ExpOp>(loc, input); }
Value VJPBuilder::log(Value input) { return builder.create<LogOp>(loc, input); }
Value VJPBuilder::rsqrt(Value input) {
  return builder.create<RsqrtOp>(loc, input);
}
Value VJPBuilder::sigmoid(Value input) {
  return builder.create<SigmoidOp>(loc, input);
}

Value VJPBuilder::compare(CmpPredicate predicate, Value lhs, Value rhs) {
  return builder.create<CompareOp>(loc, predicate, lhs, rhs);
}

Value VJPBuilder::logicalAnd(Value lhs, Value rhs) {
  return builder.create<AndOp>(loc, lhs, rhs);
}

Value VJPBuilder::where(Value condition, Value onTrue, Value onFalse) {
  return builder.create<WhereOp>(loc, condition, onTrue, onFalse);
}

Value VJPBuilder::cast(Value input, Type elementType) {
  return builder.create<CastOp>(loc, input, elementType);
}

Value VJPBuilder::scalar(double value, Value like) {
  auto type = RankedTensorType::get({}, getElementTypeOrSelf(like.getType()));
  return builder.create<ConstantOp>(loc, type, value);
}

Value VJPBuilder::zeros(Type type) {
  return builder.create<ConstantOp>(loc, ::llvm::cast<RankedTensorType>(type),
                                    0.0);
}

Value VJPBuilder::sum(Value input, ArrayRef<int64_t> axes, bool keepdim) {
  return builder.create<SumOp>(loc, input, axes, keepdim);
}

Value VJPBuilder::mean(Value input, ArrayRef<int64_t> axes, bool keepdim) {
  return builder.create<MeanOp>(loc, input, axes, keepdim);
}

Value VJPBuilder::reshape(Value input, ArrayRef<int64_t> shape) {
  if (shapeOf(input) == shape)
    return input;
  return builder.create<ReshapeOp>(loc, input, shape);
}

Value VJPBuilder::transpose(Value input, ArrayRef<int64_t> perm) {
  return builder.create<TransposeOp>(loc, input, perm);
}

Value VJPBuilder::transposeLastTwo(Value input) {
  int64_t rank = shapeOf(input).size();
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 2], perm[rank - 1]);
  return transpose(input, perm);
}

Value VJPBuilder::broadcastTo(Value input, Type type) {
  if (input.getType() == type)
    return input;
  return builder.create<BroadcastToOp>(loc, type, input);
}

Value VJPBuilder::slice(Value input, ArrayRef<int64_t> starts,
                        ArrayRef<int64_t> limits, ArrayRef<int64_t> strides) {
  return builder.create<SliceOp>(loc, input, starts, limits, strides);
}

Value VJPBuilder::matmul(Value lhs, Value rhs) {
  return builder.create<MatmulOp>(loc, lhs, rhs);
}

Value VJPBuilder::sumToType(Value grad, Type type) {
  if (grad.getType() == type)
    return grad;
  ArrayRef<int64_t> from = shapeOf(grad);
  ArrayRef<int64_t> to = ::llvm::cast<RankedTensorType>(type).getShape();
  // NumPy aligns shapes from the right: the leading axes were added, and an
  // axis of size 1 in `to` may have been stretched.
  int64_t added = from.size() - to.size();
  SmallVector<int64_t> axes;
  for (int64_t axis = 0, rank = from.size(); axis < rank; ++axis)
    if (axis < added || (to[axis - added] == 1 && from[axis] != 1))
      axes.push_back(axis);
  Value summed = axes.empty() ? grad : sum(grad, axes);
  return reshape(summed, to);
}

Value VJPBuilder::restoreReducedAxes(Value grad, Type inputType,
                                     ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape(
      ::llvm::cast<RankedTensorType>(inputType).getShape());
  for (int64_t axis : axes)
    shape[axis] = 1;
  return reshape(grad, shape);
}
