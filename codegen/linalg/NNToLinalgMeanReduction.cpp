// Lowering of mdl.mse_loss and mdl.accuracy: means over every position,
// reduced into a 0-d tensor.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// mse_loss = sum((input - target)^2) / numel, PyTorch's mean reduction.
/// Squares are computed in getComputeType of the element type (f32 for
/// f16/bf16) and summed in f64 (PyTorch's cascade summation keeps about
/// that much of a long f32 sum); the mean is rounded once to the element
/// type.
struct MseLossLowering : OpConversionPattern<mlir::mdl::MseLossOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::MseLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    Type elementType = resultType.getElementType();
    Type f64 = rewriter.getF64Type();
    RankedTensorType inputType = op.getInput().getType();
    unsigned rank = inputType.getRank();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap total = AffineMap::get(rank, 0, {}, rewriter.getContext());
    Value sum = rewriter
                    .create<linalg::GenericOp>(
                        loc, RankedTensorType::get({}, f64),
                        ValueRange{adaptor.getInput(), adaptor.getTarget()},
                        createZeroTensor(rewriter, loc, {}, f64),
                        ArrayRef<AffineMap>{identity, identity, total},
                        iteratorTypes(0, rank),
                        [&](OpBuilder &b, Location l, ValueRange args) {
                          Value difference = b.create<arith::SubFOp>(
                              l, extendToComputeType(b, l, args[0]),
                              extendToComputeType(b, l, args[1]));
                          Value square = b.create<arith::MulFOp>(l, difference,
                                                                 difference);
                          b.create<linalg::YieldOp>(
                              l, b.create<arith::AddFOp>(
                                      l, args[2], castFloat(b, l, square, f64))
                                     .getResult());
                        })
                    .getResult(0);
    double count = static_cast<double>(inputType.getNumElements());
    rewriter.replaceOp(
        op, createScalarGeneric(
                rewriter, loc, resultType, sum,
                [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                  Value mean = b.create<arith::DivFOp>(
                      l, args[0], createScalarConstant(b, l, f64, count));
                  return castFloat(b, l, mean, elementType);
                }));
    return success();
  }
};

/// accuracy = (number of rows whose argmax equals the label) / rows, as
/// f32. argmax is torch.argmax's: the first maximum on ties, and NaN counts
/// as the maximum (its first occurrence). Hits are counted in i64 and the
/// fraction divided in f64, so the result is the f32 nearest the exact one.
struct AccuracyLowering : OpConversionPattern<mlir::mdl::AccuracyOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::AccuracyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType logitsType = op.getLogits().getType();
    Type elementType = logitsType.getElementType();
    unsigned rank = logitsType.getRank();
    ArrayRef<int64_t> rowShape = logitsType.getShape().drop_back();
    bool isUnsigned = hasUnsignedElements(op.getLabels());
    Type i64 = rewriter.getI64Type();

    // Per row: the running maximum and its class index.
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap row = leadingDimsMap(ctx, rank, rank - 1);
    Value lowest = createLowestValue(rewriter, loc, elementType);
    auto argmax = rewriter.create<linalg::GenericOp>(
        loc,
        TypeRange{RankedTensorType::get(rowShape, elementType),
                  RankedTensorType::get(rowShape, i64)},
        adaptor.getLogits(),
        ValueRange{createFilledTensor(rewriter, loc, rowShape, lowest),
                   createZeroTensor(rewriter, loc, rowShape, i64)},
        ArrayRef<AffineMap>{identity, row, row}, iteratorTypes(rank - 1, 1),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value element = args[0], best = args[1];
          Value greater = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT,
                                                  element, best);
          Value isNaN = b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO,
                                                element, element);
          Value bestIsNumber =
              b.create<arith::CmpFOp>(l, arith::CmpFPredicate::ORD, best, best);
          Value take = b.create<arith::OrIOp>(
              l, greater, b.create<arith::AndIOp>(l, isNaN, bestIsNumber));
          Value column =
              b.create<arith::IndexCastOp>(l, i64, loopIndex(b, l, rank - 1));
          b.create<linalg::YieldOp>(
              l,
              ValueRange{b.create<arith::SelectOp>(l, take, element, best),
                         b.create<arith::SelectOp>(l, take, column, args[2])});
        });

    // Hits over all rows.
    AffineMap rows = rewriter.getMultiDimIdentityMap(rank - 1);
    Value hits =
        rewriter
            .create<linalg::GenericOp>(
                loc, RankedTensorType::get({}, i64),
                ValueRange{argmax.getResult(1), adaptor.getLabels()},
                createZeroTensor(rewriter, loc, {}, i64),
                ArrayRef<AffineMap>{rows, rows,
                                    AffineMap::get(rank - 1, 0, {}, ctx)},
                iteratorTypes(0, rank - 1),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value label = extendToI64(b, l, args[1], isUnsigned);
                  Value hit = b.create<arith::CmpIOp>(
                      l, arith::CmpIPredicate::eq, args[0], label);
                  Value one = b.create<arith::ExtUIOp>(l, i64, hit);
                  b.create<linalg::YieldOp>(
                      l, b.create<arith::AddIOp>(l, args[2], one).getResult());
                })
            .getResult(0);

    RankedTensorType resultType = getSignlessTensorType(op.getType());
    double count = static_cast<double>(ShapedType::getNumElements(rowShape));
    rewriter.replaceOp(
        op, createScalarGeneric(
                rewriter, loc, resultType, hits,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Type f64 = b.getF64Type();
                  Value exact = b.create<arith::DivFOp>(
                      l, b.create<arith::SIToFPOp>(l, f64, args[0]),
                      createScalarConstant(b, l, f64, count));
                  return castFloat(b, l, exact, resultType.getElementType());
                }));
    return success();
  }
};

} // namespace

void modelc::populateMeanReductionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<MseLossLowering, AccuracyLowering>(patterns.getContext());
}
