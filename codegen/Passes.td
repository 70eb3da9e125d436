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
  let description = [{
    `linalg.matmul`, `linalg.batch_matmul` and their `_transpose_a` /
    `_transpose_b` forms on f32/f64 memrefs that BLAS can address become
    `mdlrt.gemm`; a zero `linalg.fill` of the same C just before becomes
    beta = 0 (docs/codegen/memory-plan.md).

    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
    linalg.matmul_transpose_b ins(%a, %b : memref<4x8xf32>, memref<16x8xf32>)
                              outs(%c : memref<4x16xf32>)
    // becomes
    mdlrt.gemm %a, %b, %c alpha = 1.000000e+00 beta = 0.000000e+00 transpose_b
        : memref<4x8xf32>, memref<16x8xf32>, memref<4x16xf32>
    ```
  }];
  let dependentDialects = ["mlir::mdlrt::MdlrtDialect", "mlir::memref::MemRefDialect"];
}

def MdlPlanMemory : Pass<"mdl-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place every buffer and temporary in one arena";
  let description = [{
    Gives each `mdl.buffer`/`mdl.param` a fixed offset in the persistent
    region and each `memref.alloc` an offset in the scratch region that
    follows, reusing space whose liveness has ended; rewrites every program
    function to take the arena as its one argument. Records the offsets and
    `mdl.arena_bytes`/`mdl.persistent_bytes` (docs/codegen/memory-plan.md).

    ```mlir
    func.func @"T.fwd_bwd"() attributes {mdl.function = "fwd_bwd", ...} {
      %w = mdlrt.buffer @w : memref<3x5xf32>
      %t = memref.alloc() : memref<2x50xf32>
    // becomes
    func.func @"T.fwd_bwd"(%arena: memref<4352xi8>) attributes {...} {
      %w = memref.view %arena[%c0][] : memref<4352xi8> to memref<3x5xf32>
      %t = memref.view %arena[%c256][] : memref<4352xi8> to memref<2x50xf32>
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def MdlLowerToCpu : Pass<"mdl-lower-to-cpu", "mlir::ModuleOp"> {
  let summary = "Lower planned functions to the LLVM dialect for the CPU";
  let description = [{
    Writes the manifest from the declarations and erases them; renames the
    program functions to C symbols; moves each loop nest into a kernel
    function; `mdlrt.gemm` becomes calls to `modelc_gemm_f32/f64`; linalg
    becomes loops; everything then becomes the LLVM dialect, with the
    function table `modelc_functions` and the embedded manifest
    (docs/codegen/cpu.md).

    ```mlir
    func.func @"T.fwd_bwd"(%arena: memref<512xi8>) attributes {...}
    // becomes
    llvm.func @modelc_fn_0_T_fwd_bwd(%arena: !llvm.ptr {llvm.align = 64 : i64,
                                                        llvm.noalias})
    llvm.mlir.global external constant @modelc_functions() : !llvm.array<1 x ptr>
    ```
  }];
}

#endif // MODELC_CODEGEN_PASSES_TD
