// The embedded manifest (schema/manifest.fbs): the program functions in
// their table order and the flatbuffer that describes the planned module.
#ifndef MODELC_CODEGEN_MANIFEST_MANIFESTWRITER_H
#define MODELC_CODEGEN_MANIFEST_MANIFESTWRITER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace modelc {

/// A function of the program ABI's `modelc_functions` table.
struct ProgramFunction {
  mlir::func::FuncOp op;
  std::string symbol; // C name, e.g. modelc_fn_0_fashion_fwd_bwd
  std::string kind;   // mdl.function: fwd_bwd, update, update_chunk, eval
                      // or infer
  std::string entry;  // mdl.entry
  unsigned index;     // position in the table
};

/// The functions marked `mdl.function`, in module order, which is their
/// table order. Each gets the C symbol `modelc_fn_<index>_<name>` with
/// every character of the name outside [A-Za-z0-9_] replaced by `_` (the
/// index keeps sanitised names unique). Fails, with a diagnostic, on an
/// unknown kind.
mlir::FailureOr<std::vector<ProgramFunction>>
collectProgramFunctions(mlir::ModuleOp module);

/// The manifest of a module after --mdl-plan-memory: its declarations
/// (mdl.param, mdl.buffer, mdl.data, mdl.train, mdl.infer), the plan's
/// offsets and sizes, `functions` and `targets`. Fails, with a diagnostic,
/// when the module does not have what the schema needs.
mlir::FailureOr<std::string>
writeManifest(mlir::ModuleOp module, llvm::ArrayRef<ProgramFunction> functions,
              llvm::ArrayRef<std::string> targets);

} // namespace modelc

#endif // MODELC_CODEGEN_MANIFEST_MANIFESTWRITER_H
