// Lowering of the mdl storage ops: mdl.load, mdl.param_ref and mdl.store
// become mdlrt.buffer plus bufferization.to_tensor /
// materialize_in_destination; mdl.all_reduce becomes mdlrt.all_reduce on
// the buffers' memrefs; mdl.dropout_mask becomes a hashing linalg.generic.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"
#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// The arena memory of the buffer or parameter `name` of mdl type
/// `tensorType`, as an identity-layout memref with signless elements.
Value createBuffer(OpBuilder &b, Location loc, FlatSymbolRefAttr name,
                   Type tensorType) {
  RankedTensorType type = getSignlessTensorType(tensorType);
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return b.create<mlir::mdlrt::BufferOp>(loc, memrefType, name);
}

/// mdl.load and mdl.param_ref: the buffer's current contents as a tensor.
/// `restrict` tells one-shot bufferization this is the only tensor of that
/// memory (the pass keeps one per symbol and function); not `writable`, so
/// no temporary is ever computed in place into persistent memory.
template <typename OpTy> struct ReadLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value buffer =
        createBuffer(rewriter, op.getLoc(), op.getNameAttr(), op.getType());
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, getSignlessTensorType(op.getType()), buffer, /*restrict=*/true,
        /*writable=*/false);
    return success();
  }
};

/// mdl.store: the value materialised in the buffer (a copy after
/// bufferization). The pass drops `restrict` where the function also reads
/// the symbol (see LowerToLinalg.cpp).
struct StoreLowering : OpConversionPattern<mlir::mdl::StoreOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value buffer = createBuffer(rewriter, op.getLoc(), op.getNameAttr(),
                                op.getValue().getType());
    rewriter.create<bufferization::MaterializeInDestinationOp>(
        op.getLoc(), TypeRange(), adaptor.getValue(), buffer,
        /*restrict=*/true, /*writable=*/true);
    rewriter.eraseOp(op);
    return success();
  }
};

/// mdl.all_reduce: mdlrt.all_reduce on the memory of the named buffers.
/// It reads and writes them in place, after the stores before it and
/// before the loads after it (the op's memory effects keep that order).
struct AllReduceLowering : OpConversionPattern<mlir::mdl::AllReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::AllReduceOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> buffers;
    for (Attribute attr : op.getNames()) {
      auto name = cast<FlatSymbolRefAttr>(attr);
      auto buffer =
          SymbolTable::lookupNearestSymbolFrom<mlir::mdl::BufferOp>(op, name);
      if (!buffer)
        return rewriter.notifyMatchFailure(op, "a bucket names no buffer");
      buffers.push_back(
          createBuffer(rewriter, op.getLoc(), name, buffer.getType()));
    }
    rewriter.replaceOpWithNewOp<mlir::mdlrt::AllReduceOp>(op, buffers,
                                                          op.getBucket());
    return success();
  }
};

/// mdl.dropout_mask: for element i (row-major linear index),
///   key = mix64(mix64(seed ^ id * 0x9E3779B97F4A7C15) ^ counter)
///   h = mix64(key ^ i), u = (h >> 11) * 2^-53 in [0, 1)
///   mask = u < p ? 0 : 1 / (1 - p)
/// with all words u64 (wrapping multiply) and seed, counter converted from
/// f64 by fptoui. The key is computed once, outside the loop; the GPU
/// backend must reproduce this exactly (docs/codegen/lower-to-linalg.md).
struct DropoutMaskLowering : OpConversionPattern<mlir::mdl::DropoutMaskOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::DropoutMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value key = createDropoutKey(rewriter, loc, adaptor.getSeed(),
                                 adaptor.getCounter(), op.getId());
    double p = op.getP().convertToDouble();
    Value mask = createElementwiseOp(
        rewriter, loc, type, ValueRange(),
        [&](OpBuilder &b, Location nloc, ValueRange) -> Value {
          return createDropoutFactor(
              b, nloc, key, createLinearIndex(b, nloc, type.getShape()), p,
              type.getElementType());
        });
    rewriter.replaceOp(op, mask);
    return success();
  }
};

} // namespace

void modelc::populateStorageToLinalgPatterns(RewritePatternSet &patterns) {
  patterns
      .add<ReadLowering<mlir::mdl::LoadOp>, ReadLowering<mlir::mdl::ParamRefOp>,
           StoreLowering, AllReduceLowering, DropoutMaskLowering>(patterns.getContext());
}
