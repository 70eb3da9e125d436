// The codegen passes of modelc (declared in Passes.td).
#ifndef MODELC_CODEGEN_PASSES_H
#define MODELC_CODEGEN_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace modelc {

/// How a pass's error begins when the program, not the compiler, is at
/// fault: it exceeds a limit of every target (an arena past 2^62 bytes).
/// modelc reports it as the program's error (exit 1), not an internal one.
inline constexpr llvm::StringLiteral kProgramLimitPrefix =
    "the program exceeds a limit: ";

#define GEN_PASS_DECL
#include "codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/Passes.h.inc"

} // namespace modelc

#endif // MODELC_CODEGEN_PASSES_H
