// Lowering of mdl.attention_forward and mdl.attention_backward: the fused
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
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"
#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// Keys per step of the forward's online softmax: their scores are kept in
/// registers, the running maximum and the accumulator rescaled once per
/// block. 16, or 8 for rows of 64 elements or more (a GPU thread then keeps
/// all of it in registers).
int64_t keyBlockFor(int64_t widest) { return widest >= 64 ? 8 : 16; }

/// The attribute on each pass giving the most terms one of its results sums
/// (the GPU kernel table's `reduction`, docs/codegen/gpu.md).
constexpr llvm::StringLiteral kReductionAttrName = "mdl.reduction";

/// What the three passes share: the shapes, the attributes, the operands'
/// memory, and the builders of one point's arithmetic.
struct AttentionEmitter {
  OpBuilder &b;
  Location loc;
  int64_t heads, queries, keys;
  /// The inputs' element type and the accumulators' (f32, or f64).
  Type element, acc;
  double scale, dropout;
  bool causal;
  Value mask;
  /// The dropout key (an i64), when the op drops.
  Value dropoutKey;

  Value index(int64_t value) { return createIndexConstant(b, loc, value); }
  Value constant(double value) {
    return createScalarConstant(b, loc, acc, value);
  }
  VectorType vectorType(int64_t width) { return VectorType::get({width}, acc); }

  /// Row `row` of head (`batch`, `head`) of the [b, h, n, w] memory `mem`,
  /// in the accumulators' type.
  Value loadRow(Value mem, Value batch, Value head, Value row) {
    auto type = cast<MemRefType>(mem.getType());
    int64_t width = type.getShape().back();
    Value zero = index(0);
    Value loaded = b.create<vector::LoadOp>(
        loc, VectorType::get({width}, type.getElementType()), mem,
        ValueRange{batch, head, row, zero});
    if (type.getElementType() == acc)
      return loaded;
    return b.create<arith::ExtFOp>(loc, vectorType(width), loaded);
  }

  /// Stores the accumulator `row` to row `row` of `mem`, rounded to its
  /// element type.
  void storeRow(Value value, Value mem, Value batch, Value head, Value row) {
    auto type = cast<MemRefType>(mem.getType());
    int64_t width = type.getShape().back();
    if (type.getElementType() != acc)
      value = b.create<arith::TruncFOp>(
          loc, VectorType::get({width}, type.getElementType()), value);
    b.create<vector::StoreOp>(loc, value, mem,
                              ValueRange{batch, head, row, index(0)});
  }

  /// The sum of the elements of `vector` in a fixed tree: the upper half
  /// added to the lower until one is left, an odd element out added at
  /// the end (in the order they fell out).
  Value treeSum(Value vector) {
    int64_t width = cast<VectorType>(vector.getType()).getShape()[0];
    SmallVector<Value> leftovers;
    while (width > 1) {
      int64_t half = width / 2;
      if (width % 2)
        leftovers.push_back(
            b.create<vector::ExtractOp>(loc, vector, width - 1));
      SmallVector<int64_t> low, high;
      for (int64_t i = 0; i < half; ++i) {
        low.push_back(i);
        high.push_back(half + i);
      }
      Value lowHalf = b.create<vector::ShuffleOp>(loc, vector, vector, low);
      Value highHalf = b.create<vector::ShuffleOp>(loc, vector, vector, high);
      vector = b.create<arith::AddFOp>(loc, lowHalf, highHalf);
      width = half;
    }
    Value sum = b.create<vector::ExtractOp>(loc, vector, 0);
    for (Value leftover : leftovers)
      sum = b.create<arith::AddFOp>(loc, sum, leftover);
    return sum;
  }

  Value dot(Value x, Value y) {
    return treeSum(b.create<arith::MulFOp>(loc, x, y));
  }

  /// `accumulator + weight * row` (vectors, `weight` a scalar).
  Value axpy(Value accumulator, Value weight, Value row) {
    Value splat = b.create<vector::SplatOp>(loc, row.getType(), weight);
    return b.create<arith::AddFOp>(loc, accumulator,
                                   b.create<arith::MulFOp>(loc, splat, row));
  }

  Value scaleVector(Value row, Value factor) {
    return b.create<arith::MulFOp>(
        loc, row, b.create<vector::SplatOp>(loc, row.getType(), factor));
  }

  /// `value` rounded to the inputs' type when they are 16-bit (how the
  /// probabilities and dS enter the products with 16-bit operands).
  Value roundToElement(Value value) {
    if (element == acc)
      return value;
    Value rounded = b.create<arith::TruncFOp>(loc, element, value);
    return b.create<arith::ExtFOp>(loc, acc, rounded);
  }

  /// Whether the mask lets query `query` see key `key` (true without one):
  /// the mask is read broadcast against [b, h, t, s].
  Value maskAllows(Value batch, Value head, Value query, Value key) {
    if (!mask)
      return b.create<arith::ConstantIntOp>(loc, 1, 1);
    auto type = cast<MemRefType>(mask.getType());
    Value coords[] = {batch, head, query, key};
    int64_t rank = type.getRank();
    SmallVector<Value> indices;
    for (int64_t axis = 0; axis < rank; ++axis)
      indices.push_back(type.getDimSize(axis) == 1 ? index(0)
                                                   : coords[4 - rank + axis]);
    return b.create<memref::LoadOp>(loc, mask, indices);
  }

  /// The dropout factor of pair (`query`, `key`), 1 without dropout.
  Value dropoutFactor(Value batch, Value head, Value query, Value key) {
    if (!dropoutKey)
      return constant(1.0);
    // ((batch * h + head) * t + query) * s + key, as an element of the
    // scores [b, h, t, s].
    auto mulAdd = [&](Value x, int64_t size, Value y) -> Value {
      return b.create<arith::AddIOp>(
          loc, b.create<arith::MulIOp>(loc, x, index(size)), y);
    };
    Value linear =
        mulAdd(mulAdd(mulAdd(batch, heads, head), queries, query), keys, key);
    Value linear64 =
        b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), linear);
    return createDropoutFactor(b, loc, dropoutKey, linear64, dropout, acc);
  }

  /// The end of query `query`'s visible keys: min(query + 1, s) when
  /// causal, else s.
  Value keysEnd(Value query) {
    if (!causal)
      return index(keys);
    Value next = b.create<arith::AddIOp>(loc, query, index(1));
    return b.create<arith::MinUIOp>(loc, next, index(keys));
  }

  /// p_ij = e^(scale q . k - L_i) where the pair is visible, else 0.
  Value probability(Value qRow, Value kRow, Value lse, Value visible) {
    Value score =
        b.create<arith::MulFOp>(loc, dot(qRow, kRow), constant(scale));
    Value p =
        b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, score, lse));
    return b.create<arith::SelectOp>(loc, visible, p, constant(0.0));
  }

  /// One pass, `kind`, as an mdlrt.attention_pass reading `inputs` and
  /// writing `outputs`, whose region is an scf.parallel over [b, h, n]
  /// with `body(batch, head, row)`; marked with the terms its longest sum
  /// adds.
  void pass(StringRef kind, ValueRange inputs, ValueRange outputs,
            int64_t batches, int64_t rows, int64_t reduction,
            function_ref<void(Value, Value, Value)> body) {
    SmallVector<Value> allInputs(inputs);
    if (mask)
      allInputs.push_back(mask);
    auto op = b.create<mlir::mdlrt::AttentionPassOp>(
        loc, b.getStringAttr(kind), causal ? b.getUnitAttr() : nullptr,
        b.getF64FloatAttr(scale), b.getF64FloatAttr(dropout),
        mask ? b.getUnitAttr() : nullptr, allInputs, outputs, dropoutKey);
    op->setAttr(kReductionAttrName, b.getI64IntegerAttr(reduction));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&op.getBody().emplaceBlock());
    b.create<scf::ParallelOp>(
        loc, ValueRange{index(0), index(0), index(0)},
        ValueRange{index(batches), index(heads), index(rows)},
        ValueRange{index(1), index(1), index(1)},
        [&](OpBuilder &nested, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          body(ivs[0], ivs[1], ivs[2]);
        });
  }
};

/// `tensor` as a read-only memref with any strides but a unit last one
/// (one-shot bufferization casts its buffer to that, or copies it when its
/// last axis is strided).
Value readMemref(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  if (!strides.empty())
    strides.back() = 1;
  auto layout =
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides);
  auto memrefType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  return b.create<bufferization::ToMemrefOp>(loc, memrefType, tensor,
                                             /*read_only=*/true);
}

/// A new buffer for a result of type `type`.
Value allocate(OpBuilder &b, Location loc, Type type) {
  auto tensor = getSignlessTensorType(type);
  return b.create<memref::AllocOp>(
      loc, MemRefType::get(tensor.getShape(), tensor.getElementType()));
}

/// The buffer `buffer`, written, as the result tensor.
Value asResult(OpBuilder &b, Location loc, Value buffer, Type type) {
  return b.create<bufferization::ToTensorOp>(loc, getSignlessTensorType(type),
                                             buffer, /*restrict=*/true,
                                             /*writable=*/true);
}

/// The emitter of an attention op's common operands and attributes.
template <typename OpTy>
AttentionEmitter makeEmitter(OpBuilder &b, OpTy op, Value mask, Value seed,
                             Value counter) {
  auto query = cast<RankedTensorType>(op.getQuery().getType());
  auto key = cast<RankedTensorType>(op.getKey().getType());
  Location loc = op.getLoc();
  AttentionEmitter emitter{b,
                           loc,
                           query.getDimSize(1),
                           query.getDimSize(2),
                           key.getDimSize(2),
                           query.getElementType(),
                           getComputeType(query.getElementType()),
                           op.getScale().convertToDouble(),
                           op.getDropout().convertToDouble(),
                           op.getCausal(),
                           mask ? readMemref(b, loc, mask) : Value(),
                           Value()};
  if (seed && emitter.dropout != 0.0)
    emitter.dropoutKey =
        createDropoutKey(b, loc, seed, counter, op.getDropoutId());
  return emitter;
}

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
    e.pass(
        "query_grad", {q, k, v, dout, lse, d}, {dq}, batches, e.queries,
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
          e.storeRow(e.scaleVector(loop.getResult(0), e.constant(e.scale)), dq,
                     batch, head, i);
        });

    // dK and dV, per key: the queries that see it.
    e.pass(
        "key_value_grad", {q, k, v, dout, lse, d}, {dk, dv}, batches, e.keys,
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
                Pair terms = pair(batch, head, i, j, qRow, kRow, vRow, doRow);
                b.create<scf::YieldOp>(
                    loc, ValueRange{e.axpy(acc[0], terms.ds, qRow),
                                    e.axpy(acc[1], terms.weight, doRow)});
              });
          e.storeRow(e.scaleVector(loop.getResult(0), e.constant(e.scale)), dk,
                     batch, head, j);
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

void modelc::populateAttentionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionForwardLowering, AttentionBackwardLowering>(
      patterns.getContext());
}
