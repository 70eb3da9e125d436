// The target-neutral passes of modelc (declared in Passes.td).
#ifndef MODELC_PASSES_PASSES_H
#define MODELC_PASSES_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace modelc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Whether `op` is a composite op that --mdl-decompose expands into simpler
/// mdl ops (mdl.dropout, expanded there too, is not one: it depends on the
/// function it is in). Composite ops have no gradient and no lowering.
bool isComposite(mlir::Operation *op);

} // namespace modelc

#endif // MODELC_PASSES_PASSES_H
