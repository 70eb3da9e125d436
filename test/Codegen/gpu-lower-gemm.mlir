// --mdl-lower-to-gpu, GEMMs: each mdlrt.gemm of a program function becomes a
// Gemm step, in order with the kernel launches, with the meaning of the CPU's
// modelc_gemm_f32/f64 (row-major) and static numbers: byte offsets from the
// arena (the view's shift plus the layout's offset), ld = the row stride,
// batch strides (0 for a rank-2 operand of a batched GEMM). A dynamic offset
// or stride is an error naming the operand.
// RUN: modelc-opt %s --split-input-file --verify-diagnostics --mdl-lower-to-gpu | FileCheck %s

// t = x w^T (x at 128, w at 0, t at 256), then the kernel, then a batched
// GEMM with alpha and beta: three steps in the function's order, each with
// the bytes it may write (a GEMM: its C).
// CHECK-LABEL: func.func @T.fwd_bwd(
// CHECK-SAME: mdl.gpu_steps = [
// CHECK-SAME: {gemm = {a = 128 : i64, ab_dtype = "f32", alpha = 1.000000e+00 : f64, b = 0 : i64, batch = 1 : i64, beta = 0.000000e+00 : f64, c = 256 : i64, dtype = "f32", k = 8 : i64, lda = 8 : i64, ldb = 8 : i64, ldc = 4 : i64, m = 2 : i64, n = 4 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_c = 0 : i64, trans_a = false, trans_b = true}, writes = [{bytes = 32 : i64, offset = 256 : i64, type = f32}]},
// CHECK-SAME: {args = array<i64: 0>, launch = @modelc_kernels::@T_fwd_bwd_k0, writes = [{bytes = 32 : i64, offset = 256 : i64, type = f32}]},
// CHECK-SAME: {gemm = {a = 1024 : i64, ab_dtype = "f32", alpha = 5.000000e-01 : f64, b = 2048 : i64, batch = 3 : i64, beta = 1.000000e+00 : f64, c = 4096 : i64, dtype = "f32", k = 8 : i64, lda = 8 : i64, ldb = 5 : i64, ldc = 5 : i64, m = 2 : i64, n = 5 : i64, stride_a = 16 : i64, stride_b = 40 : i64, stride_c = 10 : i64, trans_a = false, trans_b = false}, writes = [{bytes = 120 : i64, offset = 4096 : i64, type = f32}]}]
// CHECK-NEXT: return

// op(A) = A^T with A a column block of an 8x6 matrix (offset 2 elements: 8
// bytes, ld 6, K = its 8 rows), C the second matrix of a 2x4x3 buffer
// (6144 + 12 * 4 bytes).
// CHECK-LABEL: func.func @T.update(
// CHECK-SAME: mdl.gpu_steps = [{gemm = {a = 8 : i64, ab_dtype = "f32", alpha = 1.000000e+00 : f64, b = 512 : i64, batch = 1 : i64, beta = 0.000000e+00 : f64, c = 6192 : i64, dtype = "f32", k = 8 : i64, lda = 6 : i64, ldb = 3 : i64, ldc = 3 : i64, m = 4 : i64, n = 3 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_c = 0 : i64, trans_a = true, trans_b = false}, writes = [{bytes = 48 : i64, offset = 6192 : i64, type = f32}]}]

// f64, a batch of two with the same B for both (stride_b = 0).
// CHECK-LABEL: func.func @I.infer(
// CHECK-SAME: mdl.gpu_steps = [{gemm = {a = 0 : i64, ab_dtype = "f64", alpha = 1.000000e+00 : f64, b = 1024 : i64, batch = 2 : i64, beta = 0.000000e+00 : f64, c = 4096 : i64, dtype = "f64", k = 4 : i64, lda = 4 : i64, ldb = 4 : i64, ldc = 5 : i64, m = 3 : i64, n = 5 : i64, stride_a = 12 : i64, stride_b = 0 : i64, stride_c = 15 : i64, trans_a = false, trans_b = true}, writes = [{bytes = 240 : i64, offset = 4096 : i64, type = f64}]}]

#id1 = affine_map<(d0) -> (d0)>
module {
  func.func private @"T.fwd_bwd_k0"(%arena: memref<8192xi8>) attributes {mdl.kernel = 0 : i64} {
    %c256 = arith.constant 256 : index
    %t = memref.view %arena[%c256][] : memref<8192xi8> to memref<2x4xf32>
    %flat = memref.collapse_shape %t [[0, 1]] : memref<2x4xf32> into memref<8xf32>
    linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%flat : memref<8xf32>) {
    ^bb0(%out: f32):
      %r = math.tanh %out : f32
      linalg.yield %r : f32
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %c1024 = arith.constant 1024 : index
    %c2048 = arith.constant 2048 : index
    %c4096 = arith.constant 4096 : index
    %w = memref.view %arena[%c0][] : memref<8192xi8> to memref<4x8xf32>
    %x = memref.view %arena[%c128][] : memref<8192xi8> to memref<2x8xf32>
    %t = memref.view %arena[%c256][] : memref<8192xi8> to memref<2x4xf32>
    mdlrt.gemm %x, %w, %t alpha = 1.000000e+00 beta = 0.000000e+00 transpose_b : memref<2x8xf32>, memref<4x8xf32>, memref<2x4xf32>
    call @"T.fwd_bwd_k0"(%arena) : (memref<8192xi8>) -> ()
    %a = memref.view %arena[%c1024][] : memref<8192xi8> to memref<3x2x8xf32>
    %b = memref.view %arena[%c2048][] : memref<8192xi8> to memref<3x8x5xf32>
    %c = memref.view %arena[%c4096][] : memref<8192xi8> to memref<3x2x5xf32>
    mdlrt.gemm %a, %b, %c alpha = 5.000000e-01 beta = 1.000000e+00 : memref<3x2x8xf32>, memref<3x8x5xf32>, memref<3x2x5xf32>
    return
  }
  func.func @"T.update"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "update"} {
    %c0 = arith.constant 0 : index
    %c512 = arith.constant 512 : index
    %c6144 = arith.constant 6144 : index
    %big = memref.view %arena[%c0][] : memref<8192xi8> to memref<8x6xf32>
    %a = memref.subview %big[0, 2] [8, 4] [1, 1] : memref<8x6xf32> to memref<8x4xf32, strided<[6, 1], offset: 2>>
    %b = memref.view %arena[%c512][] : memref<8192xi8> to memref<8x3xf32>
    %c = memref.view %arena[%c6144][] : memref<8192xi8> to memref<2x4x3xf32>
    %c0v = memref.subview %c[1, 0, 0] [1, 4, 3] [1, 1, 1] : memref<2x4x3xf32> to memref<4x3xf32, strided<[3, 1], offset: 12>>
    mdlrt.gemm %a, %b, %c0v alpha = 1.000000e+00 beta = 0.000000e+00 transpose_a : memref<8x4xf32, strided<[6, 1], offset: 2>>, memref<8x3xf32>, memref<4x3xf32, strided<[3, 1], offset: 12>>
    return
  }
  func.func @"I.infer"(%arena: memref<8192xi8>) attributes {mdl.entry = "I", mdl.function = "infer"} {
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %c4096 = arith.constant 4096 : index
    %a = memref.view %arena[%c0][] : memref<8192xi8> to memref<2x3x4xf64>
    %b = memref.view %arena[%c1024][] : memref<8192xi8> to memref<5x4xf64>
    %c = memref.view %arena[%c4096][] : memref<8192xi8> to memref<2x3x5xf64>
    mdlrt.gemm %a, %b, %c alpha = 1.000000e+00 beta = 0.000000e+00 transpose_b : memref<2x3x4xf64>, memref<5x4xf64>, memref<2x3x5xf64>
    return
  }
}

// -----

// bf16 A and B (2 bytes an element: A's column offset of 2 elements is 4
// bytes) with an f32 C: ab_dtype "bf16", dtype "f32", C written as f32.
// CHECK-LABEL: func.func @T.fwd_bwd(
// CHECK-SAME: mdl.gpu_steps = [{gemm = {a = 4 : i64, ab_dtype = "bf16", alpha = 1.000000e+00 : f64, b = 1024 : i64, batch = 1 : i64, beta = 0.000000e+00 : f64, c = 4096 : i64, dtype = "f32", k = 8 : i64, lda = 10 : i64, ldb = 8 : i64, ldc = 4 : i64, m = 2 : i64, n = 4 : i64, stride_a = 0 : i64, stride_b = 0 : i64, stride_c = 0 : i64, trans_a = false, trans_b = true}, writes = [{bytes = 32 : i64, offset = 4096 : i64, type = f32}]}]
module {
  func.func @"T.fwd_bwd"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %c4096 = arith.constant 4096 : index
    %wide = memref.view %arena[%c0][] : memref<8192xi8> to memref<2x10xbf16>
    %a = memref.subview %wide[0, 2] [2, 8] [1, 1] : memref<2x10xbf16> to memref<2x8xbf16, strided<[10, 1], offset: 2>>
    %b = memref.view %arena[%c1024][] : memref<8192xi8> to memref<4x8xbf16>
    %c = memref.view %arena[%c4096][] : memref<8192xi8> to memref<2x4xf32>
    mdlrt.gemm %a, %b, %c alpha = 1.000000e+00 beta = 0.000000e+00 transpose_b : memref<2x8xbf16, strided<[10, 1], offset: 2>>, memref<4x8xbf16>, memref<2x4xf32>
    return
  }
}

// -----

// A C whose offset depends on a value loaded at run time.

module {
  func.func @"T.fwd_bwd"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %c4096 = arith.constant 4096 : index
    %a = memref.view %arena[%c0][] : memref<8192xi8> to memref<2x8xf32>
    %b = memref.view %arena[%c1024][] : memref<8192xi8> to memref<8x4xf32>
    %big = memref.view %arena[%c4096][] : memref<8192xi8> to memref<6x4xf32>
    %i = memref.load %a[%c0, %c0] : memref<2x8xf32>
    %row = arith.fptosi %i : f32 to i64
    %r = arith.index_cast %row : i64 to index
    %c = memref.subview %big[%r, 0] [2, 4] [1, 1] : memref<6x4xf32> to memref<2x4xf32, strided<[4, 1], offset: ?>>
    // expected-error @+1 {{operand C ('memref<2x4xf32, strided<[4, 1], offset: ?>>') has a dynamic shape, offset or stride: a GPU Gemm step needs static ones}}
    mdlrt.gemm %a, %b, %c alpha = 1.000000e+00 beta = 0.000000e+00 : memref<2x8xf32>, memref<8x4xf32>, memref<2x4xf32, strided<[4, 1], offset: ?>>
    return
  }
}
