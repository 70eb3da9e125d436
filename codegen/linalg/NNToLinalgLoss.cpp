// Lowering of mdl.cross_entropy and mdl.cross_entropy_grad: a stable
// log-sum-exp per row over the class axis, then reductions over the rows.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// Logits `[rows.., classes]` and the maps that a generic over them uses.
struct ClassAxisLayout {
  unsigned rank;
  ArrayRef<int64_t> rowShape;
  int64_t classes;
  AffineMap identity, row, scalar;

  ClassAxisLayout(OpBuilder &b, RankedTensorType logits)
      : rank(logits.getRank()), rowShape(logits.getShape().drop_back()),
        classes(logits.getShape().back()) {
    MLIRContext *ctx = b.getContext();
    identity = b.getMultiDimIdentityMap(rank);
    row = leadingDimsMap(ctx, rank, rank - 1);
    scalar = AffineMap::get(rank, 0, {}, ctx);
  }
};

/// Per row, the maximum logit m (in the logits' type: exact) and
/// sum_c exp(x_c - m) (in getComputeType: f16/bf16 logits are extended and
/// summed in f32): the stable form of log-sum-exp, log(sum) + m.
std::pair<Value, Value> createRowLogSumExp(OpBuilder &b, Location loc,
                                           Value logits,
                                           const ClassAxisLayout &layout) {
  Type elementType = getElementTypeOrSelf(logits.getType());
  Type computeType = getComputeType(elementType);
  auto rowType = RankedTensorType::get(layout.rowShape, elementType);
  Value lowest = createLowestValue(b, loc, elementType);
  Value max =
      b.create<linalg::GenericOp>(
           loc, rowType, logits,
           createFilledTensor(b, loc, layout.rowShape, lowest),
           ArrayRef<AffineMap>{layout.identity, layout.row},
           iteratorTypes(layout.rank - 1, 1),
           [](OpBuilder &nb, Location l, ValueRange args) {
             nb.create<linalg::YieldOp>(
                 l,
                 nb.create<arith::MaximumFOp>(l, args[1], args[0]).getResult());
           })
          .getResult(0);
  Value sum =
      b.create<linalg::GenericOp>(
           loc, RankedTensorType::get(layout.rowShape, computeType),
           ValueRange{logits, max},
           createZeroTensor(b, loc, layout.rowShape, computeType),
           ArrayRef<AffineMap>{layout.identity, layout.row, layout.row},
           iteratorTypes(layout.rank - 1, 1),
           [](OpBuilder &nb, Location l, ValueRange args) {
             Value shifted = nb.create<arith::SubFOp>(
                 l, extendToComputeType(nb, l, args[0]),
                 extendToComputeType(nb, l, args[1]));
             Value exp = nb.create<math::ExpOp>(l, shifted);
             nb.create<linalg::YieldOp>(
                 l, nb.create<arith::AddFOp>(l, args[2], exp).getResult());
           })
          .getResult(0);
  return {max, sum};
}

/// Whether `label` (as stored) is not `ignoreIndex`, compared in i64.
Value isCounted(OpBuilder &b, Location loc, Value label, bool isUnsigned,
                int64_t ignoreIndex) {
  Value ignored = b.create<arith::ConstantIntOp>(loc, ignoreIndex, 64);
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                 extendToI64(b, loc, label, isUnsigned),
                                 ignored);
}

/// The row indices of the current loop point (all dims but the last of
/// `rank`), followed by `last`.
SmallVector<Value> rowIndices(OpBuilder &b, Location loc, unsigned rowRank,
                              Value last) {
  SmallVector<Value> indices;
  for (unsigned dim = 0; dim < rowRank; ++dim)
    indices.push_back(loopIndex(b, loc, dim));
  indices.push_back(last);
  return indices;
}

/// cross_entropy = sum over counted rows of (log(sum) + m - x[label]) /
/// the number of counted rows (NaN when none, as PyTorch). Per-row terms
/// are computed in getComputeType of the logits' type (f32 for f16/bf16);
/// the sum and the count accumulate in f64 (a sequential f32 sum over B*T
/// rows would lose digits that PyTorch's cascade summation keeps) and the
/// mean is rounded to the f32 result.
/// PyTorch raises on a label outside [0, C) that is not ignore_index; here
/// it is clamped into range.
struct CrossEntropyLowering : OpConversionPattern<mlir::mdl::CrossEntropyOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::CrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logits = adaptor.getLogits();
    auto logitsType = cast<RankedTensorType>(logits.getType());
    ClassAxisLayout layout(rewriter, logitsType);
    unsigned rowRank = layout.rank - 1;
    bool isUnsigned = hasUnsignedElements(op.getLabels());
    int64_t ignoreIndex = op.getIgnoreIndex();
    auto [max, sum] = createRowLogSumExp(rewriter, loc, logits, layout);

    // Loops over rows, all reductions into two 0-d accumulators.
    MLIRContext *ctx = rewriter.getContext();
    Type f64 = rewriter.getF64Type();
    AffineMap rows = rewriter.getMultiDimIdentityMap(rowRank);
    AffineMap total = AffineMap::get(rowRank, 0, {}, ctx);
    auto scalarType = RankedTensorType::get({}, f64);
    auto accumulated = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{scalarType, scalarType},
        ValueRange{adaptor.getLabels(), max, sum},
        ValueRange{createZeroTensor(rewriter, loc, {}, f64),
                   createZeroTensor(rewriter, loc, {}, f64)},
        ArrayRef<AffineMap>{rows, rows, rows, total, total},
        iteratorTypes(0, rowRank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value label = args[0];
          Value counted = isCounted(b, l, label, isUnsigned, ignoreIndex);
          Value column = clampIndex(b, l, castToIndex(b, l, label, isUnsigned),
                                    layout.classes);
          Value picked = extendToComputeType(
              b, l,
              b.create<tensor::ExtractOp>(l, logits,
                                          rowIndices(b, l, rowRank, column)));
          Value logSumExp =
              b.create<arith::AddFOp>(l, b.create<math::LogOp>(l, args[2]),
                                      extendToComputeType(b, l, args[1]));
          Value loss = castFloat(
              b, l, b.create<arith::SubFOp>(l, logSumExp, picked), f64);
          Value zero = createScalarConstant(b, l, f64, 0);
          Value one = createScalarConstant(b, l, f64, 1);
          Value lossSum = b.create<arith::AddFOp>(
              l, args[3], b.create<arith::SelectOp>(l, counted, loss, zero));
          Value count = b.create<arith::AddFOp>(
              l, args[4], b.create<arith::SelectOp>(l, counted, one, zero));
          b.create<linalg::YieldOp>(l, ValueRange{lossSum, count});
        });

    auto resultType = getSignlessTensorType(op.getType());
    rewriter.replaceOp(
        op, createScalarGeneric(
                rewriter, loc, resultType, accumulated.getResults(),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value mean = b.create<arith::DivFOp>(l, args[0], args[1]);
                  return castFloat(b, l, mean, resultType.getElementType());
                }));
    return success();
  }
};

/// cross_entropy_grad[r, c] = (softmax(x[r])[c] - (c == label[r])) *
/// grad / count for counted rows, 0 for ignored ones, with `count` the
/// number of counted rows and the label clamped as in the forward.
/// f16/bf16 compute in f32 (scale included) and round once.
struct CrossEntropyGradLowering
    : OpConversionPattern<mlir::mdl::CrossEntropyGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::CrossEntropyGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    Type elementType = resultType.getElementType();
    Type computeType = getComputeType(elementType);
    Value logits = adaptor.getLogits();
    ClassAxisLayout layout(rewriter, resultType);
    unsigned rowRank = layout.rank - 1;
    bool isUnsigned = hasUnsignedElements(op.getLabels());
    int64_t ignoreIndex = op.getIgnoreIndex();
    auto [max, sum] = createRowLogSumExp(rewriter, loc, logits, layout);

    // scale = grad / count, with count the number of counted rows (exact
    // in f64, unlike in f16 past 2048), once as a 0-d tensor.
    Type f64 = rewriter.getF64Type();
    AffineMap rows = rewriter.getMultiDimIdentityMap(rowRank);
    Value count =
        rewriter
            .create<linalg::GenericOp>(
                loc, RankedTensorType::get({}, f64), adaptor.getLabels(),
                createZeroTensor(rewriter, loc, {}, f64),
                ArrayRef<AffineMap>{rows, AffineMap::get(rowRank, 0, {}, ctx)},
                iteratorTypes(0, rowRank),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value counted =
                      isCounted(b, l, args[0], isUnsigned, ignoreIndex);
                  Value one = createScalarConstant(b, l, f64, 1);
                  Value zero = createScalarConstant(b, l, f64, 0);
                  b.create<linalg::YieldOp>(
                      l, b.create<arith::AddFOp>(
                              l, args[1],
                              b.create<arith::SelectOp>(l, counted, one, zero))
                             .getResult());
                })
            .getResult(0);
    Value scale = createScalarGeneric(
        rewriter, loc, RankedTensorType::get({}, computeType),
        ValueRange{adaptor.getGrad(), count},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value quotient = b.create<arith::DivFOp>(
              l, castFloat(b, l, args[0], f64), args[1]);
          return castFloat(b, l, quotient, computeType);
        });

    Value init =
        createEmptyTensor(rewriter, loc, resultType.getShape(), elementType);
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        op, resultType,
        ValueRange{logits, max, sum, adaptor.getLabels(), scale}, init,
        ArrayRef<AffineMap>{layout.identity, layout.row, layout.row, layout.row,
                            layout.scalar, layout.identity},
        iteratorTypes(layout.rank, 0),
        [&](OpBuilder &b, Location l, ValueRange args) {
          // Logits and row maxima extended; sum and scale are f32 already.
          auto gradient = [&](OpBuilder &wb, Location wl, ValueRange wide) {
            Value label = wide[3];
            Value probability = wb.create<arith::DivFOp>(
                wl,
                wb.create<math::ExpOp>(
                    wl, wb.create<arith::SubFOp>(wl, wide[0], wide[1])),
                wide[2]);
            Value column = clampIndex(
                wb, wl, castToIndex(wb, wl, label, isUnsigned), layout.classes);
            Value isLabel =
                wb.create<arith::CmpIOp>(wl, arith::CmpIPredicate::eq, column,
                                         loopIndex(wb, wl, layout.rank - 1));
            Value zero = createScalarConstant(wb, wl, computeType, 0);
            Value oneHot = wb.create<arith::SelectOp>(
                wl, isLabel, createScalarConstant(wb, wl, computeType, 1),
                zero);
            Value scaled = wb.create<arith::MulFOp>(
                wl, wb.create<arith::SubFOp>(wl, probability, oneHot), wide[4]);
            Value counted = isCounted(wb, wl, label, isUnsigned, ignoreIndex);
            return wb.create<arith::SelectOp>(wl, counted, scaled, zero)
                .getResult();
          };
          b.create<linalg::YieldOp>(
              l,
              computeInOpmath(b, l, elementType, args.drop_back(), gradient));
        });
    return success();
  }
};

} // namespace

void modelc::populateLossToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<CrossEntropyLowering, CrossEntropyGradLowering>(
      patterns.getContext());
}
