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

/// The most partial sums the second stage of a sum over rows adds in one
/// serial pass (2 x 2,048 f64 values: 32 KiB), and the fewest rows a chunk
/// of the first stage sums.
constexpr int64_t kMaxRowPartials = 2048;
constexpr int64_t kMinChunkRows = 8;

/// Rows per chunk of a two-stage sum over `rows` rows: 1 (one stage) for at
/// most 256 rows, else the smallest divisor of `rows` of at least
/// kMinChunkRows that leaves at most kMaxRowPartials chunks (16,384 rows:
/// 2,048 chunks of 8; 1,024 rows: 128 chunks of 8).
int64_t getRowChunk(int64_t rows) {
  if (rows <= 256)
    return 1;
  int64_t least = std::max<int64_t>(
      kMinChunkRows, (rows + kMaxRowPartials - 1) / kMaxRowPartials);
  for (int64_t chunk = least; chunk < rows; ++chunk)
    if (rows % chunk == 0)
      return chunk;
  return rows;
}

/// The terms of one row, from the row inputs' elements and the row's
/// coordinates in `rowShape`.
using RowTermsFn = function_ref<SmallVector<Value>(
    OpBuilder &, Location, ValueRange, ArrayRef<Value>)>;

/// 0-d f64 sums over all rows (`rowShape`) of each of the `count` terms
/// that `terms` computes per row from the elements of `rowInputs` (each of
/// `rowShape`). Up to 256 rows in one generic (rows in order); more in two
/// stages of a fixed order, so that no kernel runs serially
/// over them all: the rows in chunks of getRowChunk, a partial sum per
/// chunk (one thread each on the GPU), then the partial sums in order.
SmallVector<Value> sumOverRows(OpBuilder &b, Location loc, ValueRange rowInputs,
                               ArrayRef<int64_t> rowShape, unsigned count,
                               RowTermsFn terms) {
  MLIRContext *ctx = b.getContext();
  Type f64 = b.getF64Type();
  unsigned rowRank = rowShape.size();
  int64_t rows = 1;
  for (int64_t size : rowShape)
    rows *= size;
  int64_t chunk = getRowChunk(rows), chunks = rows / chunk;
  auto accumulate = [&](OpBuilder &nb, Location l, ValueRange accumulators,
                        ValueRange values) {
    SmallVector<Value> sums;
    for (auto [accumulator, value] : llvm::zip(accumulators, values))
      sums.push_back(nb.create<arith::AddFOp>(l, accumulator, value));
    nb.create<linalg::YieldOp>(l, sums);
  };
  auto zeros = [&](ArrayRef<int64_t> shape) {
    SmallVector<Value> inits;
    for (unsigned i = 0; i < count; ++i)
      inits.push_back(createZeroTensor(b, loc, shape, f64));
    return inits;
  };
  if (chunk == 1) {
    AffineMap all = b.getMultiDimIdentityMap(rowRank);
    SmallVector<AffineMap> maps(rowInputs.size(), all);
    maps.append(count, AffineMap::get(rowRank, 0, {}, ctx));
    auto sum = b.create<linalg::GenericOp>(
        loc, SmallVector<Type>(count, RankedTensorType::get({}, f64)),
        rowInputs, zeros({}), maps, iteratorTypes(0, rowRank),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          SmallVector<Value> coordinates;
          for (unsigned dim = 0; dim < rowRank; ++dim)
            coordinates.push_back(loopIndex(nb, l, dim));
          SmallVector<Value> values =
              terms(nb, l, args.take_front(rowInputs.size()), coordinates);
          accumulate(nb, l, args.drop_front(rowInputs.size()), values);
        });
    return sum.getResults();
  }
  // Stage 1 over (chunk p, row j of it): row r = p * chunk + j.
  SmallVector<Value> chunked;
  for (Value input : rowInputs)
    chunked.push_back(reshapeTensor(b, loc, input, {chunks, chunk}));
  AffineMap pj = b.getMultiDimIdentityMap(2);
  SmallVector<AffineMap> maps(rowInputs.size(), pj);
  maps.append(count, projectionMap(ctx, 2, {0}));
  auto partials = b.create<linalg::GenericOp>(
      loc, SmallVector<Type>(count, RankedTensorType::get({chunks}, f64)),
      chunked, zeros({chunks}), maps, iteratorTypes(1, 1),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value row = nb.create<arith::AddIOp>(
            l,
            nb.create<arith::MulIOp>(l, loopIndex(nb, l, 0),
                                     createIndexConstant(nb, l, chunk)),
            loopIndex(nb, l, 1));
        // The row's coordinates in rowShape, the last fastest.
        SmallVector<Value> coordinates(rowRank);
        for (int dim = rowRank - 1; dim >= 0; --dim) {
          Value size = createIndexConstant(nb, l, rowShape[dim]);
          coordinates[dim] = nb.create<arith::RemUIOp>(l, row, size);
          row = nb.create<arith::DivUIOp>(l, row, size);
        }
        SmallVector<Value> values =
            terms(nb, l, args.take_front(rowInputs.size()), coordinates);
        accumulate(nb, l, args.drop_front(rowInputs.size()), values);
      });
  // Stage 2: the chunks' partial sums in order.
  SmallVector<AffineMap> totalMaps(count, b.getMultiDimIdentityMap(1));
  totalMaps.append(count, AffineMap::get(1, 0, {}, ctx));
  auto total = b.create<linalg::GenericOp>(
      loc, SmallVector<Type>(count, RankedTensorType::get({}, f64)),
      partials.getResults(), zeros({}), totalMaps, iteratorTypes(0, 1),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        accumulate(nb, l, args.drop_front(count), args.take_front(count));
      });
  return total.getResults();
}

/// cross_entropy = sum over counted rows (sumOverRows) of (log(sum) + m -
/// x[label]) / the number of counted rows (NaN when none, as PyTorch). Per-row
/// terms are computed in getComputeType of the logits' type (f32 for f16/bf16);
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
    bool isUnsigned = hasUnsignedElements(op.getLabels());
    int64_t ignoreIndex = op.getIgnoreIndex();
    auto [max, sum] = createRowLogSumExp(rewriter, loc, logits, layout);

    // Over the rows, the loss of each counted row and the count.
    Type f64 = rewriter.getF64Type();
    SmallVector<Value> accumulated = sumOverRows(
        rewriter, loc, ValueRange{adaptor.getLabels(), max, sum},
        layout.rowShape, 2,
        [&](OpBuilder &b, Location l, ValueRange args,
            ArrayRef<Value> coordinates) -> SmallVector<Value> {
          Value label = args[0];
          Value counted = isCounted(b, l, label, isUnsigned, ignoreIndex);
          Value column = clampIndex(b, l, castToIndex(b, l, label, isUnsigned),
                                    layout.classes);
          SmallVector<Value> indices(coordinates);
          indices.push_back(column);
          Value picked = extendToComputeType(
              b, l, b.create<tensor::ExtractOp>(l, logits, indices));
          Value logSumExp =
              b.create<arith::AddFOp>(l, b.create<math::LogOp>(l, args[2]),
                                      extendToComputeType(b, l, args[1]));
          Value loss = castFloat(
              b, l, b.create<arith::SubFOp>(l, logSumExp, picked), f64);
          Value zero = createScalarConstant(b, l, f64, 0);
          Value one = createScalarConstant(b, l, f64, 1);
          return {b.create<arith::SelectOp>(l, counted, loss, zero),
                  b.create<arith::SelectOp>(l, counted, one, zero)};
        });

    auto resultType = getSignlessTensorType(op.getType());
    rewriter.replaceOp(
        op, createScalarGeneric(
                rewriter, loc, resultType, accumulated,
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
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    Type elementType = resultType.getElementType();
    Type computeType = getComputeType(elementType);
    Value logits = adaptor.getLogits();
    ClassAxisLayout layout(rewriter, resultType);
    bool isUnsigned = hasUnsignedElements(op.getLabels());
    int64_t ignoreIndex = op.getIgnoreIndex();
    auto [max, sum] = createRowLogSumExp(rewriter, loc, logits, layout);

    // scale = grad / count, with count the number of counted rows (exact
    // in f64, unlike in f16 past 2048), once as a 0-d tensor.
    Type f64 = rewriter.getF64Type();
    Value count =
        sumOverRows(rewriter, loc, adaptor.getLabels(), layout.rowShape, 1,
                    [&](OpBuilder &b, Location l, ValueRange args,
                        ArrayRef<Value>) -> SmallVector<Value> {
                      Value counted =
                          isCounted(b, l, args[0], isUnsigned, ignoreIndex);
                      return {b.create<arith::SelectOp>(
                          l, counted, createScalarConstant(b, l, f64, 1),
                          createScalarConstant(b, l, f64, 0))};
                    })
            .front();
    Value scale = createScalarGeneric(
        rewriter, loc, RankedTensorType::get({}, computeType),
        ValueRange{adaptor.getGrad(), count},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value quotient = b.create<arith::DivFOp>(
              l, castFloat(b, l, args[0], f64), args[1]);
          return castFloat(b, l, quotient, computeType);
        });

    // The gradient goes over the logits, element for element (each logit
    // is read where its gradient is written): one-shot bufferization writes
    // it in place when nothing reads the logits afterwards, as llm.c
    // overwrites them, instead of holding both [rows, classes] tensors.
    Value init = logits.getType() == resultType
                     ? logits
                     : createEmptyTensor(rewriter, loc, resultType.getShape(),
                                         elementType);
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
