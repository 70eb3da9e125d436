// The codegen passes (docs/pipeline.md, stage 2), one per file, each with a
// lit test of the same name under test/Codegen/.
#ifndef MODELC_CODEGEN_PASSES_TD
#define MODELC_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def MdlLowerToLinalg : Pass<"mdl-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower mdl tensor ops to linalg, tensor, arith and math";
  let description = [{
    Every mdl op inside the program's functions becomes upstream tensor-level
    IR: elementwise ops and reductions as `linalg.generic`, GEMM-shaped work
    as `linalg.matmul`/`linalg.batch_matmul` and their transposed forms,
    conv2d and its gradients as im2col plus a GEMM. `mdl.load`,
    `mdl.param_ref` and `mdl.store` become `mdlrt.buffer` with
    `bufferization.to_tensor` / `bufferization.materialize_in_destination`.
  }];
  let dependentDialects = [
    "mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
    "mlir::arith::ArithDialect", "mlir::math::MathDialect",
    "mlir::bufferization::BufferizationDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect", "mlir::mdlrt::MdlrtDialect"];
}

def MdlGemmToLibrary : Pass<"mdl-gemm-to-library", "mlir::ModuleOp"> {
  let summary = "Turn the linalg matmul family on memrefs into mdlrt.gemm";
  let dependentDialects = ["mlir::mdlrt::MdlrtDialect", "mlir::memref::MemRefDialect"];
}

def MdlPlanMemory : Pass<"mdl-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place every buffer and temporary in one arena";
  let description = [{
    Gives each `mdl.buffer`/`mdl.param` a fixed offset in the persistent
    region and each `memref.alloc` an offset in the scratch region that
    follows, reusing space whose liveness has ended; rewrites every program
    function to take the arena as its one argument. Records the offsets and
    `mdl.arena_bytes`/`mdl.persistent_bytes`.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def MdlLowerToCpu : Pass<"mdl-lower-to-cpu", "mlir::ModuleOp"> {
  let summary = "Lower planned functions to the LLVM dialect for the CPU";
  let description = [{
    `mdlrt.gemm` becomes calls to `modelc_gemm_f32/f64`; linalg becomes
    loops; everything then becomes the LLVM dialect, with the function
    table `modelc_functions` and the embedded manifest.
  }];
}

#endif // MODELC_CODEGEN_PASSES_TD
