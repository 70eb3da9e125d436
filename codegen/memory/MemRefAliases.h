// Which memrefs may share memory before the memory plan: the small alias
// analysis that mdl-gemm-to-library and mdl-plan-memory share.
#ifndef MODELC_CODEGEN_MEMORY_MEMREFALIASES_H
#define MODELC_CODEGEN_MEMORY_MEMREFALIASES_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace modelc {

/// The memref that `value` is a view of: follows subview, collapse_shape,
/// expand_shape, cast, reinterpret_cast, view and transpose back to the
/// value that no view op defines (an alloc, an mdlrt.buffer, a global, a
/// block argument, ...).
mlir::Value getAliasRoot(mlir::Value value);

/// Whether `a` and `b` may denote overlapping memory. An allocation
/// overlaps only its own views; distinct `mdlrt.buffer` symbols and
/// distinct globals never overlap; two `mdlrt.buffer` ops of one symbol
/// always do; anything else (e.g. function arguments) may.
bool mayAlias(mlir::Value a, mlir::Value b);

/// `root` and every memref derived from it: transitively, each memref-typed
/// result of an op that takes one of them as an operand (views, and
/// conservatively any other op, e.g. an scf.for that carries it). Region
/// arguments are not followed: callers count a use inside a region as a use
/// by the op that holds the region.
void collectDerivedMemRefs(mlir::Value root,
                           llvm::SmallVectorImpl<mlir::Value> &derived);

} // namespace modelc

#endif // MODELC_CODEGEN_MEMORY_MEMREFALIASES_H
