// Lowering of mdl.layer_norm (last axis, biased variance, as
// torch.nn.functional.layer_norm) to row reductions and one elementwise
// pass, and of its gradient mdl.layer_norm_grad to a few passes over the
// rows and a two-stage reduction over them for the weight and bias.
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

/// A `[rows.., n]` tensor and the maps of generics over it.
struct RowLayout {
  ArrayRef<int64_t> shape, rowShape;
  unsigned rank, rowRank;
  AffineMap identity, row, column, rowIdentity;

  RowLayout(MLIRContext *ctx, RankedTensorType type)
      : shape(type.getShape()), rowShape(shape.drop_back()), rank(shape.size()),
        rowRank(rowShape.size()),
        identity(AffineMap::getMultiDimIdentityMap(rank, ctx)),
        row(leadingDimsMap(ctx, rank, rowRank)),
        column(projectionMap(ctx, rank, {rank - 1})),
        rowIdentity(AffineMap::getMultiDimIdentityMap(rowRank, ctx)) {}
};

/// The row sum of `body(elements, row values)` over the last axis, in
/// `type`, from 0: one row reduction.
Value createRowSum(OpBuilder &b, Location loc, const RowLayout &layout,
                   Type type, ValueRange full, ValueRange rows,
                   ScalarBodyFn term) {
  SmallVector<Value> inputs(full);
  inputs.append(rows.begin(), rows.end());
  SmallVector<AffineMap> maps(full.size(), layout.identity);
  maps.append(rows.size() + 1, layout.row);
  return b
      .create<linalg::GenericOp>(
          loc, RankedTensorType::get(layout.rowShape, type), inputs,
          createZeroTensor(b, loc, layout.rowShape, type), maps,
          iteratorTypes(layout.rowRank, 1),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value value = term(nb, l, args.drop_back());
            nb.create<linalg::YieldOp>(
                l, nb.create<arith::AddFOp>(l, args.back(), value).getResult());
          })
      .getResult(0);
}

/// Each row's mean and 1 / sqrt(variance + eps) of `x` over its last axis,
/// in the compute type (f32 for f16/bf16):
///  1. sum[r] = sum_k x[r, k];
///  2. sq[r] = sum_k (x[r, k] - sum[r] / n)^2 (two passes rather than
///     E[x^2] - E[x]^2, which cancels badly when |mean| >> std);
///  3. mean[r] = sum[r] / n, rstd[r] = 1 / sqrt(sq[r] / n + eps).
std::pair<Value, Value> createRowStatistics(OpBuilder &b, Location loc,
                                            const RowLayout &layout, Value x,
                                            Type computeType, double epsilon) {
  Value width = createScalarConstant(b, loc, computeType,
                                     static_cast<double>(layout.shape.back()));
  Value sum = createRowSum(b, loc, layout, computeType, x, {},
                           [](OpBuilder &nb, Location l, ValueRange args) {
                             return extendToComputeType(nb, l, args[0]);
                           });
  Value squares = createRowSum(
      b, loc, layout, computeType, x, sum,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value mean = nb.create<arith::DivFOp>(l, args[1], width);
        Value deviation = nb.create<arith::SubFOp>(
            l, extendToComputeType(nb, l, args[0]), mean);
        return nb.create<arith::MulFOp>(l, deviation, deviation).getResult();
      });
  Value eps = createScalarConstant(b, loc, computeType, epsilon);
  auto rowType = RankedTensorType::get(layout.rowShape, computeType);
  auto stats = b.create<linalg::GenericOp>(
      loc, TypeRange{rowType, rowType}, ValueRange{sum, squares},
      ValueRange{createEmptyTensor(b, loc, layout.rowShape, computeType),
                 createEmptyTensor(b, loc, layout.rowShape, computeType)},
      SmallVector<AffineMap>(4, layout.rowIdentity),
      iteratorTypes(layout.rowRank, 0),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value mean = nb.create<arith::DivFOp>(l, args[0], width);
        Value variance = nb.create<arith::DivFOp>(l, args[1], width);
        // 1 / sqrt, as PyTorch's kernel (not an approximate rsqrt).
        Value rstd = nb.create<arith::DivFOp>(
            l, createScalarConstant(nb, l, computeType, 1),
            nb.create<math::SqrtOp>(
                l, nb.create<arith::AddFOp>(l, variance, eps)));
        nb.create<linalg::YieldOp>(l, ValueRange{mean, rstd});
      });
  return {stats.getResult(0), stats.getResult(1)};
}

/// layer_norm over `[rows.., n]`: the row statistics, then
/// y = (x - mean) * rstd * weight + bias. f16/bf16 inputs are read extended
/// to f32: the sums, mean and rstd are f32 (as PyTorch's, which keeps them
/// in opmath) and y is rounded once.
struct LayerNormLowering : OpConversionPattern<mlir::mdl::LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    Type elementType = resultType.getElementType();
    RowLayout layout(rewriter.getContext(), resultType);
    Value x = adaptor.getInput();
    auto [mean, rstd] = createRowStatistics(rewriter, loc, layout, x,
                                            getComputeType(elementType),
                                            op.getEps().convertToDouble());
    Value init = createEmptyTensor(rewriter, loc, layout.shape, elementType);
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        op, resultType,
        ValueRange{x, mean, rstd, adaptor.getWeight(), adaptor.getBias()}, init,
        ArrayRef<AffineMap>{layout.identity, layout.row, layout.row,
                            layout.column, layout.column, layout.identity},
        iteratorTypes(layout.rank, 0),
        [&](OpBuilder &b, Location l, ValueRange args) {
          auto normalise = [](OpBuilder &nb, Location nl, ValueRange wide) {
            Value centred = nb.create<arith::SubFOp>(nl, wide[0], wide[1]);
            Value normalised = nb.create<arith::MulFOp>(nl, centred, wide[2]);
            Value scaled = nb.create<arith::MulFOp>(nl, normalised, wide[3]);
            return nb.create<arith::AddFOp>(nl, scaled, wide[4]).getResult();
          };
          b.create<linalg::YieldOp>(
              l,
              computeInOpmath(b, l, elementType, args.drop_back(), normalise));
        });
    return success();
  }
};

/// The rows of a two-stage column sum: the largest divisor of `rows` not
/// above 128, so that the first stage sums chunks of that many rows, one
/// thread per (chunk, column), and the second the chunks' partial sums.
int64_t getChunkRows(int64_t rows) {
  for (int64_t chunk = std::min<int64_t>(rows, 128); chunk > 1; --chunk)
    if (rows % chunk == 0)
      return chunk;
  return 1;
}

/// mdl.layer_norm_grad over `[rows.., n]`, in the compute type (f32 for
/// f16/bf16), each result rounded once:
///  1. mean and rstd per row, as the forward computes them;
///  2. a[r] = sum_k g w, c[r] = sum_k g w xhat (two row reductions, with
///     xhat = (x - mean) rstd recomputed);
///  3. dx = rstd (g w - a / n - xhat c / n), elementwise;
///  4. the weight and bias gradients, sum_r g xhat and sum_r g, in a fixed
///     order: the rows in chunks of getChunkRows, each chunk's partial sums
///     (one generic with both), then the partial sums chunk by chunk.
struct LayerNormGradLowering : OpConversionPattern<mlir::mdl::LayerNormGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::LayerNormGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto inputType = getSignlessTensorType(op.getInput().getType());
    auto weightType = getSignlessTensorType(op.getWeight().getType());
    Type elementType = inputType.getElementType();
    Type computeType = getComputeType(elementType);
    RowLayout layout(ctx, inputType);
    int64_t width = layout.shape.back();
    Value x = adaptor.getInput(), w = adaptor.getWeight(),
          g = adaptor.getGrad();
    auto [mean, rstd] = createRowStatistics(
        rewriter, loc, layout, x, computeType, op.getEps().convertToDouble());

    // xhat and g * w from (x, g, w, mean, rstd) elements, extended.
    auto normalised = [](OpBuilder &b, Location l, Value x, Value mean,
                         Value rstd) {
      return b.create<arith::MulFOp>(
          l, b.create<arith::SubFOp>(l, extendToComputeType(b, l, x), mean),
          rstd);
    };
    auto scaledGrad = [](OpBuilder &b, Location l, Value g, Value w) {
      return b.create<arith::MulFOp>(l, extendToComputeType(b, l, g),
                                     extendToComputeType(b, l, w));
    };
    // Row sums over (x, g, w) at full shape (w broadcast) and mean, rstd.
    auto rowSum = [&](bool timesNormalised) {
      SmallVector<Value> inputs = {x, g, w, mean, rstd};
      SmallVector<AffineMap> maps = {layout.identity, layout.identity,
                                     layout.column,   layout.row,
                                     layout.row,      layout.row};
      return rewriter
          .create<linalg::GenericOp>(
              loc, RankedTensorType::get(layout.rowShape, computeType), inputs,
              createZeroTensor(rewriter, loc, layout.rowShape, computeType),
              maps, iteratorTypes(layout.rowRank, 1),
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value term = scaledGrad(b, l, args[1], args[2]);
                if (timesNormalised)
                  term = b.create<arith::MulFOp>(
                      l, term, normalised(b, l, args[0], args[3], args[4]));
                b.create<linalg::YieldOp>(
                    l, b.create<arith::AddFOp>(l, args[5], term).getResult());
              })
          .getResult(0);
    };
    Value gradSum = rowSum(false);
    Value projection = rowSum(true);

    Value inputGrad =
        rewriter
            .create<linalg::GenericOp>(
                loc, inputType,
                ValueRange{x, g, w, mean, rstd, gradSum, projection},
                createEmptyTensor(rewriter, loc, layout.shape, elementType),
                ArrayRef<AffineMap>{layout.identity, layout.identity,
                                    layout.column, layout.row, layout.row,
                                    layout.row, layout.row, layout.identity},
                iteratorTypes(layout.rank, 0),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value n = createScalarConstant(b, l, computeType,
                                                 static_cast<double>(width));
                  Value xhat = normalised(b, l, args[0], args[3], args[4]);
                  Value dxhat = scaledGrad(b, l, args[1], args[2]);
                  Value meanGrad = b.create<arith::DivFOp>(l, args[5], n);
                  Value meanProjection = b.create<arith::DivFOp>(l, args[6], n);
                  Value centred = b.create<arith::SubFOp>(
                      l, b.create<arith::SubFOp>(l, dxhat, meanGrad),
                      b.create<arith::MulFOp>(l, xhat, meanProjection));
                  Value result = b.create<arith::MulFOp>(l, args[4], centred);
                  b.create<linalg::YieldOp>(
                      l, castFloat(b, l, result, elementType));
                })
            .getResult(0);

    // Weight and bias: rows [chunks, chunk] by n.
    int64_t rows = 1;
    for (int64_t size : layout.rowShape)
      rows *= size;
    int64_t chunk = getChunkRows(rows), chunks = rows / chunk;
    auto chunked = [&](Value value, ArrayRef<int64_t> shape) {
      return reshapeTensor(rewriter, loc, value, shape);
    };
    SmallVector<int64_t> full = {chunks, chunk, width},
                         rowsOnly = {chunks, chunk};
    // Loops (c, j, k): j, the rows of a chunk, is the reduction; a thread
    // per (c, k) reads consecutive columns.
    AffineMap cjk = AffineMap::getMultiDimIdentityMap(3, ctx);
    AffineMap cj = projectionMap(ctx, 3, {0, 1});
    AffineMap k3 = projectionMap(ctx, 3, {2});
    AffineMap ck = projectionMap(ctx, 3, {0, 2});
    auto partialType = RankedTensorType::get({chunks, width}, computeType);
    auto partials = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{partialType, partialType},
        ValueRange{chunked(x, full), chunked(g, full), chunked(mean, rowsOnly),
                   chunked(rstd, rowsOnly)},
        ValueRange{
            createZeroTensor(rewriter, loc, {chunks, width}, computeType),
            createZeroTensor(rewriter, loc, {chunks, width}, computeType)},
        ArrayRef<AffineMap>{cjk, cjk, cj, cj, ck, ck},
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                         utils::IteratorType::reduction,
                                         utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value grad = extendToComputeType(b, l, args[1]);
          Value xhat = normalised(b, l, args[0], args[2], args[3]);
          Value weightTerm = b.create<arith::MulFOp>(l, grad, xhat);
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::AddFOp>(l, args[4], weightTerm),
                            b.create<arith::AddFOp>(l, args[5], grad)});
        });
    // Loops (c, k): the chunks, then a thread per column.
    AffineMap both = AffineMap::getMultiDimIdentityMap(2, ctx);
    AffineMap k2 = projectionMap(ctx, 2, {1});
    auto sumType = RankedTensorType::get({width}, computeType);
    auto sums = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{sumType, sumType}, partials.getResults(),
        ValueRange{createZeroTensor(rewriter, loc, {width}, computeType),
                   createZeroTensor(rewriter, loc, {width}, computeType)},
        ArrayRef<AffineMap>{both, both, k2, k2},
        SmallVector<utils::IteratorType>{utils::IteratorType::reduction,
                                         utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange args) {
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::AddFOp>(l, args[2], args[0]),
                            b.create<arith::AddFOp>(l, args[3], args[1])});
        });
    Type weightElement = weightType.getElementType();
    rewriter.replaceOp(
        op,
        {inputGrad, castTensor(rewriter, loc, sums.getResult(0), weightElement),
         castTensor(rewriter, loc, sums.getResult(1), weightElement)});
    return success();
  }
};

} // namespace

void modelc::populateNormToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LayerNormLowering, LayerNormGradLowering>(patterns.getContext());
}
