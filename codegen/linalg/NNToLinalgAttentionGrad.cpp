// Lowering of mdl.attention_backward (docs/codegen/attention.md): D =
// rowsum(dO * O) as a linalg reduction, then two passes, dq per query (its
// visible keys) and dk, dv per key (the queries that see it), each an
// mdlrt.attention_pass over (batch, head, row) recomputing the
// probabilities from q, k and the forward's log-sum-exp
// (AttentionLoops.h has the per-point arithmetic).
#include "codegen/linalg/AttentionLoops.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;
using namespace modelc::lowering::attention;

namespace {

/// D_i = dO_i . O_i in the accumulators' type, [b, h, t]: a linalg
/// reduction over the last axis.
Value rowDots(OpBuilder &b, Location loc, Value outputGrad, Value output,
              Type acc) {
  auto type = cast<RankedTensorType>(output.getType());
  auto resultType = RankedTensorType::get(type.getShape().drop_back(), acc);
  Value init = createZeroTensor(b, loc, resultType.getShape(), acc);
  MLIRContext *ctx = b.getContext();
  AffineMap full = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap rows = leadingDimsMap(ctx, 4, 3);
  return b
      .create<linalg::GenericOp>(
          loc, resultType, ValueRange{outputGrad, output}, init,
          ArrayRef<AffineMap>{full, full, rows}, iteratorTypes(3, 1),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value product = nb.create<arith::MulFOp>(
                nloc, extendToComputeType(nb, nloc, args[0]),
                extendToComputeType(nb, nloc, args[1]));
            nb.create<linalg::YieldOp>(
                nloc,
                ValueRange{nb.create<arith::AddFOp>(nloc, args[2], product)});
          })
      .getResult(0);
}

struct AttentionBackwardLowering
    : OpConversionPattern<mlir::mdl::AttentionBackwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::AttentionBackwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AttentionEmitter e = makeEmitter(rewriter, op, adaptor.getMask(),
                                     adaptor.getSeed(), adaptor.getCounter());
    Value rowDot = rowDots(rewriter, loc, adaptor.getOutputGrad(),
                           adaptor.getOutput(), e.acc);
    Value q = readMemref(rewriter, loc, adaptor.getQuery());
    Value k = readMemref(rewriter, loc, adaptor.getKey());
    Value v = readMemref(rewriter, loc, adaptor.getValue());
    Value dout = readMemref(rewriter, loc, adaptor.getOutputGrad());
    Value lse = readMemref(rewriter, loc, adaptor.getLse());
    Value d = readMemref(rewriter, loc, rowDot);
    Value dq = allocate(rewriter, loc, op.getQueryGrad().getType());
    Value dk = allocate(rewriter, loc, op.getKeyGrad().getType());
    Value dv = allocate(rewriter, loc, op.getValueGrad().getType());
    auto queryType = cast<RankedTensorType>(op.getQuery().getType());
    int64_t batches = queryType.getDimSize(0);
    int64_t width = queryType.getDimSize(3);
    int64_t valueWidth =
        cast<RankedTensorType>(op.getValue().getType()).getDimSize(3);
    int64_t widest = std::max(width, valueWidth);
    OpBuilder &b = e.b;
    auto zeros = [&](int64_t size) -> Value {
      return b.create<arith::ConstantOp>(
          loc, DenseElementsAttr::get(e.vectorType(size),
                                      b.getFloatAttr(e.acc, 0.0)));
    };
    // The terms of one pair: p_ij, its dropped and rounded weight for
    // dV, and dS_ij rounded.
    struct Pair {
      Value weight, ds;
    };
    auto pair = [&](Value batch, Value head, Value i, Value j, Value qRow,
                    Value kRow, Value vRow, Value doRow) -> Pair {
      Value loadIndices[] = {batch, head, i};
      Value rowLse = b.create<memref::LoadOp>(loc, lse, loadIndices);
      Value rowD = b.create<memref::LoadOp>(loc, d, loadIndices);
      Value p =
          e.probability(qRow, kRow, rowLse, e.maskAllows(batch, head, i, j));
      Value z = e.dropoutFactor(batch, head, i, j);
      Value dp = b.create<arith::MulFOp>(loc, e.dot(doRow, vRow), z);
      Value ds = b.create<arith::MulFOp>(
          loc, p, b.create<arith::SubFOp>(loc, dp, rowD));
      return {e.roundToElement(b.create<arith::MulFOp>(loc, p, z)),
              e.roundToElement(ds)};
    };

    // dQ, per query: its visible keys.
    e.pass("query_grad", {q, k, v, dout, lse, d}, {dq}, batches, e.queries,
           e.keys * widest, [&](Value batch, Value head, Value i) {
             Value qRow = e.loadRow(q, batch, head, i);
             Value doRow = e.loadRow(dout, batch, head, i);
             auto loop = b.create<scf::ForOp>(
                 loc, e.index(0), e.keysEnd(i), e.index(1),
                 ValueRange{zeros(width)},
                 [&](OpBuilder &nested, Location, Value j, ValueRange acc) {
                   OpBuilder::InsertionGuard guard(b);
                   b.setInsertionPoint(nested.getInsertionBlock(),
                                       nested.getInsertionPoint());
                   Value kRow = e.loadRow(k, batch, head, j);
                   Pair terms = pair(batch, head, i, j, qRow, kRow,
                                     e.loadRow(v, batch, head, j), doRow);
                   b.create<scf::YieldOp>(loc, e.axpy(acc[0], terms.ds, kRow));
                 });
             e.storeRow(e.scaleVector(loop.getResult(0), e.constant(e.scale)),
                        dq, batch, head, i);
           });

    // dK and dV, per key: the queries that see it.
    e.pass("key_value_grad", {q, k, v, dout, lse, d}, {dk, dv}, batches, e.keys,
           e.queries * widest, [&](Value batch, Value head, Value j) {
             Value kRow = e.loadRow(k, batch, head, j);
             Value vRow = e.loadRow(v, batch, head, j);
             Value first = e.causal ? j : e.index(0);
             auto loop = b.create<scf::ForOp>(
                 loc, first, e.index(e.queries), e.index(1),
                 ValueRange{zeros(width), zeros(valueWidth)},
                 [&](OpBuilder &nested, Location, Value i, ValueRange acc) {
                   OpBuilder::InsertionGuard guard(b);
                   b.setInsertionPoint(nested.getInsertionBlock(),
                                       nested.getInsertionPoint());
                   Value qRow = e.loadRow(q, batch, head, i);
                   Value doRow = e.loadRow(dout, batch, head, i);
                   Pair terms =
                       pair(batch, head, i, j, qRow, kRow, vRow, doRow);
                   b.create<scf::YieldOp>(
                       loc, ValueRange{e.axpy(acc[0], terms.ds, qRow),
                                       e.axpy(acc[1], terms.weight, doRow)});
                 });
             e.storeRow(e.scaleVector(loop.getResult(0), e.constant(e.scale)),
                        dk, batch, head, j);
             e.storeRow(loop.getResult(1), dv, batch, head, j);
           });

    rewriter.replaceOp(
        op, {asResult(rewriter, loc, dq, op.getQueryGrad().getType()),
             asResult(rewriter, loc, dk, op.getKeyGrad().getType()),
             asResult(rewriter, loc, dv, op.getValueGrad().getType())});
    return success();
  }
};

} // namespace

void modelc::lowering::attention::addAttentionBackwardPattern(
    RewritePatternSet &patterns) {
  patterns.add<AttentionBackwardLowering>(patterns.getContext());
}
