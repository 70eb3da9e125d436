// Warp-level tensor-core arithmetic for the generated GPU kernels: the
// operands of mma.sync.m16n8k16 (.row.col, 16-bit A and B, f32 C) loaded
// from [b, h, n, w] memrefs, the product, and the scaffolding of a kernel
// whose warps each take 16 rows (the fused attention's kernels,
// AttentionKernels.cpp and AttentionGradKernels.cpp).
//
// Fragment layouts are PTX's for m16n8k16: with g = lane / 4 and t = lane
// % 4, A (16 x 16) holds rows g and g + 8 at columns 2t, 2t + 1 and 2t + 8,
// 2t + 9, as four registers of two elements (row g low columns, row g + 8
// low, row g high, row g + 8 high); B (16 x 8) holds column g at rows 2t,
// 2t + 1 and 2t + 8, 2t + 9, as two registers; C (16 x 8) holds rows g and
// g + 8 at columns 2t and 2t + 1 (elements 0, 1 of row g, then 2, 3 of row
// g + 8). Two C tiles side by side (16 x 16) are an A operand once rounded
// to 16 bits: that is how a product's result feeds the next product.
#ifndef MODELC_CODEGEN_GPU_MMAFRAGMENTS_H
#define MODELC_CODEGEN_GPU_MMAFRAGMENTS_H

#include "codegen/gpu/GpuLowering.h"

namespace modelc {

/// Rows per warp (the m of m16n8k16) and warps per block.
inline constexpr int64_t kMmaWarpRows = 16;
inline constexpr int64_t kMmaWarps = 4;
inline constexpr int64_t kMmaBlockRows = kMmaWarpRows * kMmaWarps;

using Fragment = llvm::SmallVector<mlir::Value, 4>;

/// The values one thread works with: its lane's g and 2t, and builders.
struct MmaEmitter {
  KernelBuilder &kb;
  mlir::OpBuilder &b;
  mlir::Location loc;
  /// The 16-bit operand type: bf16 or f16.
  mlir::Type element;
  /// lane / 4 and 2 * (lane % 4), as index values.
  mlir::Value group, pairColumn;

  MmaEmitter(KernelBuilder &kb, mlir::Type element);

  mlir::Value index(int64_t value) { return kb.index(value); }
  mlir::Value f32(double value);
  mlir::Value add(mlir::Value x, mlir::Value y);
  mlir::Value mul(mlir::Value x, mlir::Value y);
  /// min(x, bound), for reads that must stay in bounds.
  mlir::Value clamp(mlir::Value x, int64_t bound);
  mlir::Value lessThan(mlir::Value x, int64_t bound);
  /// The thread's two rows of a warp's 16 from `rowBase` (g and g + 8), and
  /// the same clamped below `count` for reads.
  void threadRows(mlir::Value rowBase, int64_t count, mlir::Value (&rows)[2],
                  mlir::Value (&clamped)[2]);

  /// A from rows `rows` (g's and g + 8's, in bounds) of `mem[batch, head]`,
  /// columns `column` .. `column` + 15.
  Fragment loadA(mlir::Value mem, mlir::Value batch, mlir::Value head,
                 mlir::Value const (&rows)[2], int64_t column);
  /// B(k, n) = mem[batch, head, row, column + k]: n's row `row` (in bounds),
  /// 16 of its consecutive elements (two pairs).
  Fragment loadBFromRow(mlir::Value mem, mlir::Value batch, mlir::Value head,
                        mlir::Value row, int64_t column);
  /// B(k, n) = mem[batch, head, first + k, column]: one element from each
  /// of 4 rows (`first` + 2t, + 1, + 8, + 9, clamped below `rowCount`).
  Fragment loadBFromColumn(mlir::Value mem, mlir::Value batch, mlir::Value head,
                           mlir::Value first, int64_t rowCount,
                           mlir::Value column);
  /// Two C tiles (16 x 8 each, f32) as one A operand, rounded to 16 bits.
  Fragment tilesToA(llvm::ArrayRef<mlir::Value> low,
                    llvm::ArrayRef<mlir::Value> high);

  /// c + a b on the tensor cores.
  Fragment mma(llvm::ArrayRef<mlir::Value> a, llvm::ArrayRef<mlir::Value> bFrag,
               llvm::ArrayRef<mlir::Value> c);
  /// `value` of the thread lane ^ `offset` of the warp (f32).
  mlir::Value shuffleXor(mlir::Value value, int32_t offset);

  /// Stores the f32 pair (`low`, `high`) rounded to `mem`'s element type at
  /// [batch, head, row, column].
  void storePair(mlir::Value low, mlir::Value high, mlir::Value mem,
                 mlir::ValueRange indices);

private:
  mlir::Value loadPair(mlir::Value mem, mlir::ValueRange indices);
  mlir::Value pack(mlir::Value low, mlir::Value high);
};

/// A kernel whose blocks of kMmaWarps warps take kMmaBlockRows consecutive
/// rows (of `rows`) of one (batch, head) of `batches` x `heads`, grid-stride
/// over the blocks; `body(e, batch, head, rowBase)` runs for each warp whose
/// first row `rowBase` is in range. Returns the launch shape.
LaunchShape emitWarpRowKernel(KernelBuilder &kb, mlir::Type element,
                              int64_t batches, int64_t heads, int64_t rows,
                              llvm::function_ref<void(MmaEmitter &, mlir::Value,
                                                      mlir::Value, mlir::Value)>
                                  body);

} // namespace modelc

#endif // MODELC_CODEGEN_GPU_MMAFRAGMENTS_H
