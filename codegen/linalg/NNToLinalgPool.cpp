// Lowering of mdl.max_pool2d and mdl.avg_pool2d (NCHW, floor mode) to
// window reductions over a padded input.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// The reduction over each window: loops (n, c, y, x | i, j) read
/// `xpad[n, c, y * s0 + i, x * s1 + j]` and combine into `init[n, c, y, x]`
/// with `combine(accumulator, element)` (`init` may be of a wider type than
/// the input). The `[kh, kw]` window operand only gives the reduction loops
/// their extent (as in linalg.pooling_*).
Value reduceWindows(
    OpBuilder &b, Location loc, Value padded, Value init,
    ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  AffineExpr n, c, y, x, i, j;
  bindDims(ctx, n, c, y, x, i, j);
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0, {n, c, y * stride[0] + i, x * stride[1] + j}, ctx),
      projectionMap(ctx, 6, {4, 5}), projectionMap(ctx, 6, {0, 1, 2, 3})};
  Type elementType = getElementTypeOrSelf(padded.getType());
  Value window = createEmptyTensor(b, loc, kernel, elementType);
  return b
      .create<linalg::GenericOp>(
          loc, init.getType(), ValueRange{padded, window}, init, maps,
          iteratorTypes(4, 2),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            nb.create<linalg::YieldOp>(nloc,
                                       combine(nb, nloc, args[2], args[0]));
          })
      .getResult(0);
}

/// max_pool2d: padding reads as -inf (never the max: the verifier keeps
/// padding at most half the kernel, so every window holds a real element).
/// arith.maximumf propagates NaN like PyTorch's kernel; integers (max_pool2d
/// is numeric) compare signed or unsigned as their mdl type says.
struct MaxPool2dLowering : OpConversionPattern<mlir::mdl::MaxPool2dOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::MaxPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    Type elementType = resultType.getElementType();
    bool isUnsigned = hasUnsignedElements(op.getInput());
    Value lowest =
        createLowestValue(rewriter, loc, op.getType().getElementType());
    Value padded =
        padSpatial(rewriter, loc, adaptor.getInput(), op.getPadding(), lowest);
    Value init =
        createFilledTensor(rewriter, loc, resultType.getShape(), lowest);
    auto combine = [&](OpBuilder &nb, Location nloc, Value acc,
                       Value element) -> Value {
      if (isa<FloatType>(elementType))
        return nb.create<arith::MaximumFOp>(nloc, acc, element);
      if (isUnsigned)
        return nb.create<arith::MaxUIOp>(nloc, acc, element);
      return nb.create<arith::MaxSIOp>(nloc, acc, element);
    };
    rewriter.replaceOp(op,
                       reduceWindows(rewriter, loc, padded, init,
                                     op.getKernel(), op.getStride(), combine));
    return success();
  }
};

/// avg_pool2d with count_include_pad: the window sum over a zero-padded
/// input, then divided by kh * kw (sum first, then divide, as PyTorch).
/// f16/bf16 sum and divide in f32 and round the average once.
struct AvgPool2dLowering : OpConversionPattern<mlir::mdl::AvgPool2dOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::AvgPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    Type elementType = resultType.getElementType();
    Type accumulatorType = getComputeType(elementType);
    Value zero = rewriter.create<arith::ConstantOp>(
        loc, rewriter.getZeroAttr(elementType));
    Value padded =
        padSpatial(rewriter, loc, adaptor.getInput(), op.getPadding(), zero);
    Value accumulatorZero =
        accumulatorType == elementType
            ? zero
            : rewriter.create<arith::ConstantOp>(
                  loc, rewriter.getZeroAttr(accumulatorType));
    Value init = createFilledTensor(rewriter, loc, resultType.getShape(),
                                    accumulatorZero);
    Value sums = reduceWindows(
        rewriter, loc, padded, init, op.getKernel(), op.getStride(),
        [](OpBuilder &nb, Location nloc, Value acc, Value element) -> Value {
          return nb.create<arith::AddFOp>(
              nloc, acc, extendToComputeType(nb, nloc, element));
        });
    ArrayRef<int64_t> kernel = op.getKernel();
    Value divisor =
        createScalarConstant(rewriter, loc, accumulatorType,
                             static_cast<double>(kernel[0] * kernel[1]));
    Value empty =
        createEmptyTensor(rewriter, loc, resultType.getShape(), elementType);
    AffineMap identity = rewriter.getMultiDimIdentityMap(4);
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        op, resultType, sums, empty, ArrayRef<AffineMap>{identity, identity},
        iteratorTypes(4, 0),
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Value average = nb.create<arith::DivFOp>(nloc, args[0], divisor);
          nb.create<linalg::YieldOp>(nloc,
                                     castFloat(nb, nloc, average, elementType));
        });
    return success();
  }
};

} // namespace

void modelc::populatePoolToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MaxPool2dLowering, AvgPool2dLowering>(patterns.getContext());
}
