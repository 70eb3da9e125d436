// Warp-level tensor-core arithmetic (MmaFragments.h has the layouts). The
// product is inline PTX, mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}:
// MLIR 19's nvvm.mma.sync verifier rejects bf16 operands.
#include "codegen/gpu/MmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace modelc {

MmaEmitter::MmaEmitter(KernelBuilder &kb, Type element)
    : kb(kb), b(kb.builder), loc(kb.loc), element(element) {
  Value lane =
      b.create<arith::RemUIOp>(loc, kb.threadId(), index(kGpuWarpSize));
  group = b.create<arith::DivUIOp>(loc, lane, index(4));
  pairColumn = mul(b.create<arith::RemUIOp>(loc, lane, index(4)), index(2));
}

Value MmaEmitter::f32(double value) {
  return b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(value));
}

Value MmaEmitter::add(Value x, Value y) {
  return b.create<arith::AddIOp>(loc, x, y);
}

Value MmaEmitter::mul(Value x, Value y) {
  return b.create<arith::MulIOp>(loc, x, y);
}

Value MmaEmitter::clamp(Value x, int64_t bound) {
  return b.create<arith::MinUIOp>(loc, x, index(bound));
}

Value MmaEmitter::lessThan(Value x, int64_t bound) {
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, x,
                                 index(bound));
}

void MmaEmitter::threadRows(Value rowBase, int64_t count, Value (&rows)[2],
                            Value (&clamped)[2]) {
  rows[0] = add(rowBase, group);
  rows[1] = add(rows[0], index(8));
  clamped[0] = clamp(rows[0], count - 1);
  clamped[1] = clamp(rows[1], count - 1);
}

Value MmaEmitter::loadPair(Value mem, ValueRange indices) {
  Value pair = b.create<vector::LoadOp>(loc, VectorType::get({2}, element), mem,
                                        indices);
  Value word = b.create<vector::BitCastOp>(
      loc, VectorType::get({1}, b.getI32Type()), pair);
  return b.create<vector::ExtractOp>(loc, word, 0);
}

Value MmaEmitter::pack(Value low, Value high) {
  auto pairType = VectorType::get({2}, element);
  Value pair = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(pairType, b.getFloatAttr(element, 0.0)));
  pair = b.create<vector::InsertOp>(loc, low, pair, 0);
  pair = b.create<vector::InsertOp>(loc, high, pair, 1);
  Value word = b.create<vector::BitCastOp>(
      loc, VectorType::get({1}, b.getI32Type()), pair);
  return b.create<vector::ExtractOp>(loc, word, 0);
}

Fragment MmaEmitter::loadA(Value mem, Value batch, Value head,
                           Value const (&rows)[2], int64_t column) {
  Value low = add(pairColumn, index(column));
  Value high = add(low, index(8));
  return {loadPair(mem, {batch, head, rows[0], low}),
          loadPair(mem, {batch, head, rows[1], low}),
          loadPair(mem, {batch, head, rows[0], high}),
          loadPair(mem, {batch, head, rows[1], high})};
}

Fragment MmaEmitter::loadBFromRow(Value mem, Value batch, Value head, Value row,
                                  int64_t column) {
  Value low = add(pairColumn, index(column));
  return {loadPair(mem, {batch, head, row, low}),
          loadPair(mem, {batch, head, row, add(low, index(8))})};
}

Fragment MmaEmitter::loadBFromColumn(Value mem, Value batch, Value head,
                                     Value first, int64_t rowCount,
                                     Value column) {
  Value start = add(first, pairColumn);
  auto element = [&](int64_t offset) -> Value {
    Value row = clamp(add(start, index(offset)), rowCount - 1);
    return b.create<memref::LoadOp>(loc, mem,
                                    ValueRange{batch, head, row, column});
  };
  return {pack(element(0), element(1)), pack(element(8), element(9))};
}

Fragment MmaEmitter::tilesToA(ArrayRef<Value> low, ArrayRef<Value> high) {
  auto rounded = [&](Value x, Value y) {
    return pack(b.create<arith::TruncFOp>(loc, element, x),
                b.create<arith::TruncFOp>(loc, element, y));
  };
  return {rounded(low[0], low[1]), rounded(low[2], low[3]),
          rounded(high[0], high[1]), rounded(high[2], high[3])};
}

Fragment MmaEmitter::mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                         ArrayRef<Value> c) {
  std::string type = element.isBF16() ? "bf16" : "f16";
  std::string text = "mma.sync.aligned.m16n8k16.row.col.f32." + type + "." +
                     type +
                     ".f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, "
                     "{$10,$11,$12,$13};";
  SmallVector<Value> operands(a);
  operands.append(bFrag.begin(), bFrag.end());
  operands.append(c.begin(), c.end());
  Type f32Type = b.getF32Type();
  auto result = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32Type, f32Type, f32Type, f32Type});
  auto asmOp = b.create<LLVM::InlineAsmOp>(
      loc, result, operands, text, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f",
      /*has_side_effects=*/false, /*is_align_stack=*/false,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
  Fragment d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(b.create<LLVM::ExtractValueOp>(loc, asmOp.getResult(0), i));
  return d;
}

Value MmaEmitter::shuffleXor(Value value, int32_t offset) {
  return b
      .create<gpu::ShuffleOp>(loc, value, offset, kGpuWarpSize,
                              gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

void MmaEmitter::storePair(Value low, Value high, Value mem,
                           ValueRange indices) {
  Type type = cast<MemRefType>(mem.getType()).getElementType();
  auto pairType = VectorType::get({2}, type);
  Value pair = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(pairType, b.getFloatAttr(type, 0.0)));
  pair = b.create<vector::InsertOp>(
      loc, b.create<arith::TruncFOp>(loc, type, low), pair, 0);
  pair = b.create<vector::InsertOp>(
      loc, b.create<arith::TruncFOp>(loc, type, high), pair, 1);
  b.create<vector::StoreOp>(loc, pair, mem, indices);
}

LaunchShape
emitWarpRowKernel(KernelBuilder &kb, Type element, int64_t batches,
                  int64_t heads, int64_t rows,
                  function_ref<void(MmaEmitter &, Value, Value, Value)> body) {
  OpBuilder &b = kb.builder;
  Location loc = kb.loc;
  MmaEmitter e(kb, element);
  Value warp =
      b.create<arith::DivUIOp>(loc, kb.threadId(), e.index(kGpuWarpSize));
  int64_t blocksPerHead = (rows + kMmaBlockRows - 1) / kMmaBlockRows;
  int64_t totalBlocks = batches * heads * blocksPerHead;
  emitLoop(
      kb, kb.blockId(), e.index(totalBlocks), kb.gridDim(), [&](Value block) {
        Value headIndex =
            b.create<arith::DivUIOp>(loc, block, e.index(blocksPerHead));
        Value rowBlock =
            b.create<arith::RemUIOp>(loc, block, e.index(blocksPerHead));
        Value batch = b.create<arith::DivUIOp>(loc, headIndex, e.index(heads));
        Value head = b.create<arith::RemUIOp>(loc, headIndex, e.index(heads));
        Value rowBase = e.add(e.mul(rowBlock, e.index(kMmaBlockRows)),
                              e.mul(warp, e.index(kMmaWarpRows)));
        auto inRange = b.create<scf::IfOp>(loc, e.lessThan(rowBase, rows),
                                           /*withElse=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(inRange.thenBlock()->getTerminator());
        body(e, batch, head, rowBase);
      });
  return LaunchShape{std::min<int64_t>(totalBlocks, kGpuMaxGrid),
                     kMmaWarps * kGpuWarpSize};
}

} // namespace modelc
