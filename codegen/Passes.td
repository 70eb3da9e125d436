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
    "mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
    "mlir::mdlrt::MdlrtDialect"];
}

def MdlFuseElementwise : Pass<"mdl-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuse chains of elementwise linalg.generic ops on tensors";
  let description = [{
    A `linalg.generic` whose loops are all parallel and whose one result has
    one use, as an input of another `linalg.generic` (elementwise or a
    reduction) that reads it element for element (its indexing map for that
    operand is a permutation), is merged into its user (upstream's
    elementwise fusion with that control): one loop nest (one kernel)
    instead of two and no temporary between them, in the user's loop order.
    First, a generic with a reduction loop (or several results) that
    computes again what an earlier one computed from the same operands
    (layer norm's backward recomputing the forward's row statistics,
    cross-entropy's backward its row maxima) is replaced by the earlier
    one, its fill and empty tensor erased with it.
    A `tensor.expand_shape` that alone reads such a producer's result, and
    that one generic alone reads, moves above the producer (upstream's
    reshape propagation by expansion), so the two fuse through it.
    Nothing else is fused through broadcasts (a producer whose body is one
    conversion, a cast, is: repeating it per use gives the same value), into
    initial values or into several users, so no element is computed twice
    and the arithmetic of each element is exactly the unfused one.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
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

def MdlElideCopies : Pass<"mdl-elide-copies", "mlir::ModuleOp"> {
  let summary = "Write an elementwise result where its copy would put it";
  let description = [{
    After bufferization, an elementwise `linalg.generic` that fills a fresh
    allocation whose only other use is a `memref.copy` into `dst` writes
    `dst` itself instead, and the copy and the allocation go, when nothing
    between the two touches `dst` and the generic reads `dst`, if at all,
    only element for element at the place it writes (so each element is read
    before it is overwritten). The accumulation of a gradient (`grad = grad
    + d`) then updates the buffer in place: one kernel and one pass over it
    instead of two (docs/codegen/memory-plan.md).

    ```mlir
    %t = memref.alloc() : memref<768xf32>
    linalg.generic ... ins(%g, %d : ...) outs(%t : memref<768xf32>) { addf }
    memref.copy %t, %g : memref<768xf32> to memref<768xf32>
    // becomes
    linalg.generic ... ins(%g, %d : ...) outs(%g : memref<768xf32>) { addf }
    ```
  }];
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

def MdlOutlineKernels : Pass<"mdl-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Partition each planned program function into kernels";
  let description = [{
    Each top-level piece of work of a program function (an op with regions
    and no results, `memref.copy`, a scalar `memref.store`) moves into a
    kernel: a private function numbered across the module in function-table
    order (`mdl.kernel = index`) that takes the buffers it touches as
    arguments. A buffer is a `memref.view` of the arena at a constant byte
    shift, or, for a contiguous operand that only the work uses, a view of
    its own bytes; an `mdlrt.launch_constant` is an (i64) argument too. A kernel clones the other views, constants and scalar
    computations it uses, scalar loads included, which is valid only when
    no work or GEMM between the load and the kernel may write the loaded
    bytes (else an error). The function keeps its `mdlrt.gemm`s and calls
    the kernels in place of their work (docs/codegen/kernels.md).

    ```mlir
    func.func @"T.update"(%arena: memref<512xi8>) attributes {mdl.function = "update", ...} {
      %hyper = memref.view %arena[%c192][] : memref<512xi8> to memref<f64>
      %lr = memref.load %hyper[] : memref<f64>
      linalg.generic ... ins(%g : memref<8xf32>) outs(%w : memref<8xf32>) { ... %lr ... }
    // becomes
    func.func private @"T.update_k0"(%hyper: memref<f64>, %g: memref<8xf32>, %w: memref<8xf32>)
        attributes {mdl.kernel = 0 : i64} {
      %lr = memref.load %hyper[] : memref<f64>
      ...
      linalg.generic ... ins(%g : memref<8xf32>) outs(%w : memref<8xf32>) { ... %lr ... }
      return
    }
    func.func @"T.update"(%arena: memref<512xi8>) attributes {mdl.function = "update", ...} {
      %hyper = memref.view %arena[%c192][] : memref<512xi8> to memref<f64>
      ...
      call @"T.update_k0"(%hyper, %g, %w) : (memref<f64>, memref<8xf32>, memref<8xf32>) -> ()
      return
    }
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::arith::ArithDialect"];
}

def MdlDedupeKernels : Pass<"mdl-dedupe-kernels", "mlir::ModuleOp"> {
  let summary = "Make structurally equal kernels one kernel";
  let description = [{
    After --mdl-outline-kernels: kernels with the same signature and bodies
    equal op for op (names, attributes, types, operands by position;
    locations ignored) become the first of them; every call of the others
    calls it. The kernels left are numbered 0..n-1 in their old order, and
    a name ending in `_k<index>` follows the new index
    (docs/codegen/kernels.md).

    ```mlir
    func.func private @"T.fwd_bwd_k0"(%x: memref<8xf32>, %y: memref<8xf32>) attributes {mdl.kernel = 0 : i64} {...}
    func.func private @"T.fwd_bwd_k1"(%x: memref<8xf32>, %y: memref<8xf32>) attributes {mdl.kernel = 1 : i64} {...}
    // the same body: k1 goes, its calls call k0
    ```
  }];
}

def MdlLowerToCpu : Pass<"mdl-lower-to-cpu", "mlir::ModuleOp"> {
  let summary = "Lower planned functions to the LLVM dialect for the CPU";
  let description = [{
    Writes the manifest from the declarations and erases them; renames the
    program functions to C symbols and the kernels of --mdl-outline-kernels
    after them (internal, never inlined); `mdlrt.gemm` becomes calls to
    `modelc_gemm_f32/f64`; linalg becomes loops; everything then becomes the
    LLVM dialect, with the function table `modelc_functions`, the kernel
    table `modelc_cpu_kernels` and the embedded manifest
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

def MdlLowerToGpu : Pass<"mdl-lower-to-gpu", "mlir::ModuleOp"> {
  let summary = "Map the kernels onto GPU threads; program functions become GPU steps";
  let description = [{
    Takes the outlined module (--mdl-outline-kernels): each `mdl.kernel`
    function becomes a `gpu.func ... kernel` with the kernel's parameters
    (a pointer per buffer, an i64 per launch constant), its work mapped
    onto threads by the table of docs/codegen/gpu.md (elementwise
    grid-stride, a warp per row of a reduction, a block for a loop, one
    thread for a scalar store), with its launch shape in
    `mdl.grid`/`mdl.block`. Each program function gets its steps in
    `mdl.gpu_steps` (a launch per kernel call with the arena offsets and
    values it passes, a gemm with static offsets and strides per
    `mdlrt.gemm`) and an empty body; the kernel functions are erased.

    The kernels go into `parts` gpu.modules (0: one per 64 kernels, at
    most 16), consecutive kernels together, each marked `mdl.part`, so that
    the later passes compile the parts in parallel; the kernel table (name,
    grid, block, parameter kinds, part, reduction length) is left in
    `mdl.gpu_kernels`.

    ```mlir
    func.func private @"T.fwd_bwd_k0"(%y: memref<64xf32>) attributes {mdl.kernel = 0 : i64} {
      linalg.generic {iterator_types = ["parallel"]} ... outs(%y : memref<64xf32>)
      return
    }
    func.func @"T.fwd_bwd"(%arena: memref<512xi8>) attributes {mdl.function = "fwd_bwd", ...} {
      %y = memref.view %arena[%c256][] : memref<512xi8> to memref<64xf32>
      call @"T.fwd_bwd_k0"(%y) : (memref<64xf32>) -> ()
      return
    }
    // becomes
    gpu.module @modelc_kernels attributes {mdl.part = 0 : i64} {
      gpu.func @T_fwd_bwd_k0(%y: memref<64xf32>) kernel
          attributes {known_block_size = array<i32: 64, 1, 1>, mdl.block = 64 : i64, mdl.grid = 1 : i64} {
        ... scf.for %i = %first to %c64 step %stride { ... } ...
      }
    }
    func.func @"T.fwd_bwd"(%arena: memref<512xi8>) attributes {
        mdl.gpu_steps = [
          {args = array<i64: 256>, launch = @modelc_kernels::@T_fwd_bwd_k0, writes = [...]}
        ], ...}
    ```
  }];
  let options = [
    Option<"parts", "parts", "unsigned", /*default=*/"0",
           "gpu.modules to put the kernels in (0: one per 64 kernels, at "
           "most 16)">,
  ];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
    "mlir::memref::MemRefDialect", "mlir::affine::AffineDialect"];
}

def MdlSerializeGpu : Pass<"mdl-serialize-gpu", "mlir::ModuleOp"> {
  let summary = "PTX of the GPU kernels; the GPU program as an attribute";
  let description = [{
    After --mdl-lower-to-gpu and the lowering of its gpu.modules to NVVM
    (the stage mdl-kernels-to-gpu): each part goes through LLVM's NVPTX
    backend to PTX for each `arch` (gpu-module-to-binary's serialiser,
    libdevice linked), parts and architectures in parallel, and becomes a
    gpu.binary; the module gets `mdl.gpu_program`: the device arena and
    cuBLASLt workspace, the kernel table, each program function's steps and
    the PTX images, as the manifest's GpuProgram wants them
    (docs/codegen/gpu.md).
  }];
  let options = [
    ListOption<"archs", "arch", "std::string",
               "GPU architectures (default sm_80,sm_90)">,
    Option<"cudaToolkit", "cuda-toolkit", "std::string", /*default=*/"",
           "The CUDA toolkit whose nvvm/libdevice is linked (default: "
           "$CUDA_HOME, $CUDA_PATH, $CUDA_ROOT, the one ptxas on PATH is "
           "in, /usr/local/cuda)">,
  ];
}

def MdlAssembleGpu : Pass<"mdl-assemble-gpu", "mlir::ModuleOp"> {
  let summary = "Cubins of the GPU program's PTX images, with ptxas";
  let description = [{
    After --mdl-serialize-gpu: when ptxas is found, a cubin of every PTX
    image (in parallel) joins the images of `mdl.gpu_program` and the `bin`
    objects of its part's gpu.binary. An architecture that this ptxas does
    not know keeps its PTX only, with a warning; any other ptxas failure is
    an error with ptxas's output.
  }];
  let options = [
    Option<"ptxasSetting", "ptxas", "std::string", /*default=*/"\"auto\"",
           "ptxas to make cubins: auto (PATH, then /usr/local/cuda/bin), "
           "none, or a path">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect"];
}

#endif // MODELC_CODEGEN_PASSES_TD
