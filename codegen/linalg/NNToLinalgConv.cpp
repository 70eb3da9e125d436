// Lowering of mdl.conv2d and its two gradients as im2col + one GEMM (a
// batch over groups), with col2im for the input gradient written as a gather.
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

/// The sizes of one convolution, NCHW input `[n, c, h, w]`, OIHW weight
/// `[o, c / groups, kh, kw]`, output `[n, o, oh, ow]`. The GEMMs work on
/// groups `g` of `cg = c / g` input and `og = o / g` output channels, with
/// `k = cg * kh * kw` (one column of im2col) and `p = n * oh * ow` (one
/// output pixel of one sample per column).
struct ConvGeometry {
  int64_t n, c, h, w, o, kh, kw, oh, ow, g;
  int64_t stride[2], padding[2], dilation[2];

  ConvGeometry(ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
               ArrayRef<int64_t> output, ArrayRef<int64_t> strideAttr,
               ArrayRef<int64_t> paddingAttr, ArrayRef<int64_t> dilationAttr,
               int64_t groups)
      : n(input[0]), c(input[1]), h(input[2]), w(input[3]), o(weight[0]),
        kh(weight[2]), kw(weight[3]), oh(output[2]), ow(output[3]), g(groups) {
    for (int axis = 0; axis < 2; ++axis) {
      stride[axis] = strideAttr[axis];
      padding[axis] = paddingAttr[axis];
      dilation[axis] = dilationAttr[axis];
    }
  }
  int64_t cg() const { return c / g; }
  int64_t og() const { return o / g; }
  int64_t k() const { return cg() * kh * kw; }
  int64_t p() const { return n * oh * ow; }
};

template <typename ConvOp>
ConvGeometry getGeometry(ConvOp op, ArrayRef<int64_t> input,
                         ArrayRef<int64_t> weight, ArrayRef<int64_t> output) {
  return ConvGeometry(input, weight, output, op.getStride(), op.getPadding(),
                      op.getDilation(), op.getGroups());
}

/// The shape of a per-group `[rows, cols]` GEMM operand or result: with
/// one group plain `[rows, cols]` (one large linalg.matmul, a single BLAS
/// call), otherwise `[g, rows, cols]` for linalg.batch_matmul over groups.
SmallVector<int64_t> grouped(const ConvGeometry &geo, int64_t rows,
                             int64_t cols) {
  if (geo.g == 1)
    return {rows, cols};
  return {geo.g, rows, cols};
}

/// im2col as `grouped(k, p)`:
///   col[gi, (c * kh + i) * kw + j, (n * oh + y) * ow + x]
///     = xpad[n, gi * cg + c, y * s0 + i * d0, x * s1 + j * d1]
/// built as a copy over the 7-D space (gi, c, i, j, n, y, x) with that
/// affine input map, then collapsed (a view). Column block gi is the GEMM
/// operand of group gi.
Value createIm2col(OpBuilder &b, Location loc, Value input,
                   const ConvGeometry &geo) {
  Value zero = b.create<arith::ConstantOp>(
      loc, b.getZeroAttr(getElementTypeOrSelf(input.getType())));
  Value padded = padSpatial(b, loc, input, geo.padding, zero);
  MLIRContext *ctx = b.getContext();
  AffineExpr gi, c, i, j, n, y, x;
  bindDims(ctx, gi, c, i, j, n, y, x);
  AffineMap inputMap = AffineMap::get(7, 0,
                                      {n, gi * geo.cg() + c,
                                       y * geo.stride[0] + i * geo.dilation[0],
                                       x * geo.stride[1] + j * geo.dilation[1]},
                                      ctx);
  SmallVector<int64_t> shape = {geo.g, geo.cg(), geo.kh, geo.kw,
                                geo.n, geo.oh,   geo.ow};
  Type elementType = getElementTypeOrSelf(input.getType());
  Value init = createEmptyTensor(b, loc, shape, elementType);
  Value col = b.create<linalg::GenericOp>(
                   loc, init.getType(), padded, init,
                   ArrayRef<AffineMap>{inputMap, b.getMultiDimIdentityMap(7)},
                   iteratorTypes(7, 0),
                   [](OpBuilder &nb, Location nloc, ValueRange args) {
                     nb.create<linalg::YieldOp>(nloc, args[0]);
                   })
                  .getResult(0);
  return reshapeTensor(b, loc, col, grouped(geo, geo.k(), geo.p()));
}

/// `[n, o, oh, ow]` -> `grouped(og, p)`: the output adjoint with the channel
/// axis first (one transposing copy), grouped; the GEMM operand of dY.
Value createOutputColumns(OpBuilder &b, Location loc, Value grad,
                          const ConvGeometry &geo) {
  SmallVector<int64_t> shape = {geo.o, geo.n, geo.oh, geo.ow};
  Type elementType = getElementTypeOrSelf(grad.getType());
  Value init = createEmptyTensor(b, loc, shape, elementType);
  MLIRContext *ctx = b.getContext();
  // Loop (o, n, y, x) reads grad[n, o, y, x].
  Value transposed =
      b.create<linalg::GenericOp>(
           loc, init.getType(), grad, init,
           ArrayRef<AffineMap>{projectionMap(ctx, 4, {1, 0, 2, 3}),
                               b.getMultiDimIdentityMap(4)},
           iteratorTypes(4, 0),
           [](OpBuilder &nb, Location nloc, ValueRange args) {
             nb.create<linalg::YieldOp>(nloc, args[0]);
           })
          .getResult(0);
  return reshapeTensor(b, loc, transposed, grouped(geo, geo.og(), geo.p()));
}

/// conv2d: Y[gi] = W[gi] `[og, k]` @ col[gi] `[k, p]`, then one generic
/// that reorders `[o, n, oh, ow]` to NCHW and adds the bias. f16/bf16: the
/// f32 product plus the bias in f32, rounded once.
struct Conv2dLowering : OpConversionPattern<mlir::mdl::Conv2dOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::Conv2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    ConvGeometry geo =
        getGeometry(op, op.getInput().getType().getShape(),
                    op.getWeight().getType().getShape(), resultType.getShape());
    Value col = createIm2col(rewriter, loc, adaptor.getInput(), geo);
    Value weight = reshapeTensor(rewriter, loc, adaptor.getWeight(),
                                 grouped(geo, geo.og(), geo.k()));
    Value product = createWideGemm(
        rewriter, loc, weight, col, /*transposeLhs=*/false,
        /*transposeRhs=*/false, grouped(geo, geo.og(), geo.p()));
    Value columns =
        reshapeTensor(rewriter, loc, product, {geo.o, geo.n, geo.oh, geo.ow});

    // Loop (n, o, y, x): result = columns[o, n, y, x] (+ bias[o]).
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<Value> inputs = {columns};
    SmallVector<AffineMap> maps = {projectionMap(ctx, 4, {1, 0, 2, 3})};
    if (Value bias = adaptor.getBias()) {
      inputs.push_back(bias);
      maps.push_back(projectionMap(ctx, 4, {1}));
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(4));
    Value init = createEmptyTensor(rewriter, loc, resultType.getShape(),
                                   resultType.getElementType());
    bool hasBias = inputs.size() == 2;
    Type elementType = resultType.getElementType();
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        op, resultType, inputs, init, maps, iteratorTypes(4, 0),
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          Value value = args[0];
          if (hasBias)
            value = nb.create<arith::AddFOp>(
                nloc, value, extendToComputeType(nb, nloc, args[1]));
          nb.create<linalg::YieldOp>(nloc,
                                     castFloat(nb, nloc, value, elementType));
        });
    return success();
  }
};

/// dW[gi] `[og, k]` = dY[gi] `[og, p]` @ col[gi]^T, col being the forward's
/// im2col of the input (identical ops, so CSE can share it with the
/// forward); col `[k, p]` is read transposed by matmul_transpose_b.
struct Conv2dGradWeightLowering
    : OpConversionPattern<mlir::mdl::Conv2dGradWeightOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::Conv2dGradWeightOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    ConvGeometry geo =
        getGeometry(op, op.getInput().getType().getShape(),
                    resultType.getShape(), op.getGrad().getType().getShape());
    Value col = createIm2col(rewriter, loc, adaptor.getInput(), geo);
    Value grad = createOutputColumns(rewriter, loc, adaptor.getGrad(), geo);
    Value product =
        createGemm(rewriter, loc, grad, col, /*transposeLhs=*/false,
                   /*transposeRhs=*/true, grouped(geo, geo.og(), geo.k()));
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, product, resultType.getShape()));
    return success();
  }
};

/// dX: dcol[gi] `[k, p]` = W[gi]^T @ dY[gi] (matmul_transpose_a), then
/// col2im. col2im scatter-adds dcol back to where im2col read it; as a
/// gather over input positions (n, gi, c, h, w) and kernel offsets (i, j):
///   y * s0 + i * d0 == h + p0  =>  y = (h + p0 - i * d0) / s0
/// contributes when the division is exact and 0 <= y < oh (likewise x).
/// Positions no window reads (the bottom/right rows a floor-mode conv
/// skips) get zeros, as the op requires. Iterating over the unpadded input
/// directly makes removing the padding unnecessary. f16/bf16: dcol stays
/// f32 and the taps add up in an f32 accumulator, rounded once.
struct Conv2dGradInputLowering
    : OpConversionPattern<mlir::mdl::Conv2dGradInputOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::Conv2dGradInputOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    ConvGeometry geo = getGeometry(op, resultType.getShape(),
                                   op.getWeight().getType().getShape(),
                                   op.getGrad().getType().getShape());
    Value weight = reshapeTensor(rewriter, loc, adaptor.getWeight(),
                                 grouped(geo, geo.og(), geo.k()));
    Value grad = createOutputColumns(rewriter, loc, adaptor.getGrad(), geo);
    Value dcol = createWideGemm(
        rewriter, loc, weight, grad, /*transposeLhs=*/true,
        /*transposeRhs=*/false, grouped(geo, geo.k(), geo.p()));
    dcol =
        reshapeTensor(rewriter, loc, dcol,
                      {geo.g, geo.cg(), geo.kh, geo.kw, geo.n, geo.oh, geo.ow});

    // Loop (n, gi, c, h, w | i, j); the kernel-window operand only gives
    // the reduction loops their extent.
    Type elementType = resultType.getElementType();
    Type accumulatorType = getComputeType(elementType);
    MLIRContext *ctx = rewriter.getContext();
    Value window =
        createEmptyTensor(rewriter, loc, {geo.kh, geo.kw}, elementType);
    Value init = createZeroTensor(
        rewriter, loc, {geo.n, geo.g, geo.cg(), geo.h, geo.w}, accumulatorType);
    SmallVector<AffineMap> maps = {projectionMap(ctx, 7, {5, 6}),
                                   projectionMap(ctx, 7, {0, 1, 2, 3, 4})};
    auto body = [&](OpBuilder &nb, Location nloc, ValueRange args) {
      // Window (y, x) whose tap (i, j) reads input (h, w): the padded
      // position h + p0 minus the tap's offset i * d0, over the stride.
      SmallVector<WindowIndex, 2> windows;
      for (int axis = 0; axis < 2; ++axis) {
        Value padded = nb.createOrFold<arith::AddIOp>(
            nloc, loopIndex(nb, nloc, 3 + axis),
            createIndexConstant(nb, nloc, geo.padding[axis]));
        Value tap = nb.createOrFold<arith::MulIOp>(
            nloc, loopIndex(nb, nloc, 5 + axis),
            createIndexConstant(nb, nloc, geo.dilation[axis]));
        windows.push_back(findReadingWindow(nb, nloc, padded, tap,
                                            geo.stride[axis],
                                            axis == 0 ? geo.oh : geo.ow));
      }
      Value valid =
          nb.create<arith::AndIOp>(nloc, windows[0].valid, windows[1].valid);
      Value read = nb.create<tensor::ExtractOp>(
          nloc, dcol,
          ValueRange{loopIndex(nb, nloc, 1), loopIndex(nb, nloc, 2),
                     loopIndex(nb, nloc, 5), loopIndex(nb, nloc, 6),
                     loopIndex(nb, nloc, 0), windows[0].index,
                     windows[1].index});
      Value contribution = nb.create<arith::SelectOp>(
          nloc, valid, read,
          nb.create<arith::ConstantOp>(nloc, nb.getZeroAttr(accumulatorType)));
      nb.create<linalg::YieldOp>(
          nloc,
          nb.create<arith::AddFOp>(nloc, args[1], contribution).getResult());
    };
    Value grouped =
        rewriter
            .create<linalg::GenericOp>(loc, init.getType(), window, init, maps,
                                       iteratorTypes(5, 2), body)
            .getResult(0);
    Value rounded = castTensor(rewriter, loc, grouped, elementType);
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, rounded, resultType.getShape()));
    return success();
  }
};

} // namespace

void modelc::populateConvToLinalgPatterns(RewritePatternSet &patterns) {
  patterns
      .add<Conv2dLowering, Conv2dGradWeightLowering, Conv2dGradInputLowering>(
          patterns.getContext());
}
