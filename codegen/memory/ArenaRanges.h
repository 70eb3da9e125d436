// Which bytes of the arena (or of a kernel's buffer argument) a memref
// covers and which bytes an op may write: the conservative answers
// --mdl-outline-kernels needs before it recomputes a scalar load inside a
// kernel that runs later than the load did, and that the GPU step lists
// record for kernelcheck.
#ifndef MODELC_CODEGEN_MEMORY_ARENARANGES_H
#define MODELC_CODEGEN_MEMORY_ARENARANGES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace modelc {

/// Bytes [begin, end) of the arena, and the element type of the memref
/// that covers them (null when several or none do).
struct ArenaRange {
  int64_t begin = 0;
  int64_t end = 0;
  mlir::Type element;

  bool overlaps(const ArenaRange &other) const {
    return begin < other.end && other.begin < end;
  }
};

/// Whether `type`'s layout has a static offset and static strides.
bool hasStaticLayout(mlir::MemRefType type);

/// A range of bytes relative to the start of `base`: a block argument (the
/// arena of a program function, a buffer argument of a kernel).
struct BasedRange {
  mlir::Value base;
  ArenaRange range;
};

/// The bytes that `memref` may address, relative to the block argument it
/// is cut from: `memref` must be that argument itself or reach it through
/// view ops (subview, expand/collapse_shape, cast, transpose, ...) and
/// `memref.view`s with constant byte shifts; some memref on that chain must
/// have a static shape and strided layout, which bounds the elements.
/// nullopt otherwise.
std::optional<BasedRange> getBasedRange(mlir::Value memref);

/// The bytes of `arena` that `memref` may address. `memref` must be `arena`
/// itself or reach it through view ops (subview, expand/collapse_shape,
/// cast, transpose, ...) and at most one `memref.view` of `arena` with a
/// constant byte shift; some memref on that chain must have a static shape
/// and strided layout, which bounds the elements. nullopt otherwise.
std::optional<ArenaRange> getArenaRange(mlir::Value memref, mlir::Value arena);

/// The arena bytes that `op` or an op nested in it may write (or free),
/// each with the element type of the memref written.
/// nullopt when one of them may write memory these rules cannot bound: an
/// op without memory effects that is not known to be side-effect free
/// (e.g. a call), a write to no named memref, or a memref getArenaRange
/// cannot place.
std::optional<llvm::SmallVector<ArenaRange>>
getWrittenArenaRanges(mlir::Operation *op, mlir::Value arena);

/// The bytes that `op` or an op nested in it may write, each relative to
/// the block argument it is cut from (getBasedRange) and with the element
/// type of the memref written; nullopt as for getWrittenArenaRanges.
std::optional<llvm::SmallVector<BasedRange>>
getWrittenBasedRanges(mlir::Operation *op);

} // namespace modelc

#endif // MODELC_CODEGEN_MEMORY_ARENARANGES_H
