// Lowering of mdl.embedding (a row gather) and mdl.embedding_grad (a row
// scatter-add, as an scf.for over the ids updating the table in place).
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// embedding: result[ids.., d] = table[clamp(ids[ids..]), d], one generic
/// over the result reading the table with tensor.extract. PyTorch raises on
/// an id outside [0, V); a kernel cannot, so ids are clamped into range
/// (embedding_grad clamps the same way, keeping the pair consistent).
struct EmbeddingLowering : OpConversionPattern<mlir::mdl::EmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::EmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    unsigned rank = resultType.getRank();
    Value table = adaptor.getTable();
    int64_t rows = op.getTable().getType().getDimSize(0);
    bool isUnsigned = hasUnsignedElements(op.getIds());

    Value init = createEmptyTensor(rewriter, loc, resultType.getShape(),
                                   resultType.getElementType());
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        op, resultType, adaptor.getIds(), init,
        ArrayRef<AffineMap>{leadingDimsMap(ctx, rank, rank - 1),
                            rewriter.getMultiDimIdentityMap(rank)},
        iteratorTypes(rank, 0), [&](OpBuilder &b, Location l, ValueRange args) {
          Value row =
              clampIndex(b, l, castToIndex(b, l, args[0], isUnsigned), rows);
          Value element = b.create<tensor::ExtractOp>(
              l, table, ValueRange{row, loopIndex(b, l, rank - 1)});
          b.create<linalg::YieldOp>(l, element);
        });
    return success();
  }
};

/// embedding_grad: dTable[clamp(ids[i])] += grad[i] for each position i.
/// As a gather (each table row summing the positions holding its id) this
/// is O(V * n * D): hours for GPT-2's V = 50257. Instead an scf.for over
/// the n = prod(ids.shape) positions carries the table as a tensor and
/// adds one grad row per step through tensor.extract_slice ->
/// linalg.generic -> tensor.insert_slice at the same offset, which one-shot
/// bufferization performs in place: O(V * D) to zero the table plus
/// O(n * D) for the adds, sequential in n (repeated ids must accumulate).
/// f16/bf16 rows add up in an f32 table, rounded once after the loop (one
/// more elementwise pass over the table).
struct EmbeddingGradLowering : OpConversionPattern<mlir::mdl::EmbeddingGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::EmbeddingGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    Type elementType = resultType.getElementType();
    Type accumulatorType = getComputeType(elementType);
    int64_t rows = resultType.getDimSize(0);
    int64_t width = resultType.getDimSize(1);
    int64_t count = op.getIds().getType().getNumElements();
    bool isUnsigned = hasUnsignedElements(op.getIds());

    Value ids = reshapeTensor(rewriter, loc, adaptor.getIds(), {count});
    Value grad =
        reshapeTensor(rewriter, loc, adaptor.getGrad(), {count, width});
    Value table =
        createZeroTensor(rewriter, loc, resultType.getShape(), accumulatorType);
    auto rowType = RankedTensorType::get({width}, elementType);
    auto accumulatorRowType = RankedTensorType::get({width}, accumulatorType);
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1),
                                       rewriter.getIndexAttr(width)};
    SmallVector<OpFoldResult> strides = {rewriter.getIndexAttr(1),
                                         rewriter.getIndexAttr(1)};
    AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);

    auto loop = rewriter.create<scf::ForOp>(
        loc, createIndexConstant(rewriter, loc, 0),
        createIndexConstant(rewriter, loc, count),
        createIndexConstant(rewriter, loc, 1), ValueRange{table},
        [&](OpBuilder &b, Location l, Value position, ValueRange carried) {
          Value id = b.create<tensor::ExtractOp>(l, ids, position);
          Value row = clampIndex(b, l, castToIndex(b, l, id, isUnsigned), rows);
          SmallVector<OpFoldResult> target = {row, b.getIndexAttr(0)};
          SmallVector<OpFoldResult> source = {position, b.getIndexAttr(0)};
          Value accumulator = b.create<tensor::ExtractSliceOp>(
              l, accumulatorRowType, carried[0], target, sizes, strides);
          Value update = b.create<tensor::ExtractSliceOp>(
              l, rowType, grad, source, sizes, strides);
          Value sum =
              b.create<linalg::GenericOp>(
                   l, accumulatorRowType, update, accumulator,
                   ArrayRef<AffineMap>{identity, identity}, iteratorTypes(1, 0),
                   [](OpBuilder &nb, Location nl, ValueRange args) {
                     Value element = extendToComputeType(nb, nl, args[0]);
                     nb.create<linalg::YieldOp>(
                         nl, nb.create<arith::AddFOp>(nl, args[1], element)
                                 .getResult());
                   })
                  .getResult(0);
          Value updated = b.create<tensor::InsertSliceOp>(
              l, sum, carried[0], target, sizes, strides);
          b.create<scf::YieldOp>(l, updated);
        });
    rewriter.replaceOp(
        op, castTensor(rewriter, loc, loop.getResult(0), elementType));
    return success();
  }
};

} // namespace

void modelc::populateEmbeddingToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<EmbeddingLowering, EmbeddingGradLowering>(patterns.getContext());
}
