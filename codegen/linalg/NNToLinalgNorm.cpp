// Lowering of mdl.layer_norm (last axis, biased variance, as
// torch.nn.functional.layer_norm) to row reductions and one elementwise pass.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// layer_norm over `[rows.., d]`:
///  1. sum[r] = sum_k x[r, k];
///  2. sq[r] = sum_k (x[r, k] - sum[r] / d)^2 (two passes rather than
///     E[x^2] - E[x]^2, which cancels badly when |mean| >> std);
///  3. mean[r] = sum[r] / d, rstd[r] = 1 / sqrt(sq[r] / d + eps);
///  4. y = (x - mean) * rstd * weight + bias.
/// f16/bf16 inputs are read extended to f32: the sums, mean and rstd are f32
/// (as PyTorch's, which keeps them in opmath) and y is rounded once.
struct LayerNormLowering : OpConversionPattern<mlir::mdl::LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType resultType = getSignlessTensorType(op.getType());
    Type elementType = resultType.getElementType();
    Type computeType = getComputeType(elementType);
    ArrayRef<int64_t> shape = resultType.getShape();
    unsigned rank = shape.size();
    ArrayRef<int64_t> rowShape = shape.drop_back();
    unsigned rowRank = rowShape.size();

    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap row = leadingDimsMap(ctx, rank, rowRank);
    AffineMap column = projectionMap(ctx, rank, {rank - 1});
    AffineMap rowIdentity = rewriter.getMultiDimIdentityMap(rowRank);
    Value x = adaptor.getInput();
    Value width = createScalarConstant(rewriter, loc, computeType,
                                       static_cast<double>(shape.back()));

    // 1. Row sums.
    Value sum =
        rewriter
            .create<linalg::GenericOp>(
                loc, RankedTensorType::get(rowShape, computeType), x,
                createZeroTensor(rewriter, loc, rowShape, computeType),
                ArrayRef<AffineMap>{identity, row}, iteratorTypes(rowRank, 1),
                [](OpBuilder &b, Location l, ValueRange args) {
                  Value element = extendToComputeType(b, l, args[0]);
                  b.create<linalg::YieldOp>(
                      l,
                      b.create<arith::AddFOp>(l, args[1], element).getResult());
                })
            .getResult(0);

    // 2. Sums of squared deviations.
    Value squares =
        rewriter
            .create<linalg::GenericOp>(
                loc, sum.getType(), ValueRange{x, sum},
                createZeroTensor(rewriter, loc, rowShape, computeType),
                ArrayRef<AffineMap>{identity, row, row},
                iteratorTypes(rowRank, 1),
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value mean = b.create<arith::DivFOp>(l, args[1], width);
                  Value deviation = b.create<arith::SubFOp>(
                      l, extendToComputeType(b, l, args[0]), mean);
                  Value square =
                      b.create<arith::MulFOp>(l, deviation, deviation);
                  b.create<linalg::YieldOp>(
                      l,
                      b.create<arith::AddFOp>(l, args[2], square).getResult());
                })
            .getResult(0);

    // 3. Mean and reciprocal standard deviation per row.
    Value eps = createScalarConstant(rewriter, loc, computeType,
                                     op.getEps().convertToDouble());
    auto stats = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{sum.getType(), sum.getType()}, ValueRange{sum, squares},
        ValueRange{createEmptyTensor(rewriter, loc, rowShape, computeType),
                   createEmptyTensor(rewriter, loc, rowShape, computeType)},
        ArrayRef<AffineMap>{rowIdentity, rowIdentity, rowIdentity, rowIdentity},
        iteratorTypes(rowRank, 0),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value mean = b.create<arith::DivFOp>(l, args[0], width);
          Value variance = b.create<arith::DivFOp>(l, args[1], width);
          // 1 / sqrt, as PyTorch's kernel (not an approximate rsqrt).
          Value rstd = b.create<arith::DivFOp>(
              l, createScalarConstant(b, l, computeType, 1),
              b.create<math::SqrtOp>(
                  l, b.create<arith::AddFOp>(l, variance, eps)));
          b.create<linalg::YieldOp>(l, ValueRange{mean, rstd});
        });

    // 4. Normalise, scale and shift.
    Value init = createEmptyTensor(rewriter, loc, shape, elementType);
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        op, resultType,
        ValueRange{x, stats.getResult(0), stats.getResult(1),
                   adaptor.getWeight(), adaptor.getBias()},
        init, ArrayRef<AffineMap>{identity, row, row, column, column, identity},
        iteratorTypes(rank, 0), [&](OpBuilder &b, Location l, ValueRange args) {
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

} // namespace

void modelc::populateNormToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LayerNormLowering>(patterns.getContext());
}
