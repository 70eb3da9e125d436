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

} // namespace modelc

#endif // MODELC_PASSES_PASSES_H
