// The fused attention's backward on the tensor cores
// (docs/codegen/attention.md; layouts in MmaFragments.h): the CPU loops' two
// passes, each with 16 rows per warp and 64 rows per block, the scores
// recomputed from q, k and the saved log-sum-exp L; D = rowsum(dO * O) is a
// reduction before them.
//
// query_grad: a warp's 16 queries; q and dO rows as A fragments; per block
//   of 16 keys (causal: up to the warp's diagonal), S = q k^T and
//   dP = dO v^T (2 tiles each, v's rows read as k's), then
//   dS = p (z dP - D) with p = e^(scale S - L) (0 where invisible), and
//   dq += r(dS) k (dS's tiles as the A operand, k's elements a column
//   apart); at the end dq * scale.
// key_value_grad: a warp's 16 keys; k (and v) rows as A fragments; two
//   walks over blocks of 16 queries (causal: from the warp's first key on),
//   each keeping only its own accumulators: S^T = k q^T and the same p per
//   pair (L of the tile's queries), dv += r(p z)^T dO; then S^T again and
//   dP^T = v dO^T, dS (D of the queries), dk += r(dS)^T q, and dk * scale.
// Each result row is one warp's, summed in a fixed order: no atomics.
#include "codegen/gpu/AttentionKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace modelc {

namespace {

/// Columns (keys or queries) per step of a warp's walk: 2 tiles of 8, one
/// product's k (longer steps keep more tiles of p and dS live and spill on
/// sm_90 at head size 64).
constexpr int64_t kWalkStep = 16;

/// The terms of the pairs of one 16 x 8 tile: the probabilities dropped
/// (for dV) and dS.
struct PairTerms {
  Fragment weights, ds;
};

/// p, p z and dS = p (z dP - D) for the four pairs a thread holds of a
/// tile of scores `s` and `dp`, each pair given by `pairOf(i)` as (query,
/// key) with that query's L and D.
PairTerms pairTerms(MmaEmitter &e, const AttentionOperands &a, Value batch,
                    Value head, ArrayRef<Value> s, ArrayRef<Value> dp,
                    function_ref<std::array<Value, 4>(int64_t)> pairOf) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  PairTerms terms;
  for (int64_t i = 0; i < 4; ++i) {
    auto [query, key, lse, rowDot] = pairOf(i);
    // The pairs the CPU loops visit: in bounds and, when causal, at or
    // below the diagonal. The others (p = 0) take D = 0, so that they add
    // nothing at all, not 0 * (z dP - D), which is NaN where a row sees no
    // key and D is NaN.
    Value visited = b.create<arith::AndIOp>(loc, e.lessThan(key, a.keys),
                                            e.lessThan(query, a.queries));
    if (a.causal)
      visited = b.create<arith::AndIOp>(
          loc, visited,
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, key, query));
    rowDot = b.create<arith::SelectOp>(loc, visited, rowDot, e.f32(0.0));
    Value score = b.create<arith::MulFOp>(loc, s[i], e.f32(a.scale));
    Value p =
        b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, score, lse));
    p = b.create<arith::SelectOp>(loc, isVisible(e, a, batch, head, query, key),
                                  p, e.f32(0.0));
    Value z = dropoutFactor(e, a, batch, head, query, key);
    Value dropped = b.create<arith::MulFOp>(loc, dp[i], z);
    terms.weights.push_back(b.create<arith::MulFOp>(loc, p, z));
    terms.ds.push_back(b.create<arith::MulFOp>(
        loc, p, b.create<arith::SubFOp>(loc, dropped, rowDot)));
  }
  return terms;
}

/// Zeros for `tiles` C tiles.
SmallVector<Value> zeroTiles(MmaEmitter &e, int64_t tiles) {
  return SmallVector<Value>(tiles * 4, e.f32(0.0));
}

/// acc[t] += a b_t for the C tiles t of `acc`, b_t from `loadB(t)`.
void accumulate(MmaEmitter &e, SmallVectorImpl<Value> &acc, int64_t offset,
                int64_t tiles, ArrayRef<Value> a,
                function_ref<Fragment(int64_t)> loadB) {
  for (int64_t t = 0; t < tiles; ++t) {
    Fragment c(acc.begin() + offset + t * 4, acc.begin() + offset + t * 4 + 4);
    c = e.mma(a, loadB(t), c);
    std::copy(c.begin(), c.end(), acc.begin() + offset + t * 4);
  }
}

/// Stores rows g and g + 8 (`rows`) of the C tiles `acc` from `offset`,
/// times `scale`, to `mem` where a row is below `count`.
void storeTiles(MmaEmitter &e, ValueRange acc, int64_t offset, int64_t tiles,
                double scale, Value mem, Value batch, Value head,
                Value const (&rows)[2], int64_t count) {
  OpBuilder &b = e.b;
  for (int64_t r = 0; r < 2; ++r) {
    auto ifRow = b.create<scf::IfOp>(e.loc, e.lessThan(rows[r], count),
                                     /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifRow.thenBlock()->getTerminator());
    for (int64_t t = 0; t < tiles; ++t) {
      Value pair[2];
      for (int64_t c = 0; c < 2; ++c) {
        pair[c] = acc[offset + t * 4 + r * 2 + c];
        if (scale != 1.0)
          pair[c] = b.create<arith::MulFOp>(e.loc, pair[c], e.f32(scale));
      }
      e.storePair(pair[0], pair[1], mem,
                  {batch, head, rows[r], e.add(e.pairColumn, e.index(t * 8))});
    }
  }
}

} // namespace

LaunchShape emitQueryGradMma(KernelBuilder &kb, mdlrt::AttentionPassOp pass) {
  AttentionOperands a = readAttentionOperands(kb, pass);
  Value dq = kb.mapping.lookup(pass.getOutputs()[0]);
  OpBuilder &b = kb.builder;
  Location loc = kb.loc;
  int64_t widthTiles = a.width / 8;
  return emitWarpRowKernel(
      kb, a.element, a.batches, a.heads, a.queries,
      [&](MmaEmitter &e, Value batch, Value head, Value rowBase) {
        Value rows[2], loadRows[2];
        e.threadRows(rowBase, a.queries, rows, loadRows);
        SmallVector<Fragment> queryA, gradA;
        for (int64_t kk = 0; kk < a.width / 16; ++kk)
          queryA.push_back(e.loadA(a.query, batch, head, loadRows, kk * 16));
        for (int64_t kv = 0; kv < a.valueWidth / 16; ++kv)
          gradA.push_back(
              e.loadA(a.outputGrad, batch, head, loadRows, kv * 16));
        Value lse[2], rowDot[2];
        for (int64_t r = 0; r < 2; ++r) {
          lse[r] = b.create<memref::LoadOp>(
              loc, a.lse, ValueRange{batch, head, loadRows[r]});
          rowDot[r] = b.create<memref::LoadOp>(
              loc, a.rowDot, ValueRange{batch, head, loadRows[r]});
        }
        Value end = a.causal
                        ? e.clamp(e.add(rowBase, e.index(kMmaWarpRows)), a.keys)
                        : e.index(a.keys);
        auto walk = b.create<scf::ForOp>(
            loc, e.index(0), end, e.index(kWalkStep), zeroTiles(e, widthTiles),
            [&](OpBuilder &nested, Location, Value start, ValueRange state) {
              OpBuilder::InsertionGuard inner(b);
              b.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
              SmallVector<Fragment> ds;
              for (int64_t nt = 0; nt < kWalkStep / 8; ++nt) {
                Value tileStart = e.add(start, e.index(nt * 8));
                Value keyRow = e.clamp(e.add(tileStart, e.group), a.keys - 1);
                Fragment s = {e.f32(0), e.f32(0), e.f32(0), e.f32(0)};
                Fragment dp = s;
                for (int64_t kk = 0; kk < a.width / 16; ++kk)
                  s = e.mma(queryA[kk],
                            e.loadBFromRow(a.key, batch, head, keyRow, kk * 16),
                            s);
                for (int64_t kv = 0; kv < a.valueWidth / 16; ++kv)
                  dp = e.mma(
                      gradA[kv],
                      e.loadBFromRow(a.value, batch, head, keyRow, kv * 16),
                      dp);
                ds.push_back(
                    pairTerms(e, a, batch, head, s, dp, [&](int64_t i) {
                      Value key =
                          e.add(e.add(tileStart, e.pairColumn), e.index(i % 2));
                      return std::array<Value, 4>{rows[i / 2], key, lse[i / 2],
                                                  rowDot[i / 2]};
                    }).ds);
              }
              SmallVector<Value> acc(state);
              for (int64_t ks = 0; ks < kWalkStep / 16; ++ks) {
                Fragment dsA = e.tilesToA(ds[2 * ks], ds[2 * ks + 1]);
                Value firstKey = e.add(start, e.index(ks * 16));
                accumulate(e, acc, 0, widthTiles, dsA, [&](int64_t t) {
                  return e.loadBFromColumn(a.key, batch, head, firstKey, a.keys,
                                           e.add(e.group, e.index(t * 8)));
                });
              }
              b.create<scf::YieldOp>(loc, acc);
            });
        storeTiles(e, walk.getResults(), 0, widthTiles, a.scale, dq, batch,
                   head, rows, a.queries);
      });
}

LaunchShape emitKeyValueGradMma(KernelBuilder &kb,
                                mdlrt::AttentionPassOp pass) {
  AttentionOperands a = readAttentionOperands(kb, pass);
  Value dk = kb.mapping.lookup(pass.getOutputs()[0]);
  Value dv = kb.mapping.lookup(pass.getOutputs()[1]);
  OpBuilder &b = kb.builder;
  Location loc = kb.loc;
  int64_t widthTiles = a.width / 8, valueTiles = a.valueWidth / 8;
  return emitWarpRowKernel(
      kb, a.element, a.batches, a.heads, a.keys,
      [&](MmaEmitter &e, Value batch, Value head, Value rowBase) {
        Value keys[2], loadKeys[2];
        e.threadRows(rowBase, a.keys, keys, loadKeys);
        // Causal: query i sees key j when j <= i, so the warp's queries
        // start at its first key.
        Value first = a.causal ? rowBase : e.index(0);
        // Two walks over the queries, dv's then dk's: each keeps only its
        // own accumulators (the scores are computed in both), so that
        // neither spills at head size 64.
        for (bool values : {true, false}) {
          SmallVector<Fragment> keyA, valueA;
          for (int64_t kk = 0; kk < a.width / 16; ++kk)
            keyA.push_back(e.loadA(a.key, batch, head, loadKeys, kk * 16));
          if (!values)
            for (int64_t kv = 0; kv < a.valueWidth / 16; ++kv)
              valueA.push_back(
                  e.loadA(a.value, batch, head, loadKeys, kv * 16));
          int64_t tiles = values ? valueTiles : widthTiles;
          auto walk = b.create<scf::ForOp>(
              loc, first, e.index(a.queries), e.index(kWalkStep),
              zeroTiles(e, tiles),
              [&](OpBuilder &nested, Location, Value start, ValueRange state) {
                OpBuilder::InsertionGuard inner(b);
                b.setInsertionPoint(nested.getInsertionBlock(),
                                    nested.getInsertionPoint());
                SmallVector<Fragment> terms;
                for (int64_t nt = 0; nt < kWalkStep / 8; ++nt) {
                  Value tileStart = e.add(start, e.index(nt * 8));
                  Value queryRow =
                      e.clamp(e.add(tileStart, e.group), a.queries - 1);
                  Fragment s = {e.f32(0), e.f32(0), e.f32(0), e.f32(0)};
                  Fragment dp = s;
                  for (int64_t kk = 0; kk < a.width / 16; ++kk)
                    s = e.mma(
                        keyA[kk],
                        e.loadBFromRow(a.query, batch, head, queryRow, kk * 16),
                        s);
                  for (int64_t kv = 0; kv < int64_t(valueA.size()); ++kv)
                    dp = e.mma(valueA[kv],
                               e.loadBFromRow(a.outputGrad, batch, head,
                                              queryRow, kv * 16),
                               dp);
                  // The tile's two queries of this thread, their L and D.
                  Value queries[2], lse[2], rowDot[2];
                  for (int64_t c = 0; c < 2; ++c) {
                    queries[c] =
                        e.add(e.add(tileStart, e.pairColumn), e.index(c));
                    Value row = e.clamp(queries[c], a.queries - 1);
                    lse[c] = b.create<memref::LoadOp>(
                        loc, a.lse, ValueRange{batch, head, row});
                    rowDot[c] = b.create<memref::LoadOp>(
                        loc, a.rowDot, ValueRange{batch, head, row});
                  }
                  PairTerms pair =
                      pairTerms(e, a, batch, head, s, dp, [&](int64_t i) {
                        return std::array<Value, 4>{queries[i % 2], keys[i / 2],
                                                    lse[i % 2], rowDot[i % 2]};
                      });
                  terms.push_back(values ? pair.weights : pair.ds);
                }
                SmallVector<Value> acc(state);
                for (int64_t ks = 0; ks < kWalkStep / 16; ++ks) {
                  Value firstQuery = e.add(start, e.index(ks * 16));
                  Fragment termsA =
                      e.tilesToA(terms[2 * ks], terms[2 * ks + 1]);
                  // dv += r(p z)^T dO, or dk += r(dS)^T q.
                  Value other = values ? a.outputGrad : a.query;
                  accumulate(e, acc, 0, tiles, termsA, [&](int64_t t) {
                    return e.loadBFromColumn(other, batch, head, firstQuery,
                                             a.queries,
                                             e.add(e.group, e.index(t * 8)));
                  });
                }
                b.create<scf::YieldOp>(loc, acc);
              });
          if (values)
            storeTiles(e, walk.getResults(), 0, valueTiles, 1.0, dv, batch,
                       head, keys, a.keys);
          else
            storeTiles(e, walk.getResults(), 0, widthTiles, a.scale, dk, batch,
                       head, keys, a.keys);
        }
      });
}

} // namespace modelc
