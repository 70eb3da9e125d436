// Lowering of the mdl shape ops (reshape, transpose, concat, split,
// broadcast_to, arange, slice, slice_grad) to tensor views and slices,
// linalg.transpose and copying linalg.generics.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;
using namespace mlir::mdl;

namespace {

/// Static offsets, sizes or strides for the tensor slice ops.
SmallVector<OpFoldResult> getIndexAttrs(OpBuilder &b,
                                        ArrayRef<int64_t> values) {
  return llvm::map_to_vector(values, [&](int64_t value) -> OpFoldResult {
    return b.getIndexAttr(value);
  });
}

/// Row-major reinterpretation: collapse_shape/expand_shape, which bufferize
/// to views of the same buffer.
struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       reshapeTensor(rewriter, op.getLoc(), adaptor.getInput(),
                                     op.getType().getShape()));
    return success();
  }
};

/// Result axis i is input axis perm[i], as linalg.transpose's permutation.
struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int64_t> perm = op.getPerm();
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    Value init = createEmptyTensor(rewriter, op.getLoc(),
                                   getSignlessTensorType(op.getType()));
    auto transpose = rewriter.create<linalg::TransposeOp>(
        op.getLoc(), adaptor.getInput(), init, perm);
    rewriter.replaceOp(op, transpose.getResult());
    return success();
  }
};

/// Each operand copied into its place of a fresh tensor.
struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange inputs = adaptor.getInputs();
    if (inputs.size() == 1) {
      rewriter.replaceOp(op, inputs.front());
      return success();
    }
    Location loc = op.getLoc();
    auto resultType = getSignlessTensorType(op.getType());
    int64_t axis = op.getAxis();
    Value result = createEmptyTensor(rewriter, loc, resultType);
    SmallVector<int64_t> offsets(resultType.getRank(), 0);
    SmallVector<int64_t> strides(resultType.getRank(), 1);
    for (Value input : inputs) {
      ArrayRef<int64_t> sizes =
          cast<RankedTensorType>(input.getType()).getShape();
      result = rewriter.create<tensor::InsertSliceOp>(
          loc, input, result, getIndexAttrs(rewriter, offsets),
          getIndexAttrs(rewriter, sizes), getIndexAttrs(rewriter, strides));
      offsets[axis] += sizes[axis];
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Equal consecutive parts along the axis (torch.chunk), each a slice.
struct SplitLowering : OpConversionPattern<SplitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    int64_t rank = op.getInput().getType().getRank();
    SmallVector<int64_t> offsets(rank, 0);
    SmallVector<int64_t> strides(rank, 1);
    SmallVector<Value> parts;
    for (Value result : op.getResults()) {
      auto partType = getSignlessTensorType(result.getType());
      parts.push_back(rewriter.create<tensor::ExtractSliceOp>(
          loc, partType, adaptor.getInput(), getIndexAttrs(rewriter, offsets),
          getIndexAttrs(rewriter, partType.getShape()),
          getIndexAttrs(rewriter, strides)));
      offsets[axis] += partType.getDimSize(axis);
    }
    rewriter.replaceOp(op, parts);
    return success();
  }
};

/// A copy that reads size-1 and missing axes at index 0 (NumPy rules).
struct BroadcastToLowering : OpConversionPattern<BroadcastToOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BroadcastToOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = getSignlessTensorType(op.getType());
    if (resultType == adaptor.getInput().getType()) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    rewriter.replaceOp(
        op,
        createElementwiseOp(
            rewriter, op.getLoc(), resultType, adaptor.getInput(),
            [](OpBuilder &, Location, ValueRange args) { return args[0]; }));
    return success();
  }
};

/// 0 .. n-1 (i32 or i64): each element is its loop index.
struct ArangeLowering : OpConversionPattern<ArangeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ArangeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    rewriter.replaceOp(
        op, createElementwiseOp(
                rewriter, op.getLoc(), type, ValueRange(),
                [&](OpBuilder &b, Location loc, ValueRange) -> Value {
                  Value index = b.create<linalg::IndexOp>(loc, 0);
                  return b.create<arith::IndexCastOp>(
                      loc, type.getElementType(), index);
                }));
    return success();
  }
};

/// A strided box: tensor.extract_slice with the op's starts and strides,
/// which bufferizes to a strided view (no copy).
struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = getSignlessTensorType(op.getType());
    if (resultType == adaptor.getInput().getType()) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, resultType, adaptor.getInput(),
        getIndexAttrs(rewriter, op.getStarts()),
        getIndexAttrs(rewriter, resultType.getShape()),
        getIndexAttrs(rewriter, op.getStrides()));
    return success();
  }
};

/// The adjoint of a slice: zeros with `grad` written at the sliced
/// positions (same starts and strides as the forward extract_slice).
struct SliceGradLowering : OpConversionPattern<SliceGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SliceGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value grad = adaptor.getGrad();
    if (grad.getType() == type) {
      rewriter.replaceOp(op, grad);
      return success();
    }
    Value zeros = createFilledTensor(
        rewriter, loc, type.getShape(),
        createScalarConstant(rewriter, loc, type.getElementType(), 0));
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, grad, zeros, getIndexAttrs(rewriter, op.getStarts()),
        getIndexAttrs(rewriter,
                      cast<RankedTensorType>(grad.getType()).getShape()),
        getIndexAttrs(rewriter, op.getStrides()));
    return success();
  }
};

} // namespace

void modelc::populateShapeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, TransposeLowering, ConcatLowering,
               SplitLowering, BroadcastToLowering, ArangeLowering,
               SliceLowering, SliceGradLowering>(patterns.getContext());
}
