// The whole compilation pipeline from the mdl module to an object file, in
// one place (docs/pipeline.md): used by modelc, and registered as named pass
// pipelines for modelc-opt.
#ifndef MODELC_CODEGEN_PIPELINE_H
#define MODELC_CODEGEN_PIPELINE_H

#include "codegen/cpu/ObjectEmitter.h"
#include "codegen/gpu/GpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace modelc {

struct PipelineOptions {
  /// Compute in f64 where the program computes in f32 (--mdl-widen-to-f64,
  /// a testing aid for gradient checks).
  bool widenToF64 = false;
  /// The machine the object file is for.
  CpuTargetOptions cpu;
  /// The cuda target: when set, the GPU program (docs/codegen/gpu.md) is
  /// built from the outlined module and goes into the manifest.
  std::optional<GpuTargetOptions> gpu;
};

/// The mdl passes and --mdl-lower-to-linalg: from MLIRGen's module to
/// linalg/tensor with mdlrt.buffer (`modelc --emit=lowered`).
void buildMdlToLinalgPipeline(mlir::OpPassManager &pm,
                              const PipelineOptions &options);

/// From linalg on tensors to the outlined kernels that every target takes:
/// mdl-fuse-elementwise, bufferization, mdl-gemm-to-library,
/// mdl-plan-memory, cse, mdl-outline-kernels.
void buildLinalgToKernelsPipeline(mlir::OpPassManager &pm);

/// From linalg on tensors to the LLVM dialect with the ABI's globals:
/// buildLinalgToKernelsPipeline, then mdl-lower-to-cpu.
void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm);

/// Registers `mdl-to-linalg`, `mdl-linalg-to-llvm` and `mdl-to-llvm` (the
/// two in sequence) for modelc-opt.
void registerModelcPipelines();

/// Where a module's IR stands: straight from MLIRGen (mdl ops in its
/// functions), after --mdl-lower-to-linalg (none left in them), or after
/// --mdl-plan-memory (the module has `mdl.arena_bytes`; its functions may
/// be partitioned into kernels already).
enum class InputStage { Mdl, Linalg, Planned };
InputStage detectInputStage(mlir::ModuleOp module);

/// Where runPipeline stops: linalg on tensors (--emit=lowered), the GPU
/// program built (--emit=ptx), or the LLVM dialect of the CPU program with
/// the manifest (and its GPU program, with the cuda target).
enum class PipelineEnd { Linalg, GpuProgram, LLVM };

/// Runs the passes from `from` to `to`. Diagnostics go to the module's
/// context.
mlir::LogicalResult runPipeline(mlir::ModuleOp module,
                                const PipelineOptions &options, InputStage from,
                                PipelineEnd to);

} // namespace modelc

#endif // MODELC_CODEGEN_PIPELINE_H
