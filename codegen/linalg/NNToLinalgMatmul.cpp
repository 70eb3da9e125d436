// Lowering of mdl.matmul (torch.matmul) to the named linalg GEMM ops that
// --mdl-gemm-to-library later turns into OpenBLAS calls.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Traits.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// One GEMM operand: the tensor to pass and whether it is stored transposed
/// (`[.., k, m]` for the left side, `[.., n, k]` for the right side).
struct GemmOperand {
  Value value;
  bool transposed = false;
};

/// The input of `original` when it is an mdl.transpose that swaps exactly
/// the last two axes (nn.linear's `x @ transpose(w)`, the matmul VJPs), so
/// that the GEMM can read it transposed instead of copying it.
Value getLastTwoAxesTransposeInput(Value original,
                                   ConversionPatternRewriter &rewriter) {
  auto transpose = original.getDefiningOp<mlir::mdl::TransposeOp>();
  if (!transpose)
    return {};
  ArrayRef<int64_t> perm = transpose.getPerm();
  int64_t rank = perm.size();
  if (rank < 2)
    return {};
  for (int64_t axis = 0; axis < rank - 2; ++axis)
    if (perm[axis] != axis)
      return {};
  if (perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return {};
  // The transpose's own operand as converted so far by the conversion.
  return rewriter.getRemappedValue(transpose.getInput());
}

/// `operand` as a matrix: its batch axes (broadcast to `batch` and collapsed
/// into one axis when `batch` is not empty) followed by its two matrix axes.
GemmOperand prepareOperand(OpBuilder &b, Location loc, GemmOperand operand,
                           ArrayRef<int64_t> batch) {
  auto shape = cast<RankedTensorType>(operand.value.getType()).getShape();
  SmallVector<int64_t> matrix(shape.take_back(2));
  if (batch.empty()) {
    operand.value = reshapeTensor(b, loc, operand.value, matrix);
    return operand;
  }
  SmallVector<int64_t> full(batch);
  full.append(matrix);
  Value broadcast = broadcastTensor(b, loc, operand.value, full);
  int64_t count = ShapedType::getNumElements(batch);
  operand.value =
      reshapeTensor(b, loc, broadcast, {count, matrix[0], matrix[1]});
  return operand;
}

/// torch.matmul: a 1-D lhs is a row `[1, k]`, a 1-D rhs a column `[k, 1]`
/// (the added axis is dropped from the result); otherwise the batch axes
/// broadcast and the last two are multiplied. The shapes become one of:
///  - no batch (every batch size 1): `[m, k] @ [k, n]`, linalg.matmul;
///  - rhs without batch: lhs `[b.., m, k]` is contiguous as `[b*m, k]`, so
///    one linalg.matmul `[b*m, k] @ [k, n]` does all batches (the linear
///    layer `[b, t, k] @ [k, n]`);
///  - otherwise: both sides broadcast to the result's batch (a copy only
///    where a side is missing batch axes or has size-1 ones), collapsed to
///    one batch axis, linalg.batch_matmul.
/// A side produced by a last-two-axes mdl.transpose uses the *_transpose_a/b
/// form on the transpose's input; when both are, only the rhs is folded.
struct MatmulLowering : OpConversionPattern<mlir::mdl::MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    ArrayRef<int64_t> lhsShape = op.getLhs().getType().getShape();
    ArrayRef<int64_t> rhsShape = op.getRhs().getType().getShape();

    // Both sides as rank >= 2 shapes, 1-D ones made a row / a column.
    int64_t k = lhsShape.back();
    SmallVector<int64_t> lhsMatrix = lhsShape.size() == 1
                                         ? SmallVector<int64_t>{1, k}
                                         : SmallVector<int64_t>(lhsShape);
    SmallVector<int64_t> rhsMatrix = rhsShape.size() == 1
                                         ? SmallVector<int64_t>{k, 1}
                                         : SmallVector<int64_t>(rhsShape);
    GemmOperand lhs{reshapeTensor(rewriter, loc, adaptor.getLhs(), lhsMatrix)};
    GemmOperand rhs{reshapeTensor(rewriter, loc, adaptor.getRhs(), rhsMatrix)};
    int64_t m = lhsMatrix[lhsMatrix.size() - 2];
    int64_t n = rhsMatrix.back();

    ArrayRef<int64_t> lhsBatch = ArrayRef<int64_t>(lhsMatrix).drop_back(2);
    ArrayRef<int64_t> rhsBatch = ArrayRef<int64_t>(rhsMatrix).drop_back(2);
    SmallVector<int64_t> batch;
    if (!OpTrait::util::getBroadcastedShape(lhsBatch, rhsBatch, batch))
      return rewriter.notifyMatchFailure(op, "batch axes do not broadcast");
    bool lhsHasBatch = ShapedType::getNumElements(lhsBatch) != 1;
    bool rhsHasBatch = ShapedType::getNumElements(rhsBatch) != 1;

    // Fold transposes: the rhs always can; the lhs only when its batch axes
    // stay separate (folding its batch into m needs the untransposed rows).
    if (Value input = getLastTwoAxesTransposeInput(op.getRhs(), rewriter))
      rhs = {input, true};
    else if (!(lhsHasBatch && !rhsHasBatch))
      if (Value input = getLastTwoAxesTransposeInput(op.getLhs(), rewriter))
        lhs = {input, true};

    Value product;
    if (!lhsHasBatch && !rhsHasBatch) {
      lhs = prepareOperand(rewriter, loc, lhs, {});
      rhs = prepareOperand(rewriter, loc, rhs, {});
      product = createGemm(rewriter, loc, lhs.value, rhs.value, lhs.transposed,
                           rhs.transposed, {m, n});
    } else if (!rhsHasBatch) {
      int64_t rows = ShapedType::getNumElements(lhsBatch) * m;
      lhs.value = reshapeTensor(rewriter, loc, lhs.value, {rows, k});
      rhs = prepareOperand(rewriter, loc, rhs, {});
      product = createGemm(rewriter, loc, lhs.value, rhs.value, lhs.transposed,
                           rhs.transposed, {rows, n});
    } else {
      lhs = prepareOperand(rewriter, loc, lhs, batch);
      rhs = prepareOperand(rewriter, loc, rhs, batch);
      int64_t count = ShapedType::getNumElements(batch);
      product = createGemm(rewriter, loc, lhs.value, rhs.value, lhs.transposed,
                           rhs.transposed, {count, m, n});
    }
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, product, resultType.getShape()));
    return success();
  }
};

} // namespace

void modelc::populateMatmulToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulLowering>(patterns.getContext());
}
