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

/// SplitMix64's finaliser: a bijection of 64-bit words that mixes every
/// input bit into every output bit.
Value mix64(OpBuilder &b, Location loc, Value x) {
  auto constant = [&](uint64_t value) -> Value {
    return b.create<arith::ConstantOp>(
        loc, b.getI64IntegerAttr(static_cast<int64_t>(value)));
  };
  auto xorShift = [&](Value v, uint64_t shift) -> Value {
    return b.create<arith::XOrIOp>(
        loc, v, b.create<arith::ShRUIOp>(loc, v, constant(shift)));
  };
  x = xorShift(x, 30);
  x = b.create<arith::MulIOp>(loc, x, constant(0xBF58476D1CE4E5B9ULL));
  x = xorShift(x, 27);
  x = b.create<arith::MulIOp>(loc, x, constant(0x94D049BB133111EBULL));
  return xorShift(x, 31);
}

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
    Type i64 = rewriter.getI64Type();
    auto readWord = [&](Value scalarTensor) -> Value {
      Value value =
          rewriter.create<tensor::ExtractOp>(loc, scalarTensor, ValueRange());
      return rewriter.create<arith::FPToUIOp>(loc, i64, value);
    };
    Value seed = readWord(adaptor.getSeed());
    Value counter = readWord(adaptor.getCounter());
    // The salt tells the sites apart; the kernels take it as an argument,
    // so the mask of every site with the same shape is one kernel.
    uint64_t salt = static_cast<uint64_t>(op.getId()) * 0x9E3779B97F4A7C15ULL;
    Value saltValue = rewriter.create<mlir::mdlrt::LaunchConstantOp>(
        loc, rewriter.getI64Type(),
        rewriter.getI64IntegerAttr(static_cast<int64_t>(salt)));
    Value key = mix64(rewriter, loc,
                      rewriter.create<arith::XOrIOp>(loc, seed, saltValue));
    key =
        mix64(rewriter, loc, rewriter.create<arith::XOrIOp>(loc, key, counter));

    double p = op.getP().convertToDouble();
    Type element = type.getElementType();
    Value mask = createElementwiseOp(
        rewriter, loc, type, ValueRange(),
        [&](OpBuilder &b, Location nloc, ValueRange) -> Value {
          Value index = createLinearIndex(b, nloc, type.getShape());
          Value hash =
              mix64(b, nloc, b.create<arith::XOrIOp>(nloc, key, index));
          Value top53 = b.create<arith::ShRUIOp>(
              nloc, hash, createScalarConstant(b, nloc, i64, 11));
          Value top53AsFloat =
              b.create<arith::UIToFPOp>(nloc, b.getF64Type(), top53);
          Value uniform = b.create<arith::MulFOp>(
              nloc, top53AsFloat,
              createScalarConstant(b, nloc, b.getF64Type(), 0x1.0p-53));
          Value dropped = b.create<arith::CmpFOp>(
              nloc, arith::CmpFPredicate::OLT, uniform,
              createScalarConstant(b, nloc, b.getF64Type(), p));
          Value zero = createScalarConstant(b, nloc, element, 0);
          Value scale = createScalarConstant(b, nloc, element, 1.0 / (1.0 - p));
          return b.create<arith::SelectOp>(nloc, dropped, zero, scale);
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
