// The fused attention's passes on the GPU (docs/codegen/attention.md,
// docs/codegen/gpu.md). The forward pass on 16-bit inputs is a tensor-core
// kernel; every other pass runs its region's portable loops, a thread per
// row (emitParallelLoop).
//
// The tensor-core forward (FlashAttention-2's, on mma.sync m16n8k16 with
// f32 accumulation, sm_80 and later): a block of 4 warps takes 64 queries
// of one (batch, head), each warp 16 of them. A warp keeps its queries'
// rows of q as A fragments and walks the keys in blocks of 64 (causal: up
// to its last query's diagonal):
//
//   S = q k^T        8 tiles of 16 x 8 scores, d / 16 products each (k's
//                    rows are B's columns: pairs of k elements, one load)
//   scale, mask, causal and bounds (-inf where invisible)
//   m' = max(m, rowmax(S))            a thread holds two rows' 16 scores;
//                                     shuffles within the 4 threads of a
//                                     row give the row's maximum
//   l = l e^(m - m') + sum e^(S - m')  each thread sums its own columns
//   o = o e^(m - m') + r(e^(S - m') z) v   P's accumulator tiles are the A
//                                     fragments of the next product (two
//                                     8-key tiles per 16 keys), rounded to
//                                     16 bits; v's elements, a column
//                                     apart, are loaded one by one
//
// and at the end sums l over the row's 4 threads (two shuffles, in a fixed
// order), writes O = o / l and L = m + log(l). The fragment layouts are
// PTX's for mma.m16n8k16 (.row.col): with g = lane / 4 and t = lane % 4, A
// holds rows g and g + 8, columns 2t, 2t + 1 and 2t + 8, 2t + 9; B holds
// rows (k) 2t, 2t + 1, 2t + 8, 2t + 9 of column (n) g; C holds rows g and
// g + 8, columns 2t and 2t + 1. The product is inline PTX: MLIR 19's
// nvvm.mma.sync verifier rejects bf16 operands.
#include "codegen/gpu/GpuLowering.h"
#include "codegen/linalg/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;

namespace modelc {

namespace {

/// Queries per warp (the m of mma.m16n8k16) and warps per block.
constexpr int64_t kWarpRows = 16;
constexpr int64_t kWarps = 4;
constexpr int64_t kBlockRows = kWarpRows * kWarps;
/// Keys per step of a warp's walk: 8 tiles of 8.
constexpr int64_t kKeyTile = 64;

/// The arithmetic of one thread of the tensor-core kernel.
struct MmaEmitter {
  KernelBuilder &kb;
  OpBuilder &b;
  Location loc;
  /// bf16 or f16.
  Type element;

  Value index(int64_t value) { return kb.index(value); }
  Value f32(double value) {
    return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(value));
  }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); }
  Value minIndex(Value x, int64_t bound) {
    return b.create<arith::MinUIOp>(loc, x, index(bound));
  }
  Value fmax(Value x, Value y) {
    return b.create<arith::MaximumFOp>(loc, x, y);
  }

  /// Two consecutive 16-bit elements of the last axis at `indices`, as the
  /// 32-bit register mma.sync takes.
  Value loadPair(Value mem, ValueRange indices) {
    Value pair = b.create<vector::LoadOp>(loc, VectorType::get({2}, element),
                                          mem, indices);
    Value word = b.create<vector::BitCastOp>(
        loc, VectorType::get({1}, b.getI32Type()), pair);
    return b.create<vector::ExtractOp>(loc, word, 0);
  }

  /// Two 16-bit values packed into a register, `low` first.
  Value pack(Value low, Value high) {
    auto pairType = VectorType::get({2}, element);
    Value pair = b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(pairType, b.getFloatAttr(element, 0.0)));
    pair = b.create<vector::InsertOp>(loc, low, pair, 0);
    pair = b.create<vector::InsertOp>(loc, high, pair, 1);
    Value word = b.create<vector::BitCastOp>(
        loc, VectorType::get({1}, b.getI32Type()), pair);
    return b.create<vector::ExtractOp>(loc, word, 0);
  }

  /// Two f32 values rounded to 16 bits and packed.
  Value packRounded(Value low, Value high) {
    return pack(b.create<arith::TruncFOp>(loc, element, low),
                b.create<arith::TruncFOp>(loc, element, high));
  }

  /// c + a b on the tensor cores: mma.sync.aligned.m16n8k16.row.col with
  /// f32 accumulators.
  SmallVector<Value, 4> mma(ArrayRef<Value> a, ArrayRef<Value> bFragment,
                            ArrayRef<Value> c) {
    std::string type = element.isBF16() ? "bf16" : "f16";
    std::string text = "mma.sync.aligned.m16n8k16.row.col.f32." + type + "." +
                       type +
                       ".f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, "
                       "{$10,$11,$12,$13};";
    SmallVector<Value> operands(a);
    operands.append(bFragment.begin(), bFragment.end());
    operands.append(c.begin(), c.end());
    Type f32Type = b.getF32Type();
    auto result = LLVM::LLVMStructType::getLiteral(
        b.getContext(), {f32Type, f32Type, f32Type, f32Type});
    auto asmOp = b.create<LLVM::InlineAsmOp>(
        loc, result, operands, text, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
        /*has_side_effects=*/false, /*is_align_stack=*/false,
        LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/ArrayAttr());
    SmallVector<Value, 4> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(b.create<LLVM::ExtractValueOp>(loc, asmOp.getResult(0), i));
    return d;
  }

  /// `value` of the thread `lane ^ offset` of the warp.
  Value shuffleXor(Value value, int32_t offset) {
    return b
        .create<gpu::ShuffleOp>(loc, value, offset, kGpuWarpSize,
                                gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }
};

/// Whether the forward pass `pass` has the tensor-core kernel: 16-bit
/// inputs, head sizes multiples of 16 (q, k) and 8 (v), at most 256.
bool hasTensorCoreForward(mdlrt::AttentionPassOp pass) {
  if (pass.getKind() != "forward")
    return false;
  auto query = cast<MemRefType>(pass.getInputs()[0].getType());
  auto value = cast<MemRefType>(pass.getInputs()[2].getType());
  Type element = query.getElementType();
  int64_t width = query.getDimSize(3), valueWidth = value.getDimSize(3);
  return (element.isBF16() || element.isF16()) && width % 16 == 0 &&
         valueWidth % 8 == 0 && width <= 256 && valueWidth <= 256;
}

/// The dropout factor of score (batch, head, row, key), in f32: the CPU
/// loops' (createDropoutFactor of the pair's index in [b, h, t, s]).
Value dropoutFactor(MmaEmitter &e, Value dropoutKey, double p, Value batch,
                    Value head, Value row, Value key, int64_t heads,
                    int64_t queries, int64_t keys) {
  Value linear =
      e.add(e.mul(e.add(e.mul(e.add(e.mul(batch, e.index(heads)), head),
                              e.index(queries)),
                        row),
                  e.index(keys)),
            key);
  Value linear64 =
      e.b.create<arith::IndexCastUIOp>(e.loc, e.b.getI64Type(), linear);
  return lowering::createDropoutFactor(e.b, e.loc, dropoutKey, linear64, p,
                                       e.b.getF32Type());
}

/// The tensor-core forward (the file comment).
LaunchShape emitForwardMma(KernelBuilder &kb, mdlrt::AttentionPassOp pass) {
  OpBuilder &b = kb.builder;
  Location loc = kb.loc;
  Value q = kb.mapping.lookup(pass.getInputs()[0]);
  Value k = kb.mapping.lookup(pass.getInputs()[1]);
  Value v = kb.mapping.lookup(pass.getInputs()[2]);
  Value mask =
      pass.getHasMask() ? kb.mapping.lookup(pass.getInputs()[3]) : Value();
  Value out = kb.mapping.lookup(pass.getOutputs()[0]);
  Value lse = kb.mapping.lookup(pass.getOutputs()[1]);
  Value dropoutKey =
      pass.getDropoutKey() ? kb.mapping.lookup(pass.getDropoutKey()) : Value();
  auto queryType = cast<MemRefType>(q.getType());
  auto valueType = cast<MemRefType>(v.getType());
  int64_t batches = queryType.getDimSize(0), heads = queryType.getDimSize(1);
  int64_t queries = queryType.getDimSize(2), width = queryType.getDimSize(3);
  int64_t keys = cast<MemRefType>(k.getType()).getDimSize(2);
  int64_t valueWidth = valueType.getDimSize(3);
  double scale = pass.getScale().convertToDouble();
  double dropout = pass.getDropout().convertToDouble();
  bool causal = pass.getCausal();
  MmaEmitter e{kb, b, loc, queryType.getElementType()};
  double minusInf = -std::numeric_limits<double>::infinity();

  int64_t blocksPerHead = (queries + kBlockRows - 1) / kBlockRows;
  int64_t totalBlocks = batches * heads * blocksPerHead;
  int64_t grid = std::min<int64_t>(totalBlocks, kGpuMaxGrid);
  Value thread = kb.threadId();
  Value lane = b.create<arith::RemUIOp>(loc, thread, e.index(kGpuWarpSize));
  Value warp = b.create<arith::DivUIOp>(loc, thread, e.index(kGpuWarpSize));
  Value group = b.create<arith::DivUIOp>(loc, lane, e.index(4));
  Value pairColumn =
      e.mul(b.create<arith::RemUIOp>(loc, lane, e.index(4)), e.index(2));

  emitLoop(
      kb, kb.blockId(), e.index(totalBlocks), kb.gridDim(), [&](Value block) {
        Value headIndex =
            b.create<arith::DivUIOp>(loc, block, e.index(blocksPerHead));
        Value queryBlock =
            b.create<arith::RemUIOp>(loc, block, e.index(blocksPerHead));
        Value batch = b.create<arith::DivUIOp>(loc, headIndex, e.index(heads));
        Value head = b.create<arith::RemUIOp>(loc, headIndex, e.index(heads));
        Value rowBase = e.add(e.mul(queryBlock, e.index(kBlockRows)),
                              e.mul(warp, e.index(kWarpRows)));
        Value hasRows = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                                rowBase, e.index(queries));
        auto ifRows = b.create<scf::IfOp>(loc, hasRows, /*withElse=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ifRows.thenBlock()->getTerminator());

        Value rows[2] = {e.add(rowBase, group),
                         e.add(rowBase, e.add(group, e.index(8)))};
        Value loadRows[2] = {e.minIndex(rows[0], queries - 1),
                             e.minIndex(rows[1], queries - 1)};
        // q's rows as A fragments, one per 16 columns.
        SmallVector<SmallVector<Value, 4>> queryFragments;
        for (int64_t kk = 0; kk < width / 16; ++kk) {
          Value low = e.add(pairColumn, e.index(kk * 16));
          Value high = e.add(low, e.index(8));
          queryFragments.push_back(
              {e.loadPair(q, {batch, head, loadRows[0], low}),
               e.loadPair(q, {batch, head, loadRows[1], low}),
               e.loadPair(q, {batch, head, loadRows[0], high}),
               e.loadPair(q, {batch, head, loadRows[1], high})});
        }
        Value end = causal
                        ? e.minIndex(e.add(rowBase, e.index(kWarpRows)), keys)
                        : e.index(keys);

        int64_t valueTiles = valueWidth / 8;
        SmallVector<Value> init = {e.f32(minusInf), e.f32(minusInf), e.f32(0.0),
                                   e.f32(0.0)};
        for (int64_t i = 0; i < valueTiles * 4; ++i)
          init.push_back(e.f32(0.0));
        auto walk = b.create<scf::ForOp>(
            loc, e.index(0), end, e.index(kKeyTile), init,
            [&](OpBuilder &nested, Location, Value start, ValueRange state) {
              OpBuilder::InsertionGuard inner(b);
              b.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
              // Scores: 8 tiles of 8 keys; element i of a tile is row
              // rows[i / 2], key tile start + pairColumn + i % 2.
              SmallVector<SmallVector<Value, 4>> scores;
              SmallVector<SmallVector<Value, 4>> scoreKeys;
              for (int64_t nt = 0; nt < kKeyTile / 8; ++nt) {
                Value tileStart = e.add(start, e.index(nt * 8));
                Value keyRow = e.minIndex(e.add(tileStart, group), keys - 1);
                SmallVector<Value, 4> acc = {e.f32(0), e.f32(0), e.f32(0),
                                             e.f32(0)};
                for (int64_t kk = 0; kk < width / 16; ++kk) {
                  Value low = e.add(pairColumn, e.index(kk * 16));
                  Value high = e.add(low, e.index(8));
                  SmallVector<Value, 2> keyFragment = {
                      e.loadPair(k, {batch, head, keyRow, low}),
                      e.loadPair(k, {batch, head, keyRow, high})};
                  acc = e.mma(queryFragments[kk], keyFragment, acc);
                }
                SmallVector<Value, 4> tile, tileKeys;
                for (int64_t i = 0; i < 4; ++i) {
                  Value row = rows[i / 2];
                  Value key =
                      e.add(e.add(tileStart, pairColumn), e.index(i % 2));
                  Value visible = b.create<arith::CmpIOp>(
                      loc, arith::CmpIPredicate::ult, key, e.index(keys));
                  if (causal)
                    visible = b.create<arith::AndIOp>(
                        loc, visible,
                        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule,
                                                key, row));
                  Value clampedKey = e.minIndex(key, keys - 1);
                  if (mask) {
                    auto maskType = cast<MemRefType>(mask.getType());
                    Value coords[] = {batch, head, loadRows[i / 2], clampedKey};
                    SmallVector<Value> indices;
                    int64_t rank = maskType.getRank();
                    for (int64_t axis = 0; axis < rank; ++axis)
                      indices.push_back(maskType.getDimSize(axis) == 1
                                            ? e.index(0)
                                            : coords[4 - rank + axis]);
                    visible = b.create<arith::AndIOp>(
                        loc, visible,
                        b.create<memref::LoadOp>(loc, mask, indices));
                  }
                  Value score =
                      b.create<arith::MulFOp>(loc, acc[i], e.f32(scale));
                  tile.push_back(b.create<arith::SelectOp>(loc, visible, score,
                                                           e.f32(minusInf)));
                  tileKeys.push_back(clampedKey);
                }
                scores.push_back(tile);
                scoreKeys.push_back(tileKeys);
              }
              // The rows' maxima over the 4 threads of each row.
              Value maxima[2] = {state[0], state[1]};
              for (auto &tile : scores)
                for (int64_t i = 0; i < 4; ++i)
                  maxima[i / 2] = e.fmax(maxima[i / 2], tile[i]);
              Value pivots[2], rescale[2], sums[2];
              for (int64_t r = 0; r < 2; ++r) {
                maxima[r] = e.fmax(maxima[r], e.shuffleXor(maxima[r], 1));
                maxima[r] = e.fmax(maxima[r], e.shuffleXor(maxima[r], 2));
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
              // Probabilities, summed unrounded, dropped and rounded for v.
              SmallVector<SmallVector<Value, 4>> weights;
              for (auto [nt, tile] : llvm::enumerate(scores)) {
                SmallVector<Value, 4> tileWeights;
                for (int64_t i = 0; i < 4; ++i) {
                  Value p = b.create<math::ExpOp>(
                      loc,
                      b.create<arith::SubFOp>(loc, tile[i], pivots[i / 2]));
                  sums[i / 2] = b.create<arith::AddFOp>(loc, sums[i / 2], p);
                  if (dropoutKey)
                    p = b.create<arith::MulFOp>(
                        loc, p,
                        dropoutFactor(e, dropoutKey, dropout, batch, head,
                                      rows[i / 2], scoreKeys[nt][i], heads,
                                      queries, keys));
                  tileWeights.push_back(p);
                }
                weights.push_back(tileWeights);
              }
              // o += P v, 16 keys per product.
              for (int64_t ks = 0; ks < kKeyTile / 16; ++ks) {
                auto &lowTile = weights[2 * ks],
                     &highTile = weights[2 * ks + 1];
                SmallVector<Value, 4> probabilities = {
                    e.packRounded(lowTile[0], lowTile[1]),
                    e.packRounded(lowTile[2], lowTile[3]),
                    e.packRounded(highTile[0], highTile[1]),
                    e.packRounded(highTile[2], highTile[3])};
                Value firstKey =
                    e.add(e.add(start, e.index(ks * 16)), pairColumn);
                Value keyRows[4];
                for (int64_t i = 0; i < 4; ++i)
                  keyRows[i] = e.minIndex(
                      e.add(firstKey, e.index((i / 2) * 8 + i % 2)), keys - 1);
                for (int64_t vt = 0; vt < valueTiles; ++vt) {
                  Value column = e.add(group, e.index(vt * 8));
                  auto element = [&](int64_t i) -> Value {
                    return b.create<memref::LoadOp>(
                        loc, v, ValueRange{batch, head, keyRows[i], column});
                  };
                  SmallVector<Value, 2> valueFragment = {
                      e.pack(element(0), element(1)),
                      e.pack(element(2), element(3))};
                  SmallVector<Value, 4> acc(accumulators.begin() + vt * 4,
                                            accumulators.begin() + vt * 4 + 4);
                  acc = e.mma(probabilities, valueFragment, acc);
                  for (int64_t i = 0; i < 4; ++i)
                    accumulators[vt * 4 + i] = acc[i];
                }
              }
              SmallVector<Value> next = {maxima[0], maxima[1], sums[0],
                                         sums[1]};
              next.append(accumulators);
              b.create<scf::YieldOp>(loc, next);
            });

        // Each row's sum over its 4 threads, then O = o / l and L = m + log l.
        Value rowSums[2], rowMaxima[2] = {walk.getResult(0), walk.getResult(1)};
        for (int64_t r = 0; r < 2; ++r) {
          Value sum = walk.getResult(2 + r);
          sum = b.create<arith::AddFOp>(loc, sum, e.shuffleXor(sum, 1));
          rowSums[r] = b.create<arith::AddFOp>(loc, sum, e.shuffleXor(sum, 2));
        }
        Type element = queryType.getElementType();
        for (int64_t r = 0; r < 2; ++r) {
          Value inRange = b.create<arith::CmpIOp>(
              loc, arith::CmpIPredicate::ult, rows[r], e.index(queries));
          auto ifRow = b.create<scf::IfOp>(loc, inRange, /*withElse=*/false);
          OpBuilder::InsertionGuard rowGuard(b);
          b.setInsertionPoint(ifRow.thenBlock()->getTerminator());
          for (int64_t vt = 0; vt < valueTiles; ++vt) {
            auto pairType = VectorType::get({2}, element);
            Value pair = b.create<arith::ConstantOp>(
                loc,
                DenseElementsAttr::get(pairType, b.getFloatAttr(element, 0)));
            for (int64_t c = 0; c < 2; ++c) {
              Value o = b.create<arith::DivFOp>(
                  loc, walk.getResult(4 + vt * 4 + r * 2 + c), rowSums[r]);
              pair = b.create<vector::InsertOp>(
                  loc, b.create<arith::TruncFOp>(loc, element, o), pair, c);
            }
            b.create<vector::StoreOp>(
                loc, pair, out,
                ValueRange{batch, head, rows[r],
                           e.add(pairColumn, e.index(vt * 8))});
          }
          Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                pairColumn, e.index(0));
          auto ifFirst = b.create<scf::IfOp>(loc, first, /*withElse=*/false);
          b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
          Value logSum = b.create<arith::AddFOp>(
              loc, rowMaxima[r], b.create<math::LogOp>(loc, rowSums[r]));
          b.create<memref::StoreOp>(loc, logSum, lse,
                                    ValueRange{batch, head, rows[r]});
        }
      });
  return LaunchShape{grid, kWarps * kGpuWarpSize};
}

} // namespace

FailureOr<LaunchShape> emitAttentionPass(KernelBuilder &kb,
                                         mdlrt::AttentionPassOp pass) {
  if (hasTensorCoreForward(pass))
    return emitForwardMma(kb, pass);
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
