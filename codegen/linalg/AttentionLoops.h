// The fused attention's portable loops (docs/codegen/attention.md): what
// the lowerings of mdl.attention_forward (NNToLinalgAttention.cpp) and
// mdl.attention_backward (NNToLinalgAttentionGrad.cpp) share. Each pass is
// an mdlrt.attention_pass whose region is one scf.parallel over the
// (batch, head, row) points on the operands' memory; AttentionEmitter
// builds one point's arithmetic: row vectors, fixed-tree dot products,
// masks, the dropout factor.
#ifndef MODELC_CODEGEN_LINALG_ATTENTIONLOOPS_H
#define MODELC_CODEGEN_LINALG_ATTENTIONLOOPS_H

#include "codegen/linalg/LoweringUtils.h"

#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace modelc::lowering::attention {

using namespace mlir;

/// The attribute on each pass giving the most terms one of its results sums
/// (the GPU kernel table's `reduction`, docs/codegen/gpu.md).
inline constexpr llvm::StringLiteral kReductionAttrName = "mdl.reduction";

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

/// mdl.attention_backward's lowering (NNToLinalgAttentionGrad.cpp).
void addAttentionBackwardPattern(RewritePatternSet &patterns);

} // namespace modelc::lowering::attention

#endif // MODELC_CODEGEN_LINALG_ATTENTIONLOOPS_H
