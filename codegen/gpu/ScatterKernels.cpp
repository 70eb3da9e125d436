// The GPU kernel of mdlrt.row_scatter_add (embedding_grad's scatter-add,
// docs/codegen/gpu.md): the sums of the op's portable loops, in parallel and
// in the same order.
//
// The table's V rows are split into R ranges of S = ceil(V / R) rows, and a
// thread takes one (range, column) point: it zeroes its column of its rows,
// then walks all n positions in order and, for each whose clamped id falls
// in its range, adds its column of the source row to the table. Each
// element is written by one thread only and gets its terms in position
// order, as on the CPU: no atomics, the same bits on every target and run.
// A warp is 32 adjacent columns of one range: the id it reads is the same
// for all of them (one broadcast load) and its source and table accesses
// are coalesced. R is chosen for about 2^17 threads (R * D), at most V:
// GPT-2's wte gradient (V = 50257, D = 768, n = 16384) is 171 ranges of
// 294 rows, each thread reading the 16,384 ids once; its wpe gradient
// (V = 1024) 171 ranges of 6 rows.
#include "codegen/gpu/GpuLowering.h"
#include "codegen/linalg/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace modelc {

namespace {

/// About this many threads per launch: enough to fill an H100 (132 SMs of
/// 2,048 threads) about half over.
constexpr int64_t kScatterThreads = int64_t(1) << 17;

} // namespace

FailureOr<LaunchShape> emitRowScatterAdd(KernelBuilder &kb,
                                         mdlrt::RowScatterAddOp op) {
  OpBuilder &b = kb.builder;
  Location loc = kb.loc;
  Value ids = kb.mapping.lookupOrDefault(op.getIds());
  Value source = kb.mapping.lookupOrDefault(op.getSource());
  Value table = kb.mapping.lookupOrDefault(op.getTable());
  auto tableType = cast<MemRefType>(op.getTable().getType());
  Type accumulator = tableType.getElementType();
  int64_t rows = tableType.getDimSize(0);
  int64_t width = tableType.getDimSize(1);
  int64_t count = cast<MemRefType>(op.getIds().getType()).getDimSize(0);
  int64_t ranges = std::clamp<int64_t>(
      llvm::divideCeil(kScatterThreads, std::max<int64_t>(width, 1)), 1, rows);
  int64_t span = llvm::divideCeil(rows, ranges);
  ranges = llvm::divideCeil(rows, span); // no range left empty
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(accumulator));
  return emitElementwise(kb, {ranges, width}, [&](ValueRange point) {
    Value column = point[1];
    Value first = b.create<arith::MulIOp>(loc, point[0], kb.index(span));
    Value next = b.create<arith::AddIOp>(loc, first, kb.index(span));
    Value end = b.create<arith::MinUIOp>(loc, next, kb.index(rows));
    emitLoop(kb, first, end, kb.index(1), [&](Value row) {
      b.create<memref::StoreOp>(loc, zero, table, ValueRange{row, column});
    });
    emitLoop(kb, kb.index(0), kb.index(count), kb.index(1), [&](Value i) {
      // The id as an index, clamped into the table (as the CPU's loops).
      Value id = b.create<memref::LoadOp>(loc, ids, i);
      Value row = lowering::clampIndex(
          b, loc, lowering::castToIndex(b, loc, id, op.getUnsignedIds()),
          rows);
      Value fromFirst =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, row, first);
      Value beforeEnd =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, end);
      Value mine = b.create<arith::AndIOp>(loc, fromFirst, beforeEnd);
      auto branch = b.create<scf::IfOp>(loc, mine, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      Value term = b.create<memref::LoadOp>(loc, source, ValueRange{i, column});
      if (term.getType() != accumulator)
        term = b.create<arith::ExtFOp>(loc, accumulator, term);
      Value sum = b.create<memref::LoadOp>(loc, table, ValueRange{row, column});
      b.create<memref::StoreOp>(loc, b.create<arith::AddFOp>(loc, sum, term),
                                table, ValueRange{row, column});
    });
  });
}

} // namespace modelc
