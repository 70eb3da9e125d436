// Shape ops: reshape, transpose, concat, split, broadcast_to and slice.
#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::mdl;

LogicalResult ReshapeOp::verify() {
  ArrayRef<int64_t> inputShape = getInput().getType().getShape();
  ArrayRef<int64_t> resultShape = getType().getShape();
  std::optional<int64_t> inputCount = getElementCount(inputShape);
  if (!inputCount)
    return emitOpError("operand shape ")
           << formatShape(inputShape) << " has more elements than fit in int64";
  std::optional<int64_t> resultCount = getElementCount(resultShape);
  if (!resultCount)
    return emitOpError("result shape ")
           << formatShape(resultShape)
           << " has more elements than fit in int64";
  if (*inputCount != *resultCount)
    return emitOpError("result has ")
           << *resultCount << " elements but the operand has " << *inputCount;
  return success();
}

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>>
mlir::mdl::inferTransposeShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm,
                               EmitErrorFn emitError) {
  if (perm.size() != shape.size())
    return reportInvalid(emitError, "perm has ", perm.size(),
                         " entries but the operand has rank ", shape.size());
  SmallVector<bool> seen(shape.size(), false);
  SmallVector<int64_t> result;
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) || seen[axis])
      return reportInvalid(emitError, "perm ", formatShape(perm),
                           " is not a permutation of 0 .. ", shape.size() - 1);
    seen[axis] = true;
    result.push_back(shape[axis]);
  }
  return result;
}

void TransposeOp::build(OpBuilder &builder, OperationState &state, Value input,
                        ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(input.getType());
  std::optional<SmallVector<int64_t>> shape =
      inferTransposeShape(type.getShape(), perm);
  build(builder, state, shape ? type.clone(*shape) : type, input, perm);
}

LogicalResult TransposeOp::verify() {
  RankedTensorType input = getInput().getType();
  std::optional<SmallVector<int64_t>> shape = inferTransposeShape(
      input.getShape(), getPerm(), [&] { return emitOpError(); });
  if (!shape)
    return failure();
  return verifyTensorType(*this, "result", getType(), *shape,
                          input.getElementType());
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPerm();
  auto isIdentity = [](ArrayRef<int64_t> axes) {
    for (auto [i, axis] : llvm::enumerate(axes))
      if (axis != static_cast<int64_t>(i))
        return false;
    return true;
  };
  if (isIdentity(perm))
    return getInput();
  // Result axis i is the inner input's axis inner[perm[i]].
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t axis : perm)
      composed.push_back(inner.getPerm()[axis]);
    if (isIdentity(composed))
      return inner.getInput();
  }
  return {};
}

namespace {

/// transpose(matmul(a, b)) with the last two axes swapped (and operands
/// and result of one rank, the batch axes kept) is matmul(transpose(b),
/// transpose(a)): each element the same dot product, and the lowering
/// reads transposed GEMM operands in place, where the result's transpose
/// was a copy. The matmul must have no other use.
struct TransposeOfMatmul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto matmul = op.getInput().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse())
      return failure();
    int64_t rank = op.getType().getRank();
    auto rankOf = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getRank();
    };
    if (rank < 2 || rankOf(matmul.getLhs()) != rank ||
        rankOf(matmul.getRhs()) != rank)
      return failure();
    SmallVector<int64_t> swap;
    for (int64_t axis = 0; axis < rank - 2; ++axis)
      swap.push_back(axis);
    swap.push_back(rank - 1);
    swap.push_back(rank - 2);
    if (op.getPerm() != ArrayRef<int64_t>(swap))
      return failure();
    // The product of the transposes has the operands' element type: only
    // a matmul whose result has it too.
    if (getElementTypeOrSelf(matmul.getType()) !=
        getElementTypeOrSelf(matmul.getLhs().getType()))
      return failure();
    Location loc = op.getLoc();
    Value rhs = rewriter.create<TransposeOp>(loc, matmul.getRhs(), swap);
    Value lhs = rewriter.create<TransposeOp>(loc, matmul.getLhs(), swap);
    rewriter.replaceOpWithNewOp<MatmulOp>(op, rhs, lhs);
    return success();
  }
};

} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<TransposeOfMatmul>(context);
}

//===----------------------------------------------------------------------===//
// concat
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>>
mlir::mdl::inferConcatShape(ArrayRef<ArrayRef<int64_t>> inputs, int64_t axis,
                            EmitErrorFn emitError) {
  if (inputs.empty())
    return reportInvalid(emitError, "expects at least one operand");
  ArrayRef<int64_t> first = inputs.front();
  int64_t rank = first.size();
  if (axis < 0 || axis >= rank)
    return reportInvalid(emitError, "axis ", axis, " is out of range for rank ",
                         rank, " (axes are normalised to 0 .. rank - 1)");
  SmallVector<int64_t> result(first);
  for (auto [index, shape] : llvm::enumerate(inputs.drop_front())) {
    size_t operand = index + 1;
    if (static_cast<int64_t>(shape.size()) != rank)
      return reportInvalid(emitError, "operand #", operand, " has rank ",
                           shape.size(), " but operand #0 has rank ", rank);
    for (int64_t i = 0; i < rank; ++i) {
      if (i != axis && shape[i] != first[i])
        return reportInvalid(emitError, "operand #", operand, " has size ",
                             shape[i], " on axis ", i,
                             " but operand #0 has size ", first[i]);
    }
    std::optional<int64_t> joined = llvm::checkedAdd(result[axis], shape[axis]);
    if (!joined)
      return reportInvalid(emitError, "result size on axis ", axis,
                           " (the sum of the operands' sizes) does not fit "
                           "in int64");
    result[axis] = *joined;
  }
  return result;
}

static SmallVector<ArrayRef<int64_t>> getShapes(ValueRange values) {
  return llvm::to_vector(llvm::map_range(values, [](Value value) {
    return cast<RankedTensorType>(value.getType()).getShape();
  }));
}

void ConcatOp::build(OpBuilder &builder, OperationState &state,
                     ValueRange inputs, int64_t axis) {
  Type resultType = builder.getNoneType();
  if (!inputs.empty()) {
    auto first = cast<RankedTensorType>(inputs.front().getType());
    std::optional<SmallVector<int64_t>> shape =
        inferConcatShape(getShapes(inputs), axis);
    resultType = shape ? first.clone(*shape) : first;
  }
  build(builder, state, resultType, inputs, axis);
}

LogicalResult ConcatOp::verify() {
  std::optional<SmallVector<int64_t>> shape = inferConcatShape(
      getShapes(getInputs()), getAxis(), [&] { return emitOpError(); });
  if (!shape)
    return failure();
  return verifyTensorType(*this, "result", getType(), *shape,
                          getType().getElementType());
}

//===----------------------------------------------------------------------===//
// split
//===----------------------------------------------------------------------===//

void SplitOp::build(OpBuilder &builder, OperationState &state, Value input,
                    int64_t axis, unsigned numParts) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  if (axis >= 0 && axis < type.getRank() && numParts > 0)
    shape[axis] /= numParts;
  SmallVector<Type> resultTypes(numParts, type.clone(shape));
  build(builder, state, resultTypes, input, axis);
}

LogicalResult SplitOp::verify() {
  RankedTensorType input = getInput().getType();
  // SameOperandsAndResultElementType already requires a result.
  int64_t numParts = getNumResults();
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, axis, input.getRank())))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  if (shape[axis] % numParts != 0)
    return emitOpError("axis ")
           << axis << " of size " << shape[axis] << " does not split into "
           << numParts << " equal parts";
  shape[axis] /= numParts;
  for (auto [index, result] : llvm::enumerate(getResults())) {
    if (failed(verifyTensorType(*this, "result #" + std::to_string(index),
                                result.getType(), shape,
                                input.getElementType())))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// broadcast_to
//===----------------------------------------------------------------------===//

LogicalResult BroadcastToOp::verify() {
  ArrayRef<int64_t> from = getInput().getType().getShape();
  ArrayRef<int64_t> to = getType().getShape();
  std::optional<SmallVector<int64_t>> shape = inferBroadcastShape(from, to);
  if (!shape || ArrayRef<int64_t>(*shape) != to)
    return emitOpError("operand shape ")
           << formatShape(from) << " does not broadcast to the result shape "
           << formatShape(to);
  return success();
}

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>>
mlir::mdl::inferSliceShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> starts,
                           ArrayRef<int64_t> limits, ArrayRef<int64_t> strides,
                           EmitErrorFn emitError) {
  size_t rank = shape.size();
  if (starts.size() != rank || limits.size() != rank || strides.size() != rank)
    return reportInvalid(emitError, "starts, limits and strides must have ",
                         rank, " entries each (the operand's rank), got ",
                         starts.size(), ", ", limits.size(), " and ",
                         strides.size());
  SmallVector<int64_t> result;
  for (size_t i = 0; i < rank; ++i) {
    if (strides[i] < 1)
      return reportInvalid(emitError, "stride ", strides[i], " on axis ", i,
                           " must be positive");
    if (starts[i] < 0 || starts[i] > limits[i] || limits[i] > shape[i])
      return reportInvalid(emitError, "start ", starts[i], " and limit ",
                           limits[i], " on axis ", i,
                           " are not within 0 <= start <= limit <= ", shape[i]);
    // ceil(length / stride), without forming `length + stride - 1`.
    int64_t length = limits[i] - starts[i];
    result.push_back(length == 0 ? 0 : (length - 1) / strides[i] + 1);
  }
  return result;
}

void SliceOp::build(OpBuilder &builder, OperationState &state, Value input,
                    ArrayRef<int64_t> starts, ArrayRef<int64_t> limits,
                    ArrayRef<int64_t> strides) {
  auto type = cast<RankedTensorType>(input.getType());
  std::optional<SmallVector<int64_t>> shape =
      inferSliceShape(type.getShape(), starts, limits, strides);
  build(builder, state, shape ? type.clone(*shape) : type, input, starts,
        limits, strides);
}

LogicalResult SliceOp::verify() {
  RankedTensorType input = getInput().getType();
  std::optional<SmallVector<int64_t>> shape =
      inferSliceShape(input.getShape(), getStarts(), getLimits(), getStrides(),
                      [&] { return emitOpError(); });
  if (!shape)
    return failure();
  return verifyTensorType(*this, "result", getType(), *shape,
                          input.getElementType());
}
