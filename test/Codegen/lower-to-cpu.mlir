// --mdl-lower-to-cpu: a planned module partitioned into kernels
// (--mdl-outline-kernels) becomes the LLVM dialect. Program functions take
// the arena as a bare pointer, kernels their buffers, under C names, with
// the alignment and aliasing every call of a kernel guarantees; mdlrt.gemm
// calls modelc_gemm_f32/f64 with plain pointer and integer arguments; math
// without an LLVM intrinsic calls libm; the ABI globals hold the function
// table, the kernel table (an entry per kernel that takes the arena and a
// step's arguments) and the manifest; no mdl declaration is left.
// RUN: modelc-opt %s --mdl-lower-to-cpu --split-input-file --verify-diagnostics \
// RUN:   | FileCheck %s --implicit-check-not='{{[ {]mdl(rt)?\.}}'

// libm for tanh, which LLVM has no intrinsic for.
// CHECK-LABEL: module {
// CHECK: llvm.func @tanhf(f32) -> f32

// Kernel 0, the loop nest y = tanh(t), named after its function: internal,
// never inlined; t (at 256) and y (at 192) are 64-byte aligned and apart.
// CHECK-LABEL: llvm.func internal @modelc_fn_0_T_fwd_bwd_k0(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.noalias}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.noalias}) attributes {no_inline
// CHECK: llvm.call @tanhf
// CHECK: llvm.return

// void modelc_fn_0_T_fwd_bwd(uint8_t *arena): t = x * w^T through the
// runtime's GEMM (transA 0, transB 1, M 2, N 4, K 8, lda 8, ldb 8, ldc 4,
// batch strides 0, batch 1; x at arena + 128, w at + 0, t at + 256), then
// the kernel on t and y (at + 192).
// CHECK-LABEL: llvm.func @modelc_fn_0_T_fwd_bwd(
// CHECK-SAME: %[[ARENA:.*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.noalias}) {
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-DAG: %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: %[[FOUR:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-DAG: %[[EIGHT:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-DAG: %[[ALPHA:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-DAG: %[[BETA:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-DAG: %[[X:.*]] = llvm.getelementptr %[[ARENA]][128] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-DAG: %[[T:.*]] = llvm.getelementptr %[[ARENA]][256] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-DAG: %[[Y:.*]] = llvm.getelementptr %[[ARENA]][192] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-DAG: %[[XI:.*]] = llvm.ptrtoint %[[X]]
// CHECK-DAG: %[[XP:.*]] = llvm.inttoptr %[[XI]]
// CHECK-DAG: %[[WI:.*]] = llvm.ptrtoint %[[ARENA]]
// CHECK-DAG: %[[WP:.*]] = llvm.inttoptr %[[WI]]
// CHECK-DAG: %[[TI:.*]] = llvm.ptrtoint %[[T]]
// CHECK-DAG: %[[TP:.*]] = llvm.inttoptr %[[TI]]
// CHECK: llvm.call @modelc_gemm_f32(%[[ZERO]], %[[ONE]], %[[TWO]], %[[FOUR]], %[[EIGHT]], %[[ALPHA]], %[[XP]], %[[EIGHT]], %[[ZERO]], %[[WP]], %[[EIGHT]], %[[ZERO]], %[[BETA]], %[[TP]], %[[FOUR]], %[[ZERO]], %[[ONE]])
// CHECK-NEXT: llvm.call @modelc_fn_0_T_fwd_bwd_k0(%[[T]], %[[Y]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.return

// CHECK-LABEL: llvm.func @modelc_fn_1_I_infer(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.noalias}) {

// The kernel's entry for the table: each buffer at the arena plus its
// offset from the arguments array.
// CHECK-LABEL: llvm.func internal @modelc_fn_0_T_fwd_bwd_k0_entry(
// CHECK-SAME: %[[EARENA:.*]]: !llvm.ptr {llvm.align = 64 : i64}, %[[ARGS:.*]]: !llvm.ptr)
// CHECK: %[[O0:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[P0:.*]] = llvm.getelementptr %[[EARENA]][%[[O0]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[O1:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[EARENA]][%[[O1]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: llvm.call @modelc_fn_0_T_fwd_bwd_k0(%[[P0]], %[[P1]])

// The runtime's GEMM with C types: pointers, i64 and the element type.
// CHECK: llvm.func @modelc_gemm_f32(i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)

// The function table in module order, its length, and the manifest.
// CHECK-LABEL: llvm.mlir.global external constant @modelc_functions() {addr_space = 0 : i32, alignment = 8 : i64} : !llvm.array<3 x ptr> {
// CHECK: %[[F0:.*]] = llvm.mlir.addressof @modelc_fn_0_T_fwd_bwd : !llvm.ptr
// CHECK: llvm.insertvalue %[[F0]], %{{.*}}[0] : !llvm.array<3 x ptr>
// CHECK: %[[F1:.*]] = llvm.mlir.addressof @modelc_fn_1_I_infer : !llvm.ptr
// CHECK: llvm.insertvalue %[[F1]], %{{.*}}[1] : !llvm.array<3 x ptr>
// CHECK: %[[F2:.*]] = llvm.mlir.addressof @modelc_fn_2_T_update : !llvm.ptr
// CHECK: llvm.insertvalue %[[F2]], %{{.*}}[2] : !llvm.array<3 x ptr>
// CHECK: llvm.mlir.global external constant @modelc_num_functions(3 : i64) {addr_space = 0 : i32, alignment = 8 : i64} : i64
// CHECK-LABEL: llvm.mlir.global external constant @modelc_cpu_kernels() {addr_space = 0 : i32, alignment = 8 : i64} : !llvm.array<1 x ptr> {
// CHECK: %[[K0:.*]] = llvm.mlir.addressof @modelc_fn_0_T_fwd_bwd_k0_entry : !llvm.ptr
// CHECK: llvm.insertvalue %[[K0]], %{{.*}}[0] : !llvm.array<1 x ptr>
// CHECK: llvm.mlir.global external constant @modelc_num_cpu_kernels(1 : i64) {addr_space = 0 : i32, alignment = 8 : i64} : i64
// CHECK: llvm.mlir.global external constant @modelc_manifest("{{.*}}tiny.mdl{{.*}}modelc_fn_1_I_infer{{.*}}modelc_fn_0_T_fwd_bwd{{.*}}") {addr_space = 0 : i32, alignment = 16 : i64}
// CHECK: llvm.mlir.global external constant @modelc_manifest_size({{[0-9]+}} : i64) {addr_space = 0 : i32, alignment = 8 : i64} : i64
module attributes {mdl.arena_bytes = 512 : i64, mdl.persistent_bytes = 256 : i64,
                   mdl.source_hash = "00ff", mdl.source_name = "tiny.mdl"} {
  mdl.param @w : tensor<4x8xf32> = zeros() {offset = 0 : i64}
  mdl.buffer @"T:in:x" : tensor<2x8xf32> {entry = "T", key = "x", offset = 128 : i64, phase = "train", role = "input"}
  mdl.buffer @"T:out:y" : tensor<2x4xf32> {entry = "T", key = "loss", offset = 192 : i64, phase = "train", role = "output"}
  mdl.data @d {
    mdl.field "x" : tensor<8xf32> = npy "x.npy"
  }
  mdl.train @T data @d outputs ["loss"] settings {batch = 2 : i64, steps = 3 : i64} {
  ^bb0(%x: tensor<2x8xf32>):
    %loss = mdl.constant dense<0.0> : tensor<f32>
    mdl.yield %loss : tensor<f32>
  }
  func.func private @"T.fwd_bwd_k0"(%t: memref<2x4xf32>, %y: memref<2x4xf32>) attributes {mdl.kernel = 0 : i64} {
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%t : memref<2x4xf32>) outs(%y : memref<2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %th = math.tanh %in : f32
      linalg.yield %th : f32
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<512xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %c192 = arith.constant 192 : index
    %c256 = arith.constant 256 : index
    %w = memref.view %arena[%c0][] : memref<512xi8> to memref<4x8xf32>
    %x = memref.view %arena[%c128][] : memref<512xi8> to memref<2x8xf32>
    %y = memref.view %arena[%c192][] : memref<512xi8> to memref<2x4xf32>
    %t = memref.view %arena[%c256][] : memref<512xi8> to memref<2x4xf32>
    mdlrt.gemm %x, %w, %t alpha = 1.0 beta = 0.0 transpose_b : memref<2x8xf32>, memref<4x8xf32>, memref<2x4xf32>
    call @"T.fwd_bwd_k0"(%t, %y) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
    return
  }
  func.func @"I.infer"(%arena: memref<512xi8>) attributes {mdl.entry = "I", mdl.function = "infer"} {
    return
  }
  func.func @"T.update"(%arena: memref<512xi8>) attributes {mdl.entry = "T", mdl.function = "update"} {
    return
  }
}

// -----

// Kernels recompute the scalars they use (here a load from a buffer and a
// loop that sums it). Calls decide the promises: k1 is called on h (at
// 896) and h2 (at 904), so 8-byte aligned; k0's second call passes a
// scalar inside c, so neither of its buffers is noalias. The kernel table
// follows the indices, not the module's order.
// CHECK-LABEL: llvm.func internal @modelc_fn_0_E_eval_k1(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 8 : i64, llvm.noalias}) attributes {no_inline
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> f64
// CHECK: llvm.fadd
// CHECK: llvm.store
// CHECK-LABEL: llvm.func internal @modelc_fn_0_E_eval_k0(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i64}, %{{.*}}: !llvm.ptr {llvm.align = 8 : i64}) attributes {no_inline
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> f64

// A batched f64 GEMM with a broadcast B: batch strides from the 3-D
// strides (A 15, C 12), 0 for the 2-D B; M 3, N 4, K 5, batch 3.
// CHECK-LABEL: llvm.func @modelc_fn_0_E_eval
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-DAG: %[[THREE:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK-DAG: %[[FOUR:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-DAG: %[[FIVE:.*]] = llvm.mlir.constant(5 : i64) : i64
// CHECK-DAG: %[[TWELVE:.*]] = llvm.mlir.constant(12 : i64) : i64
// CHECK-DAG: %[[FIFTEEN:.*]] = llvm.mlir.constant(15 : i64) : i64
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f64) : f64
// CHECK: llvm.call @modelc_gemm_f64(%[[ZERO]], %[[ZERO]], %[[THREE]], %[[FOUR]], %[[FIVE]], %[[ONE]], %{{[0-9]+}}, %[[FIVE]], %[[FIFTEEN]], %{{[0-9]+}}, %[[FOUR]], %[[ZERO]], %[[ONE]], %{{[0-9]+}}, %[[FOUR]], %[[TWELVE]], %[[THREE]])
// CHECK-NEXT: llvm.call @modelc_fn_0_E_eval_k0(%{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.call @modelc_fn_0_E_eval_k1(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.call @modelc_fn_0_E_eval_k1(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.call @modelc_fn_0_E_eval_k0(%{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.return

// CHECK-LABEL: llvm.mlir.global external constant @modelc_cpu_kernels()
// CHECK: llvm.mlir.addressof @modelc_fn_0_E_eval_k0_entry
// CHECK: llvm.mlir.addressof @modelc_fn_0_E_eval_k1_entry
// CHECK: llvm.mlir.global external constant @modelc_num_cpu_kernels(2 : i64)
module attributes {mdl.arena_bytes = 1024 : i64, mdl.persistent_bytes = 0 : i64} {
  func.func private @"E.eval_k1"(%h: memref<f64>) attributes {mdl.kernel = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %s = memref.load %h[] : memref<f64>
    %sum = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %s) -> (f64) {
      %next = arith.addf %acc, %s : f64
      scf.yield %next : f64
    }
    memref.store %sum, %h[] : memref<f64>
    return
  }
  func.func private @"E.eval_k0"(%c: memref<3x3x4xf64>, %h: memref<f64>) attributes {mdl.kernel = 0 : i64} {
    %s = memref.load %h[] : memref<f64>
    linalg.fill ins(%s : f64) outs(%c : memref<3x3x4xf64>)
    return
  }
  func.func @"E.eval"(%arena: memref<1024xi8>) attributes {mdl.entry = "E", mdl.function = "eval"} {
    %c0 = arith.constant 0 : index
    %c384 = arith.constant 384 : index
    %c512 = arith.constant 512 : index
    %c520 = arith.constant 520 : index
    %c896 = arith.constant 896 : index
    %c904 = arith.constant 904 : index
    %a = memref.view %arena[%c0][] : memref<1024xi8> to memref<3x3x5xf64>
    %b = memref.view %arena[%c384][] : memref<1024xi8> to memref<5x4xf64>
    %c = memref.view %arena[%c512][] : memref<1024xi8> to memref<3x3x4xf64>
    %h = memref.view %arena[%c896][] : memref<1024xi8> to memref<f64>
    %h2 = memref.view %arena[%c904][] : memref<1024xi8> to memref<f64>
    %inside = memref.view %arena[%c520][] : memref<1024xi8> to memref<f64>
    mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 1.0 : memref<3x3x5xf64>, memref<5x4xf64>, memref<3x3x4xf64>
    call @"E.eval_k0"(%c, %h) : (memref<3x3x4xf64>, memref<f64>) -> ()
    call @"E.eval_k1"(%h) : (memref<f64>) -> ()
    call @"E.eval_k1"(%h2) : (memref<f64>) -> ()
    call @"E.eval_k0"(%c, %inside) : (memref<3x3x4xf64>, memref<f64>) -> ()
    return
  }
}

// -----

// A call that passes a buffer at an offset known only at run time leaves
// its kernel without promises: nothing is known of what that call passes.
// CHECK-LABEL: llvm.func internal @modelc_fn_0_E_eval_k0(
// CHECK-SAME: %{{.*}}: !llvm.ptr) attributes {no_inline
module attributes {mdl.arena_bytes = 256 : i64, mdl.persistent_bytes = 0 : i64} {
  func.func private @"E.eval_k0"(%x: memref<4xf32>) attributes {mdl.kernel = 0 : i64} {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%x : memref<4xf32>)
    return
  }
  func.func @"E.eval"(%arena: memref<256xi8>) attributes {mdl.entry = "E", mdl.function = "eval"} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %at = memref.view %arena[%c0][] : memref<256xi8> to memref<index>
    %n = memref.load %at[] : memref<index>
    %fixed = memref.view %arena[%c64][] : memref<256xi8> to memref<4xf32>
    %moving = memref.view %arena[%n][] : memref<256xi8> to memref<4xf32>
    call @"E.eval_k0"(%fixed) : (memref<4xf32>) -> ()
    call @"E.eval_k0"(%moving) : (memref<4xf32>) -> ()
    return
  }
}

// -----

// The runtime calls a train entry's fwd_bwd and update and an infer
// entry's infer: a module without one is refused here, not when it runs.
module attributes {mdl.arena_bytes = 64 : i64, mdl.persistent_bytes = 0 : i64} {
  mdl.data @d {
    mdl.field "x" : tensor<2xf32> = npy "x.npy"
  }
  // expected-error @+1 {{internal error: entry 'T' has no update function}}
  mdl.train @T data @d outputs ["loss"] settings {batch = 1 : i64, steps = 1 : i64} {
  ^bb0(%x: tensor<1x2xf32>):
    %loss = mdl.constant dense<0.0> : tensor<f32>
    mdl.yield %loss : tensor<f32>
  }
  func.func @"T.fwd_bwd"(%arena: memref<64xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    return
  }
}

// -----

module attributes {mdl.arena_bytes = 64 : i64, mdl.persistent_bytes = 0 : i64} {
  // expected-error @+1 {{internal error: entry 'I' has no infer function}}
  mdl.infer @I inputs ["x"] outputs ["y"] {
  ^bb0(%x: tensor<2x2xf32>):
    mdl.yield %x : tensor<2x2xf32>
  }
}

// -----

// The manifest needs the memory plan.
// expected-error @+1 {{no memory plan: run --mdl-plan-memory first}}
module {
  func.func @"T.fwd_bwd"(%arena: memref<64xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    return
  }
}

// -----

module attributes {mdl.arena_bytes = 64 : i64, mdl.persistent_bytes = 64 : i64} {
  // expected-error @+1 {{a program function takes only the arena (memref<Nxi8>): run --mdl-plan-memory first}}
  func.func @"T.fwd_bwd"() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    return
  }
}

// -----

module attributes {mdl.arena_bytes = 64 : i64, mdl.persistent_bytes = 64 : i64} {
  // expected-error @+1 {{unknown mdl.function kind 'backward'}}
  func.func @"T.backward"(%arena: memref<64xi8>) attributes {mdl.entry = "T", mdl.function = "backward"} {
    return
  }
}

// -----

module attributes {mdl.arena_bytes = 64 : i64, mdl.persistent_bytes = 64 : i64} {
  func.func private @k0(%arena: memref<64xi8>) attributes {mdl.kernel = 0 : i64} {
    return
  }
  // expected-error @+1 {{kernel index 0 is not unique}}
  func.func private @k1(%arena: memref<64xi8>) attributes {mdl.kernel = 0 : i64} {
    return
  }
}

// -----

// expected-error @+1 {{no kernel has index 0}}
module attributes {mdl.arena_bytes = 64 : i64, mdl.persistent_bytes = 64 : i64} {
  func.func private @k1(%arena: memref<64xi8>) attributes {mdl.kernel = 1 : i64} {
    return
  }
}
