// Vector-Jacobian products of the shape ops: reshape, transpose, concat,
// split, broadcast_to and slice. Each moves the adjoint's elements back to
// where the forward op took them from; `g` is the result's adjoint.
#include "dialects/mdl/VJPBuilder.h"

using namespace mlir;
using namespace mlir::mdl;

// reshape: the adjoint reshaped back.
SmallVector<Value> ReshapeOp::buildVJP(OpBuilder &builder,
                                       ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  return {VJPBuilder(builder, getLoc())
              .reshape(resultAdjoints[0], getInput().getType().getShape())};
}

// transpose: the adjoint transposed by the inverse permutation (result
// axis i is input axis perm[i], so input axis perm[i] is adjoint axis i).
SmallVector<Value> TransposeOp::buildVJP(OpBuilder &builder,
                                         ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [resultAxis, inputAxis] : llvm::enumerate(perm))
    inverse[inputAxis] = resultAxis;
  return {VJPBuilder(builder, getLoc()).transpose(resultAdjoints[0], inverse)};
}

// concat: each operand gets its own slab of the adjoint along the axis.
SmallVector<Value> ConcatOp::buildVJP(OpBuilder &builder,
                                      ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  if (getInputs().size() == 1)
    return {g};
  int64_t axis = getAxis();
  ArrayRef<int64_t> shape = getType().getShape();
  SmallVector<int64_t> starts(shape.size(), 0), limits(shape);
  SmallVector<int64_t> strides(shape.size(), 1);
  SmallVector<Value> adjoints;
  for (Value input : getInputs()) {
    limits[axis] =
        starts[axis] + cast<RankedTensorType>(input.getType()).getDimSize(axis);
    adjoints.push_back(b.slice(g, starts, limits, strides));
    starts[axis] = limits[axis];
  }
  return adjoints;
}

// split: the parts' adjoints concatenated back; a part whose adjoint is
// null (it does not reach the loss) contributes zeros.
SmallVector<Value> SplitOp::buildVJP(OpBuilder &builder,
                                     ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getInput().getType()) ||
      llvm::all_of(resultAdjoints, [](Value adjoint) { return !adjoint; }))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  SmallVector<Value> parts;
  for (auto [result, adjoint] : llvm::zip(getResults(), resultAdjoints))
    parts.push_back(adjoint ? adjoint : b.zeros(result.getType()));
  if (parts.size() == 1)
    return {parts.front()};
  return {builder.create<ConcatOp>(getLoc(), parts, getAxis())};
}

// broadcast_to: the adjoint summed over the broadcast axes.
SmallVector<Value> BroadcastToOp::buildVJP(OpBuilder &builder,
                                           ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  return {VJPBuilder(builder, getLoc())
              .sumToType(resultAdjoints[0], getInput().getType())};
}

// slice: the adjoint placed where the slice read, zeros elsewhere.
SmallVector<Value> SliceOp::buildVJP(OpBuilder &builder,
                                     ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  if (getType() == getInput().getType())
    return {resultAdjoints[0]};
  return {builder.create<SliceGradOp>(getLoc(), getInput().getType(),
                                      resultAdjoints[0], getStartsAttr(),
                                      getLimitsAttr(), getStridesAttr())};
}
