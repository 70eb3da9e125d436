// The whole compilation pipeline from the mdl module to an object file, in
// one place (docs/pipeline.md): used by modelc, and registered as named pass
// pipelines for modelc-opt.
#ifndef MODELC_CODEGEN_PIPELINE_H
#define MODELC_CODEGEN_PIPELINE_H

#include "codegen/cpu/ObjectEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace modelc {

struct PipelineOptions {
  /// Compute in f64 where the program computes in f32 (--mdl-widen-to-f64,
  /// a testing aid for gradient checks).
  bool widenToF64 = false;
  /// The machine the object file is for.
  CpuTargetOptions cpu;
};

/// The mdl passes and --mdl-lower-to-linalg: from MLIRGen's module to
/// linalg/tensor with mdlrt.buffer (`modelc --emit=lowered`).
void buildMdlToLinalgPipeline(mlir::OpPassManager &pm,
                              const PipelineOptions &options);

/// From linalg on tensors to the LLVM dialect with the ABI's globals:
/// bufferization, mdl-gemm-to-library, mdl-plan-memory, mdl-lower-to-cpu.
void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm);

/// Registers `mdl-to-linalg`, `mdl-linalg-to-llvm` and `mdl-to-llvm` (the
/// two in sequence) for modelc-opt.
void registerModelcPipelines();

/// Where a module's IR stands: straight from MLIRGen (mdl ops in its
/// functions) or after --mdl-lower-to-linalg (none left in them).
enum class InputStage { Mdl, Linalg };
InputStage detectInputStage(mlir::ModuleOp module);

/// Runs the passes from `from` to linalg (`toLinalgOnly`) or to the LLVM
/// dialect. Diagnostics go to the module's context.
mlir::LogicalResult runPipeline(mlir::ModuleOp module,
                                const PipelineOptions &options, InputStage from,
                                bool toLinalgOnly);

} // namespace modelc

#endif // MODELC_CODEGEN_PIPELINE_H
