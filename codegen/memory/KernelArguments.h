// What a call of a kernel passes (docs/codegen/kernels.md): each buffer
// argument a view of the arena at a constant byte offset, each i64 argument
// an `mdlrt.launch_constant`. The GPU step lists record these numbers, the
// CPU lowering derives the arguments' alignment and aliasing from them, and
// both place what a kernel writes in the arena through them.
#ifndef MODELC_CODEGEN_MEMORY_KERNELARGUMENTS_H
#define MODELC_CODEGEN_MEMORY_KERNELARGUMENTS_H

#include "codegen/memory/ArenaRanges.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace modelc {

/// One argument of a launch.
struct LaunchArgument {
  enum class Kind { Buffer, Scalar };
  Kind kind = Kind::Buffer;
  /// Buffer: the byte offset in the arena of its first byte; Scalar: the
  /// i64's bits.
  int64_t value = 0;
  /// Buffer: its bytes (elements times their size; booleans a byte each).
  int64_t bytes = 0;
};

/// The bytes of a static memref with identity layout, as the plan lays it
/// out (booleans a byte each, as LLVM stores i1).
int64_t getBufferBytes(mlir::MemRefType type);

/// The arguments of `call`, a call of a kernel in a planned program
/// function whose arena is `arena`: a buffer must be the arena or a
/// `memref.view` of it at a constant byte shift (identity layout), an i64 an
/// `mdlrt.launch_constant`. nullopt otherwise.
std::optional<llvm::SmallVector<LaunchArgument>>
getLaunchArguments(mlir::func::CallOp call, mlir::Value arena);

/// Makes every `mdlrt.launch_constant` under `root` an `arith.constant`:
/// what a target does with those the outlining left in program functions
/// (the CPU's calls pass them) or in a kernel's work.
void materializeLaunchConstants(mlir::Operation *root);

/// A range a kernel writes, relative to the start of its buffer argument
/// `argument`.
struct ArgumentWrite {
  unsigned argument = 0;
  ArenaRange range;
};

/// What the body of `kernel` may write, each range relative to one of its
/// buffer arguments (getWrittenBasedRanges); nullopt when a write cannot be
/// placed so.
std::optional<llvm::SmallVector<ArgumentWrite>>
getKernelWrites(mlir::func::FuncOp kernel);

/// The arena ranges that a launch with `arguments` writes, given what the
/// kernel writes relative to its arguments.
llvm::SmallVector<ArenaRange>
placeWrites(llvm::ArrayRef<ArgumentWrite> writes,
            llvm::ArrayRef<LaunchArgument> arguments);

} // namespace modelc

#endif // MODELC_CODEGEN_MEMORY_KERNELARGUMENTS_H
