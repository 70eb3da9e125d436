// Lowering of mdl.max_pool2d_grad and mdl.avg_pool2d_grad: the scatter of
// each window's adjoint written as a gather over input positions.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// The pooling sizes: input `[n, c, h, w]`, windows `[oh, ow]`.
struct PoolGeometry {
  int64_t h, w, oh, ow;
  ArrayRef<int64_t> kernel, stride, padding;
};

/// The gather that routes window adjoints back to the input: loops
/// (n, c, h, w | i, j) over the result `[n, c, h, w]` and the kernel taps.
/// Window (y, x) reads input (h, w) through tap (i, j) when
/// `y * s0 + i == h + p0` (likewise x); `contribution(b, loc, y, x, taken)`
/// gives that window's share, in getComputeType of the result's elements,
/// and `taken` is whether such a window exists. f16/bf16 shares add up in an
/// f32 accumulator, rounded once to the result.
Value gatherFromWindows(
    OpBuilder &b, Location loc, RankedTensorType resultType,
    const PoolGeometry &geo,
    function_ref<Value(OpBuilder &, Location, Value, Value, Value)>
        contribution) {
  MLIRContext *ctx = b.getContext();
  Type elementType = resultType.getElementType();
  Type accumulatorType = getComputeType(elementType);
  Value window = createEmptyTensor(b, loc, geo.kernel, elementType);
  Value init = createZeroTensor(b, loc, resultType.getShape(), accumulatorType);
  SmallVector<AffineMap> maps = {projectionMap(ctx, 6, {4, 5}),
                                 projectionMap(ctx, 6, {0, 1, 2, 3})};
  auto sums = b.create<linalg::GenericOp>(
      loc, init.getType(), window, init, maps, iteratorTypes(4, 2),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<WindowIndex, 2> windows;
        for (int axis = 0; axis < 2; ++axis) {
          Value padded = nb.createOrFold<arith::AddIOp>(
              nloc, loopIndex(nb, nloc, 2 + axis),
              createIndexConstant(nb, nloc, geo.padding[axis]));
          windows.push_back(
              findReadingWindow(nb, nloc, padded, loopIndex(nb, nloc, 4 + axis),
                                geo.stride[axis], axis == 0 ? geo.oh : geo.ow));
        }
        Value taken =
            nb.create<arith::AndIOp>(nloc, windows[0].valid, windows[1].valid);
        Value share =
            contribution(nb, nloc, windows[0].index, windows[1].index, taken);
        nb.create<linalg::YieldOp>(
            nloc, nb.create<arith::AddFOp>(nloc, args[1], share).getResult());
      });
  return castTensor(b, loc, sums.getResult(0), elementType);
}

/// The tap `i * kw + j` of the current loop (dims 4 and 5) as i64.
Value currentTap(OpBuilder &b, Location loc, int64_t kw) {
  Value row = b.create<arith::MulIOp>(loc, loopIndex(b, loc, 4),
                                      createIndexConstant(b, loc, kw));
  Value tap = b.create<arith::AddIOp>(loc, row, loopIndex(b, loc, 5));
  return b.create<arith::IndexCastOp>(loc, b.getI64Type(), tap);
}

/// max_pool2d_grad in two passes (the single-pass gather would recompute
/// every covering window's argmax, kh * kw times the work):
///  1. per window, the tap `i * kw + j` of its maximum, as PyTorch's CPU
///     kernel picks it: the first in-bounds element, replaced by each later
///     element that is greater or NaN (so ties keep the first, NaN the
///     last); padding never wins. Cost n*c*oh*ow*kh*kw, an i64 `[n,c,oh,ow]`
///     temporary (plus the running maxima).
///  2. dX[n, c, h, w] = sum of dY over the windows (y, x) reading (h, w)
///     through tap (i, j) whose stored tap is (i, j). Cost n*c*h*w*kh*kw.
struct MaxPool2dGradLowering : OpConversionPattern<mlir::mdl::MaxPool2dGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::MaxPool2dGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    ArrayRef<int64_t> gradShape = op.getGrad().getType().getShape();
    ArrayRef<int64_t> shape = resultType.getShape();
    PoolGeometry geo{shape[2],       shape[3],       gradShape[2],
                     gradShape[3],   op.getKernel(), op.getStride(),
                     op.getPadding()};
    Type elementType = resultType.getElementType();
    MLIRContext *ctx = rewriter.getContext();

    // Pass 1: loops (n, c, y, x | i, j) over xpad[n, c, y*s0 + i, x*s1 + j]
    // (the padding value is never taken: out-of-bounds taps are skipped).
    Value zero = rewriter.create<arith::ConstantOp>(
        loc, rewriter.getZeroAttr(elementType));
    Value input =
        padSpatial(rewriter, loc, adaptor.getInput(), geo.padding, zero);
    AffineExpr n, c, y, x, i, j;
    bindDims(ctx, n, c, y, x, i, j);
    SmallVector<AffineMap> maps = {
        AffineMap::get(
            6, 0, {n, c, y * geo.stride[0] + i, x * geo.stride[1] + j}, ctx),
        projectionMap(ctx, 6, {4, 5}), projectionMap(ctx, 6, {0, 1, 2, 3}),
        projectionMap(ctx, 6, {0, 1, 2, 3})};
    Value window = createEmptyTensor(rewriter, loc, geo.kernel, elementType);
    // The first in-bounds tap always replaces the initial maximum.
    Value maxInit = createFilledTensor(rewriter, loc, gradShape, zero);
    Value tapInit =
        createFilledTensor(rewriter, loc, gradShape,
                           rewriter.create<arith::ConstantIntOp>(loc, -1, 64));
    auto argmaxBody = [&](OpBuilder &nb, Location nloc, ValueRange args) {
      Value element = args[0], best = args[2], bestTap = args[3];
      // In bounds: p0 <= y * s0 + i < h + p0 (likewise x).
      Value inBounds;
      for (int axis = 0; axis < 2; ++axis) {
        Value padded = nb.create<arith::AddIOp>(
            nloc,
            nb.create<arith::MulIOp>(
                nloc, loopIndex(nb, nloc, 2 + axis),
                createIndexConstant(nb, nloc, geo.stride[axis])),
            loopIndex(nb, nloc, 4 + axis));
        int64_t size = axis == 0 ? geo.h : geo.w;
        Value low = nb.create<arith::CmpIOp>(
            nloc, arith::CmpIPredicate::sge, padded,
            createIndexConstant(nb, nloc, geo.padding[axis]));
        Value high = nb.create<arith::CmpIOp>(
            nloc, arith::CmpIPredicate::slt, padded,
            createIndexConstant(nb, nloc, size + geo.padding[axis]));
        Value both = nb.create<arith::AndIOp>(nloc, low, high);
        inBounds =
            inBounds ? nb.create<arith::AndIOp>(nloc, inBounds, both) : both;
      }
      Value first = nb.create<arith::CmpIOp>(
          nloc, arith::CmpIPredicate::slt, bestTap,
          nb.create<arith::ConstantIntOp>(nloc, 0, 64));
      Value greater = nb.create<arith::CmpFOp>(nloc, arith::CmpFPredicate::OGT,
                                               element, best);
      Value isNaN = nb.create<arith::CmpFOp>(nloc, arith::CmpFPredicate::UNO,
                                             element, element);
      Value take = nb.create<arith::AndIOp>(
          nloc, inBounds,
          nb.create<arith::OrIOp>(
              nloc, first, nb.create<arith::OrIOp>(nloc, greater, isNaN)));
      nb.create<linalg::YieldOp>(
          nloc,
          ValueRange{
              nb.create<arith::SelectOp>(nloc, take, element, best),
              nb.create<arith::SelectOp>(
                  nloc, take, currentTap(nb, nloc, geo.kernel[1]), bestTap)});
    };
    Value taps =
        rewriter
            .create<linalg::GenericOp>(
                loc, TypeRange{maxInit.getType(), tapInit.getType()},
                ValueRange{input, window}, ValueRange{maxInit, tapInit}, maps,
                iteratorTypes(4, 2), argmaxBody)
            .getResult(1);

    // Pass 2: the gather.
    Value grad = adaptor.getGrad();
    Type accumulatorType = getComputeType(elementType);
    Value accumulatorZero =
        accumulatorType == elementType
            ? zero
            : rewriter.create<arith::ConstantOp>(
                  loc, rewriter.getZeroAttr(accumulatorType));
    auto routed = [&](OpBuilder &nb, Location nloc, Value wy, Value wx,
                      Value taken) -> Value {
      SmallVector<Value> index = {loopIndex(nb, nloc, 0),
                                  loopIndex(nb, nloc, 1), wy, wx};
      Value stored = nb.create<tensor::ExtractOp>(nloc, taps, index);
      Value isMax =
          nb.create<arith::CmpIOp>(nloc, arith::CmpIPredicate::eq, stored,
                                   currentTap(nb, nloc, geo.kernel[1]));
      Value hit = nb.create<arith::AndIOp>(nloc, taken, isMax);
      Value adjoint = extendToComputeType(
          nb, nloc, nb.create<tensor::ExtractOp>(nloc, grad, index));
      return nb.create<arith::SelectOp>(nloc, hit, adjoint, accumulatorZero);
    };
    rewriter.replaceOp(
        op, gatherFromWindows(rewriter, loc, resultType, geo, routed));
    return success();
  }
};

/// avg_pool2d_grad: dX[n, c, h, w] = sum over the windows (y, x) reading
/// (h, w) of dY[n, c, y, x] / (kh * kw) (each term divided, as PyTorch's
/// backward kernel; floor mode never clips a window, so the divisor is
/// always the full kernel with count_include_pad). f16/bf16 terms are
/// divided and summed in f32.
struct AvgPool2dGradLowering : OpConversionPattern<mlir::mdl::AvgPool2dGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::AvgPool2dGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    ArrayRef<int64_t> gradShape = op.getGrad().getType().getShape();
    ArrayRef<int64_t> shape = resultType.getShape();
    PoolGeometry geo{shape[2],       shape[3],       gradShape[2],
                     gradShape[3],   op.getKernel(), op.getStride(),
                     op.getPadding()};
    Type accumulatorType = getComputeType(resultType.getElementType());
    Value grad = adaptor.getGrad();
    Value zero = rewriter.create<arith::ConstantOp>(
        loc, rewriter.getZeroAttr(accumulatorType));
    Value divisor = createScalarConstant(
        rewriter, loc, accumulatorType,
        static_cast<double>(geo.kernel[0] * geo.kernel[1]));
    auto share = [&](OpBuilder &nb, Location nloc, Value wy, Value wx,
                     Value taken) -> Value {
      SmallVector<Value> index = {loopIndex(nb, nloc, 0),
                                  loopIndex(nb, nloc, 1), wy, wx};
      Value adjoint = extendToComputeType(
          nb, nloc, nb.create<tensor::ExtractOp>(nloc, grad, index));
      Value part = nb.create<arith::DivFOp>(nloc, adjoint, divisor);
      return nb.create<arith::SelectOp>(nloc, taken, part, zero);
    };
    rewriter.replaceOp(
        op, gatherFromWindows(rewriter, loc, resultType, geo, share));
    return success();
  }
};

} // namespace

void modelc::populatePoolGradToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MaxPool2dGradLowering, AvgPool2dGradLowering>(
      patterns.getContext());
}
