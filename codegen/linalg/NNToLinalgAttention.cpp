// Lowering of mdl.attention_forward (the backward's is in
// NNToLinalgAttentionGrad.cpp, what they share in AttentionLoops.h): the fused
// algorithm of FlashAttention-2 as loops that every target runs
// (docs/codegen/attention.md). Each pass is an mdlrt.attention_pass whose
// region is one scf.parallel over the (batch, head, row) points on the
// operands' memory; a point keeps its
// row's accumulators in vector registers (vector<d x f32>) and walks the
// visible keys (or queries) serially:
//
//   forward, per query i: keys in blocks of 16 (8 for head sizes of 64 or
//   more); per block the
//     scores s_j = scale q_i . k_j, m' = max(m, s_j), the running sum
//     l = l e^(m - m') + sum e^(s_j - m') and o = o e^(m - m') +
//     sum e^(s_j - m') z_ij v_j (online softmax); then O_i = o / l and
//     L_i = m + log l;
//   backward, with D_i = dO_i . O_i (a linalg reduction):
//     per query i: dQ_i = scale sum_j dS_ij k_j;
//     per key j: dV_j = sum_i p_ij z_ij dO_i, dK_j = scale sum_i dS_ij q_i,
//     where p_ij = e^(s_ij - L_i) and dS_ij = p_ij (z_ij dO_i . v_j - D_i).
//
// Causal rows stop at their diagonal (the loops' bounds: nothing above it
// is visited), a boolean mask is read per pair, and dropout's factor z_ij
// is mdl.dropout_mask's hash of the pair's index in [b, h, t, s]. Dot
// products sum their terms in one fixed tree (halves of the vector, then
// halves of those), so every target adds in the same order. Nothing of
// shape [t, s] is ever stored.
//
// The loops work on memrefs: the operands enter through
// bufferization.to_memref (read-only, any strides with a unit last one),
// the results are fresh buffers returned through bufferization.to_tensor,
// so one-shot bufferization and the memory plan treat them as any other
// op's.
#include "codegen/linalg/AttentionLoops.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace modelc::lowering;
using namespace modelc::lowering::attention;

namespace {

/// Keys per step of the forward's online softmax: their scores are kept in
/// registers, the running maximum and the accumulator rescaled once per
/// block. 16, or 8 for rows of 64 elements or more (a GPU thread then keeps
/// all of it in registers).
int64_t keyBlockFor(int64_t widest) { return widest >= 64 ? 8 : 16; }

struct AttentionForwardLowering
    : OpConversionPattern<mlir::mdl::AttentionForwardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::AttentionForwardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AttentionEmitter e = makeEmitter(rewriter, op, adaptor.getMask(),
                                     adaptor.getSeed(), adaptor.getCounter());
    Value q = readMemref(rewriter, loc, adaptor.getQuery());
    Value k = readMemref(rewriter, loc, adaptor.getKey());
    Value v = readMemref(rewriter, loc, adaptor.getValue());
    Value out = allocate(rewriter, loc, op.getResult().getType());
    Value lse = allocate(rewriter, loc, op.getLse().getType());
    auto queryType = cast<RankedTensorType>(op.getQuery().getType());
    int64_t width = queryType.getDimSize(3);
    int64_t valueWidth =
        cast<RankedTensorType>(op.getValue().getType()).getDimSize(3);
    double minusInf = -std::numeric_limits<double>::infinity();
    int64_t keyBlock = keyBlockFor(std::max(width, valueWidth));

    e.pass(
        "forward", {q, k, v}, {out, lse}, queryType.getDimSize(0), e.queries,
        e.keys * std::max(width, valueWidth),
        [&](Value batch, Value head, Value i) {
          OpBuilder &b = e.b;
          Value qRow = e.loadRow(q, batch, head, i);
          Value end = e.keysEnd(i);
          Value last = b.create<arith::SubIOp>(
              loc, b.create<arith::MaxUIOp>(loc, end, e.index(1)), e.index(1));
          Value zeros = b.create<arith::ConstantOp>(
              loc, DenseElementsAttr::get(e.vectorType(valueWidth),
                                          b.getFloatAttr(e.acc, 0.0)));
          auto blocks = b.create<scf::ForOp>(
              loc, e.index(0), end, e.index(keyBlock),
              ValueRange{e.constant(minusInf), e.constant(0.0), zeros},
              [&](OpBuilder &nested, Location, Value start, ValueRange state) {
                OpBuilder::InsertionGuard guard(b);
                b.setInsertionPoint(nested.getInsertionBlock(),
                                    nested.getInsertionPoint());
                // The block's scores, -inf past the row's end or where the
                // mask hides the key (whose index is clamped to the row's
                // last key, so every read is in bounds).
                SmallVector<Value> keysHere, scores;
                Value blockMax = state[0];
                for (int64_t u = 0; u < keyBlock; ++u) {
                  Value j = b.create<arith::AddIOp>(loc, start, e.index(u));
                  Value inRange = b.create<arith::CmpIOp>(
                      loc, arith::CmpIPredicate::ult, j, end);
                  Value jc = b.create<arith::SelectOp>(loc, inRange, j, last);
                  Value visible = b.create<arith::AndIOp>(
                      loc, inRange, e.maskAllows(batch, head, i, jc));
                  Value score = b.create<arith::MulFOp>(
                      loc, e.dot(qRow, e.loadRow(k, batch, head, jc)),
                      e.constant(e.scale));
                  score = b.create<arith::SelectOp>(loc, visible, score,
                                                    e.constant(minusInf));
                  keysHere.push_back(jc);
                  scores.push_back(score);
                  blockMax = b.create<arith::MaximumFOp>(loc, blockMax, score);
                }
                // While every score seen is -inf, the exponentials are
                // taken against 0: all terms and the rescale are 0.
                Value empty =
                    b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ,
                                            blockMax, e.constant(minusInf));
                Value pivot = b.create<arith::SelectOp>(
                    loc, empty, e.constant(0.0), blockMax);
                Value rescale = b.create<math::ExpOp>(
                    loc, b.create<arith::SubFOp>(loc, state[0], pivot));
                Value sum = b.create<arith::MulFOp>(loc, state[1], rescale);
                Value accumulator = e.scaleVector(state[2], rescale);
                for (int64_t u = 0; u < keyBlock; ++u) {
                  Value p = b.create<math::ExpOp>(
                      loc, b.create<arith::SubFOp>(loc, scores[u], pivot));
                  sum = b.create<arith::AddFOp>(loc, sum, p);
                  Value weight = b.create<arith::MulFOp>(
                      loc, p, e.dropoutFactor(batch, head, i, keysHere[u]));
                  accumulator = e.axpy(accumulator, e.roundToElement(weight),
                                       e.loadRow(v, batch, head, keysHere[u]));
                }
                b.create<scf::YieldOp>(loc,
                                       ValueRange{blockMax, sum, accumulator});
              });
          Value max = blocks.getResult(0), sum = blocks.getResult(1);
          Value accumulator = blocks.getResult(2);
          // A row that sees no key: 0 / 0, NaN, as softmax gives.
          Value row = b.create<arith::DivFOp>(
              loc, accumulator,
              b.create<vector::SplatOp>(loc, accumulator.getType(), sum));
          e.storeRow(row, out, batch, head, i);
          Value logSum = b.create<arith::AddFOp>(
              loc, max, b.create<math::LogOp>(loc, sum));
          b.create<memref::StoreOp>(loc, logSum, lse,
                                    ValueRange{batch, head, i});
        });
    rewriter.replaceOp(op,
                       {asResult(rewriter, loc, out, op.getResult().getType()),
                        asResult(rewriter, loc, lse, op.getLse().getType())});
    return success();
  }
};

} // namespace

void modelc::populateAttentionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionForwardLowering>(patterns.getContext());
  addAttentionBackwardPattern(patterns);
}
