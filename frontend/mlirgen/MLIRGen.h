// MLIRGen: emits the mdl dialect for an elaborated Program, one op per
// Program op (docs/dialect.md), with .mdl source locations.
#pragma once

#include "mlir/IR/OwningOpRef.h"

namespace mlir {
class MLIRContext;
class ModuleOp;
} // namespace mlir

namespace modelc {

class SourceManager;
struct Program;

/// Builds the module: one `mdl.param` per parameter, one `mdl.data` per data
/// set, one private `func.func` per specialised block, one `mdl.train` or
/// `mdl.infer` per entry. Loads the dialects it needs into `context`. The
/// module is verified; on failure the diagnostics have been reported through
/// `context` and the result is null (an internal error: sema only hands over
/// checked programs).
mlir::OwningOpRef<mlir::ModuleOp> generateMLIR(const Program &program,
                                               const SourceManager &sm,
                                               mlir::MLIRContext &context);

} // namespace modelc
