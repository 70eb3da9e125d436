// The steps of --mdl-lower-to-cpu (LowerToCpu.cpp), each in its own file.
#ifndef MODELC_CODEGEN_CPU_CPULOWERING_H
#define MODELC_CODEGEN_CPU_CPULOWERING_H

#include "codegen/manifest/ManifestWriter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace modelc {

/// Replaces every mdlrt.gemm with a call of modelc_gemm_f32/f64
/// (runtime/include/modelc/ProgramABI.h), declared with LLVM pointer types
/// so that the call lowers to the C signature whatever the calling
/// convention for memrefs. Must run after expand-strided-metadata: that pass
/// folds `extract_aligned_pointer_as_index(memref.view)` to the view's
/// source in MLIR 19, dropping the view's byte shift.
void lowerGemmsToCalls(mlir::ModuleOp module);

/// Moves each top-level op with regions and no results (a loop nest to be)
/// of each program function into a private function `<symbol>_k<n>(arena,
/// scalars...)` that rebuilds the views and constants it uses from the
/// arena; an op that uses a memref it cannot rebuild stays. Returns the
/// kernels' names.
llvm::SmallVector<std::string>
outlineKernels(llvm::ArrayRef<ProgramFunction> functions);

/// After the lowering to LLVM: gives the kernels internal linkage and
/// `noinline`, so that LLVM keeps them apart.
void markKernelsInternal(mlir::ModuleOp module,
                         llvm::ArrayRef<std::string> names);

/// The first half of the upstream lowering: linalg to loops and views to
/// explicit offsets (expand-strided-metadata).
void buildLinalgToLoopsPipeline(mlir::OpPassManager &pm);

/// The second half: every dialect to LLVM, program functions with the bare
/// pointer convention (`void f(uint8_t *arena)`).
void buildLoopsToLLVMPipeline(mlir::OpPassManager &pm);

/// Adds the ABI's globals to a module in the LLVM dialect: the function
/// table `modelc_functions` (`functions` in order), `modelc_num_functions`,
/// `modelc_manifest` (the bytes of `manifest`) and `modelc_manifest_size`.
void addProgramGlobals(mlir::ModuleOp module,
                       llvm::ArrayRef<ProgramFunction> functions,
                       llvm::StringRef manifest);

} // namespace modelc

#endif // MODELC_CODEGEN_CPU_CPULOWERING_H
