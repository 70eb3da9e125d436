// The fused attention's passes on the GPU (docs/codegen/attention.md,
// docs/codegen/gpu.md). On 16-bit inputs whose head sizes are multiples of
// 16, each pass is a tensor-core kernel (FlashAttention-2's, on
// mma.sync.m16n8k16 with f32 accumulation, sm_80 and later; layouts in
// MmaFragments.h); any other pass runs its region's portable loops, a
// thread per row (emitParallelLoop).
//
// The forward: a block of 4 warps takes 64 queries of one (batch, head),
// each warp 16 of them. A warp keeps its queries' rows of q as A fragments
// and walks the keys in blocks of 64 (causal: up to its last query's
// diagonal):
//
//   S = q k^T        8 tiles of 16 x 8 scores, d / 16 products each (k's
//                    rows are B's columns: pairs of k elements, one load)
//   scale, mask, causal and bounds (-inf where invisible)
//   m' = max(m, rowmax(S))            a thread holds two rows' 16 scores;
//                                     shuffles within the 4 threads of a
//                                     row give the row's maximum
//   l = l e^(m - m') + sum e^(S - m')  each thread sums its own columns
//   o = o e^(m - m') + r(e^(S - m') z) v   two 8-key tiles of P are the A
//                                     operand of the next product, rounded
//                                     to 16 bits; v's elements, a column
//                                     apart, are loaded one by one
//
// and at the end sums l over the row's 4 threads (two shuffles, in a fixed
// order), writes O = o / l and L = m + log(l).
#include "codegen/gpu/AttentionKernels.h"
#include "codegen/linalg/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;

namespace modelc {

namespace {

/// Keys (or queries) per step of a warp's walk: 8 tiles of 8.
constexpr int64_t kWalkStep = 64;

/// Whether `pass` has a tensor-core kernel: 16-bit inputs, head sizes
/// multiples of 16 (each is the k of some product), at most 256.
bool hasTensorCoreKernel(mdlrt::AttentionPassOp pass) {
  auto query = cast<MemRefType>(pass.getInputs()[0].getType());
  auto value = cast<MemRefType>(pass.getInputs()[2].getType());
  Type element = query.getElementType();
  int64_t width = query.getDimSize(3), valueWidth = value.getDimSize(3);
  if (!(element.isBF16() || element.isF16()) || width % 16 || valueWidth % 16 ||
      width > 256 || valueWidth > 256)
    return false;
  // Every 16-bit operand has the query's type.
  return llvm::all_of(pass->getOperands(), [&](Value operand) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    return !type || !isa<FloatType>(type.getElementType()) ||
           type.getElementType().isF32() || type.getElementType() == element;
  });
}

LaunchShape emitForwardMma(KernelBuilder &kb, mdlrt::AttentionPassOp pass) {
  AttentionOperands a = readAttentionOperands(kb, pass);
  Value out = kb.mapping.lookup(pass.getOutputs()[0]);
  Value lse = kb.mapping.lookup(pass.getOutputs()[1]);
  OpBuilder &b = kb.builder;
  Location loc = kb.loc;
  double minusInf = -std::numeric_limits<double>::infinity();
  int64_t valueTiles = a.valueWidth / 8;
  return emitWarpRowKernel(
      kb, a.element, a.batches, a.heads, a.queries,
      [&](MmaEmitter &e, Value batch, Value head, Value rowBase) {
        Value rows[2], loadRows[2];
        e.threadRows(rowBase, a.queries, rows, loadRows);
        SmallVector<Fragment> queryA;
        for (int64_t kk = 0; kk < a.width / 16; ++kk)
          queryA.push_back(e.loadA(a.query, batch, head, loadRows, kk * 16));
        Value end = a.causal
                        ? e.clamp(e.add(rowBase, e.index(kMmaWarpRows)), a.keys)
                        : e.index(a.keys);
        SmallVector<Value> init = {e.f32(minusInf), e.f32(minusInf), e.f32(0.0),
                                   e.f32(0.0)};
        init.append(valueTiles * 4, e.f32(0.0));
        auto walk = b.create<scf::ForOp>(
            loc, e.index(0), end, e.index(kWalkStep), init,
            [&](OpBuilder &nested, Location, Value start, ValueRange state) {
              OpBuilder::InsertionGuard inner(b);
              b.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
              // Scores: element i of tile nt is row rows[i / 2], key
              // start + 8 nt + 2t + i % 2.
              SmallVector<Fragment> scores, scoreKeys;
              for (int64_t nt = 0; nt < kWalkStep / 8; ++nt) {
                Value tileStart = e.add(start, e.index(nt * 8));
                Value keyRow = e.clamp(e.add(tileStart, e.group), a.keys - 1);
                Fragment acc = {e.f32(0), e.f32(0), e.f32(0), e.f32(0)};
                for (int64_t kk = 0; kk < a.width / 16; ++kk)
                  acc = e.mma(
                      queryA[kk],
                      e.loadBFromRow(a.key, batch, head, keyRow, kk * 16), acc);
                Fragment tile, tileKeys;
                for (int64_t i = 0; i < 4; ++i) {
                  Value key =
                      e.add(e.add(tileStart, e.pairColumn), e.index(i % 2));
                  Value score =
                      b.create<arith::MulFOp>(loc, acc[i], e.f32(a.scale));
                  tile.push_back(b.create<arith::SelectOp>(
                      loc, isVisible(e, a, batch, head, rows[i / 2], key),
                      score, e.f32(minusInf)));
                  tileKeys.push_back(key);
                }
                scores.push_back(tile);
                scoreKeys.push_back(tileKeys);
              }
              // The rows' maxima over the 4 threads of each row; while a
              // row has seen only -inf, its exponentials are taken
              // against 0 (all terms and the rescale are then 0).
              Value maxima[2] = {state[0], state[1]};
              for (Fragment &tile : scores)
                for (int64_t i = 0; i < 4; ++i)
                  maxima[i / 2] =
                      b.create<arith::MaximumFOp>(loc, maxima[i / 2], tile[i]);
              Value pivots[2], rescale[2], sums[2];
              for (int64_t r = 0; r < 2; ++r) {
                for (int32_t offset : {1, 2})
                  maxima[r] = b.create<arith::MaximumFOp>(
                      loc, maxima[r], e.shuffleXor(maxima[r], offset));
                Value empty = b.create<arith::CmpFOp>(
                    loc, arith::CmpFPredicate::OEQ, maxima[r], e.f32(minusInf));
                pivots[r] = b.create<arith::SelectOp>(loc, empty, e.f32(0.0),
                                                      maxima[r]);
                rescale[r] = b.create<math::ExpOp>(
                    loc, b.create<arith::SubFOp>(loc, state[r], pivots[r]));
                sums[r] =
                    b.create<arith::MulFOp>(loc, state[2 + r], rescale[r]);
              }
              SmallVector<Value> accumulators;
              for (int64_t i = 0; i < valueTiles * 4; ++i)
                accumulators.push_back(b.create<arith::MulFOp>(
                    loc, state[4 + i], rescale[(i % 4) / 2]));
              // Probabilities: summed as they are, dropped for v.
              SmallVector<Fragment> weights;
              for (auto [tile, tileKeys] : llvm::zip(scores, scoreKeys)) {
                Fragment tileWeights;
                for (int64_t i = 0; i < 4; ++i) {
                  Value p = b.create<math::ExpOp>(
                      loc,
                      b.create<arith::SubFOp>(loc, tile[i], pivots[i / 2]));
                  sums[i / 2] = b.create<arith::AddFOp>(loc, sums[i / 2], p);
                  if (a.dropoutKey)
                    p = b.create<arith::MulFOp>(loc, p,
                                                dropoutFactor(e, a, batch, head,
                                                              rows[i / 2],
                                                              tileKeys[i]));
                  tileWeights.push_back(p);
                }
                weights.push_back(tileWeights);
              }
              // o += P v, 16 keys per product.
              for (int64_t ks = 0; ks < kWalkStep / 16; ++ks) {
                Fragment probabilities =
                    e.tilesToA(weights[2 * ks], weights[2 * ks + 1]);
                Value firstKey = e.add(start, e.index(ks * 16));
                for (int64_t vt = 0; vt < valueTiles; ++vt) {
                  Fragment acc(accumulators.begin() + vt * 4,
                               accumulators.begin() + vt * 4 + 4);
                  acc = e.mma(
                      probabilities,
                      e.loadBFromColumn(a.value, batch, head, firstKey, a.keys,
                                        e.add(e.group, e.index(vt * 8))),
                      acc);
                  std::copy(acc.begin(), acc.end(),
                            accumulators.begin() + vt * 4);
                }
              }
              SmallVector<Value> next = {maxima[0], maxima[1], sums[0],
                                         sums[1]};
              next.append(accumulators);
              b.create<scf::YieldOp>(loc, next);
            });

        // Each row's sum over its 4 threads; O = o / l, L = m + log l.
        for (int64_t r = 0; r < 2; ++r) {
          Value sum = walk.getResult(2 + r);
          for (int32_t offset : {1, 2})
            sum = b.create<arith::AddFOp>(loc, sum, e.shuffleXor(sum, offset));
          auto ifRow = b.create<scf::IfOp>(loc, e.lessThan(rows[r], a.queries),
                                           /*withElse=*/false);
          OpBuilder::InsertionGuard rowGuard(b);
          b.setInsertionPoint(ifRow.thenBlock()->getTerminator());
          for (int64_t vt = 0; vt < valueTiles; ++vt) {
            Value pair[2];
            for (int64_t c = 0; c < 2; ++c)
              pair[c] = b.create<arith::DivFOp>(
                  loc, walk.getResult(4 + vt * 4 + r * 2 + c), sum);
            e.storePair(
                pair[0], pair[1], out,
                {batch, head, rows[r], e.add(e.pairColumn, e.index(vt * 8))});
          }
          Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                e.pairColumn, e.index(0));
          auto ifFirst = b.create<scf::IfOp>(loc, first, /*withElse=*/false);
          b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
          Value logSum = b.create<arith::AddFOp>(
              loc, walk.getResult(r), b.create<math::LogOp>(loc, sum));
          b.create<memref::StoreOp>(loc, logSum, lse,
                                    ValueRange{batch, head, rows[r]});
        }
      });
}

} // namespace

AttentionOperands readAttentionOperands(KernelBuilder &kb,
                                        mdlrt::AttentionPassOp pass) {
  auto inputs = pass.getInputs();
  auto lookup = [&](Value v) { return v ? kb.mapping.lookup(v) : Value(); };
  bool backward = pass.getKind() != "forward";
  AttentionOperands a;
  a.query = lookup(inputs[0]);
  a.key = lookup(inputs[1]);
  a.value = lookup(inputs[2]);
  a.outputGrad = backward ? lookup(inputs[3]) : Value();
  a.lse = backward ? lookup(inputs[4]) : Value();
  a.rowDot = backward ? lookup(inputs[5]) : Value();
  a.mask = pass.getHasMask() ? lookup(inputs.back()) : Value();
  a.dropoutKey = lookup(pass.getDropoutKey());
  auto queryType = cast<MemRefType>(a.query.getType());
  a.element = queryType.getElementType();
  a.batches = queryType.getDimSize(0);
  a.heads = queryType.getDimSize(1);
  a.queries = queryType.getDimSize(2);
  a.width = queryType.getDimSize(3);
  a.keys = cast<MemRefType>(a.key.getType()).getDimSize(2);
  a.valueWidth = cast<MemRefType>(a.value.getType()).getDimSize(3);
  a.scale = pass.getScale().convertToDouble();
  a.dropout = pass.getDropout().convertToDouble();
  a.causal = pass.getCausal();
  return a;
}

Value isVisible(MmaEmitter &e, const AttentionOperands &a, Value batch,
                Value head, Value row, Value key) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Value visible = b.create<arith::AndIOp>(loc, e.lessThan(key, a.keys),
                                          e.lessThan(row, a.queries));
  if (a.causal)
    visible = b.create<arith::AndIOp>(
        loc, visible,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, key, row));
  if (!a.mask)
    return visible;
  // The mask broadcast against [b, h, t, s], read in bounds.
  auto maskType = cast<MemRefType>(a.mask.getType());
  Value coords[] = {batch, head, e.clamp(row, a.queries - 1),
                    e.clamp(key, a.keys - 1)};
  SmallVector<Value> indices;
  int64_t rank = maskType.getRank();
  for (int64_t axis = 0; axis < rank; ++axis)
    indices.push_back(maskType.getDimSize(axis) == 1 ? e.index(0)
                                                     : coords[4 - rank + axis]);
  return b.create<arith::AndIOp>(
      loc, visible, b.create<memref::LoadOp>(loc, a.mask, indices));
}

Value dropoutFactor(MmaEmitter &e, const AttentionOperands &a, Value batch,
                    Value head, Value row, Value key) {
  if (!a.dropoutKey)
    return e.f32(1.0);
  Value linear =
      e.add(e.mul(e.add(e.mul(e.add(e.mul(batch, e.index(a.heads)), head),
                              e.index(a.queries)),
                        e.clamp(row, a.queries - 1)),
                  e.index(a.keys)),
            e.clamp(key, a.keys - 1));
  Value linear64 =
      e.b.create<arith::IndexCastUIOp>(e.loc, e.b.getI64Type(), linear);
  return lowering::createDropoutFactor(e.b, e.loc, a.dropoutKey, linear64,
                                       a.dropout, e.b.getF32Type());
}

FailureOr<LaunchShape> emitAttentionPass(KernelBuilder &kb,
                                         mdlrt::AttentionPassOp pass) {
  if (hasTensorCoreKernel(pass)) {
    StringRef kind = pass.getKind();
    if (kind == "forward")
      return emitForwardMma(kb, pass);
    if (kind == "query_grad")
      return emitQueryGradMma(kb, pass);
    return emitKeyValueGradMma(kb, pass);
  }
  scf::ParallelOp parallel;
  for (Operation &op : pass.getBody().front()) {
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      parallel = loop;
      continue;
    }
    kb.builder.clone(op, kb.mapping);
  }
  if (!parallel)
    return pass.emitError("an attention pass without its parallel loop");
  return emitParallelLoop(kb, parallel);
}

} // namespace modelc
