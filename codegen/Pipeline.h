// The whole compilation pipeline from the mdl module to the LLVM dialect and
// the GPU program, built in one place (docs/pipeline.md) from one options
// struct: one builder per stage, used by modelc (runPipeline) and registered
// under the stage's name for modelc-opt, so that a pass added to a stage
// runs in both.
#ifndef MODELC_CODEGEN_PIPELINE_H
#define MODELC_CODEGEN_PIPELINE_H

#include "codegen/cpu/ObjectEmitter.h"
#include "codegen/gpu/GpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

#include <optional>

namespace mlir {
class OpPassManager;
} // namespace mlir

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

// The stages, in order. Each builder appends its passes to a pass manager
// on builtin.module; the name in brackets is its modelc-opt pipeline. Every
// builder takes the options, whether its stage reads any yet or not, so that
// a new option reaches any stage without changing the callers.

/// [mdl-to-linalg] The mdl passes and --mdl-lower-to-linalg: from MLIRGen's
/// module to linalg/tensor with mdlrt.buffer (`modelc --emit=lowered`).
void buildMdlToLinalgPipeline(mlir::OpPassManager &pm,
                              const PipelineOptions &options);

/// [mdl-linalg-to-kernels] From linalg on tensors to the outlined kernels
/// that every target takes: mdl-fuse-elementwise, bufferization,
/// mdl-gemm-to-library, mdl-plan-memory, cse, mdl-outline-kernels.
void buildLinalgToKernelsPipeline(mlir::OpPassManager &pm,
                                  const PipelineOptions &options);

/// [mdl-kernels-to-gpu] The cuda target's GPU program: mdl-lower-to-gpu,
/// then mdl-serialize-gpu for `options`' architectures, which leaves it as
/// kGpuProgramAttrName. It consumes the kernels, so modelc runs it on a
/// clone of the outlined module (`modelc --emit=ptx`).
void buildKernelsToGpuProgramPipeline(mlir::OpPassManager &pm,
                                      const GpuTargetOptions &options);

/// [mdl-kernels-to-cpu] The CPU program: mdl-lower-to-cpu, to the LLVM
/// dialect with the ABI's globals and the manifest.
void buildKernelsToCpuPipeline(mlir::OpPassManager &pm,
                               const PipelineOptions &options);

/// Registers the four stages under their names, and for convenience
/// `mdl-linalg-to-llvm` (mdl-linalg-to-kernels, mdl-kernels-to-cpu) and
/// `mdl-to-llvm` (mdl-to-linalg, then mdl-linalg-to-llvm), for modelc-opt.
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

/// Runs the stages from `from` to `to`: mdl-to-linalg,
/// mdl-linalg-to-kernels, with the cuda target mdl-kernels-to-gpu on a
/// clone (its GPU program copied to `module`), mdl-kernels-to-cpu. Each
/// stage's passes report under `timing` (--mlir-timing). Diagnostics go to
/// the module's context.
mlir::LogicalResult runPipeline(mlir::ModuleOp module,
                                const PipelineOptions &options, InputStage from,
                                PipelineEnd to, mlir::TimingScope &timing);

} // namespace modelc

#endif // MODELC_CODEGEN_PIPELINE_H
