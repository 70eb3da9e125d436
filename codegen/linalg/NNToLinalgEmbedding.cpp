// Lowering of mdl.embedding (a row gather) and mdl.embedding_grad (a row
// scatter-add: an mdlrt.row_scatter_add with its loops over the ids).
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"
#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
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

/// embedding_grad: dTable[clamp(ids[i])] += grad[i] for each position i,
/// repeated ids adding up in position order. As a gather (each table row
/// summing the positions holding its id) this is O(V * n * D): hours for
/// GPT-2's V = 50257. Instead one mdlrt.row_scatter_add on memory: the
/// table becomes zero, then its region's loops take the n = prod(ids.shape)
/// positions in order and add each grad row to its id's row, O(V * D + n *
/// D). That is the CPU's kernel; the GPU runs the same sums with a thread
/// per (range of rows, column) that walks every position and adds those
/// whose id falls in its range (docs/codegen/gpu.md), so no kernel is
/// serial over the positions and every target adds in one order. f16/bf16
/// rows add up in an f32 table, rounded once after (one more elementwise
/// pass over the table).
struct EmbeddingGradLowering : OpConversionPattern<mlir::mdl::EmbeddingGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::EmbeddingGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    Type elementType = resultType.getElementType();
    Type accumulatorType = getComputeType(elementType);
    int64_t rows = resultType.getDimSize(0);
    int64_t width = resultType.getDimSize(1);
    int64_t count = op.getIds().getType().getNumElements();
    bool isUnsigned = hasUnsignedElements(op.getIds());

    // Read in place whatever their strides (a transposed or sliced id
    // tensor): the loops load element by element.
    Value ids = readMemref(
        rewriter, loc, reshapeTensor(rewriter, loc, adaptor.getIds(), {count}),
        /*unitInnerStride=*/false);
    Value grad = readMemref(
        rewriter, loc,
        reshapeTensor(rewriter, loc, adaptor.getGrad(), {count, width}),
        /*unitInnerStride=*/false);
    auto tableType =
        RankedTensorType::get(resultType.getShape(), accumulatorType);
    Value table = allocate(rewriter, loc, tableType);
    auto scatter = rewriter.create<mlir::mdlrt::RowScatterAddOp>(
        loc, isUnsigned ? rewriter.getUnitAttr() : nullptr, ids, grad, table);
    // Each element sums at most n terms (kernelcheck's tolerance).
    scatter->setAttr("mdl.reduction", rewriter.getI64IntegerAttr(count));
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&scatter.getBody().emplaceBlock());
      Value zero = createScalarConstant(rewriter, loc, accumulatorType, 0.0);
      auto forRange = [&](OpBuilder &b, int64_t size,
                          function_ref<void(OpBuilder &, Value)> body) {
        b.create<scf::ForOp>(
            loc, createIndexConstant(b, loc, 0),
            createIndexConstant(b, loc, size), createIndexConstant(b, loc, 1),
            ValueRange{}, [&](OpBuilder &nb, Location, Value iv, ValueRange) {
              body(nb, iv);
              nb.create<scf::YieldOp>(loc);
            });
      };
      forRange(rewriter, rows, [&](OpBuilder &b, Value row) {
        forRange(b, width, [&](OpBuilder &nb, Value column) {
          nb.create<memref::StoreOp>(loc, zero, table, ValueRange{row, column});
        });
      });
      forRange(rewriter, count, [&](OpBuilder &b, Value position) {
        Value id = b.create<memref::LoadOp>(loc, ids, position);
        Value row =
            clampIndex(b, loc, castToIndex(b, loc, id, isUnsigned), rows);
        forRange(b, width, [&](OpBuilder &nb, Value column) {
          Value term =
              extendToComputeType(nb, loc,
                                  nb.create<memref::LoadOp>(
                                      loc, grad, ValueRange{position, column}));
          Value sum =
              nb.create<memref::LoadOp>(loc, table, ValueRange{row, column});
          nb.create<memref::StoreOp>(loc,
                                     nb.create<arith::AddFOp>(loc, sum, term),
                                     table, ValueRange{row, column});
        });
      });
    }
    rewriter.replaceOp(op, castTensor(rewriter, loc,
                                      asResult(rewriter, loc, table, tableType),
                                      elementType));
    return success();
  }
};

} // namespace

void modelc::populateEmbeddingToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<EmbeddingLowering, EmbeddingGradLowering>(patterns.getContext());
}
