// The codegen passes of modelc (declared in Passes.td).
#ifndef MODELC_CODEGEN_PASSES_H
#define MODELC_CODEGEN_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace modelc {

#define GEN_PASS_DECL
#include "codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/Passes.h.inc"

} // namespace modelc

#endif // MODELC_CODEGEN_PASSES_H
