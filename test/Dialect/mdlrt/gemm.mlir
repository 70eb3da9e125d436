// mdlrt.gemm: round trip and the verifier's shape, rank, element type and
// stride rules.
// RUN: modelc-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @forms
// CHECK: mdlrt.gemm %{{.*}}, %{{.*}}, %{{.*}} alpha = 1.000000e+00 beta = 0.000000e+00 transpose_b : memref<4x8xf32>, memref<16x8xf32>, memref<4x16xf32>
// CHECK: mdlrt.gemm %{{.*}}, %{{.*}}, %{{.*}} alpha = 5.000000e-01 beta = 1.000000e+00 transpose_a transpose_b : memref<2x8x4xf64>, memref<16x8xf64>, memref<2x4x16xf64>
// CHECK: mdlrt.gemm {{.*}} : memref<4x8xf32, strided<[32, 1], offset: 8>>, memref<8x16xf32>, memref<4x16xf32>
// CHECK: mdlrt.gemm {{.*}} : memref<4x8xbf16>, memref<16x8xbf16>, memref<4x16xf32>
// CHECK: mdlrt.gemm {{.*}} : memref<4x8xf16>, memref<8x16xf16>, memref<4x16xf32>
func.func @forms(%a: memref<4x8xf32>, %b: memref<16x8xf32>, %c: memref<4x16xf32>,
                 %ba: memref<2x8x4xf64>, %bb: memref<16x8xf64>, %bc: memref<2x4x16xf64>,
                 %sa: memref<4x8xf32, strided<[32, 1], offset: 8>>, %sb: memref<8x16xf32>,
                 %ha: memref<4x8xbf16>, %hb: memref<16x8xbf16>,
                 %fa: memref<4x8xf16>, %fb: memref<8x16xf16>) {
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 transpose_b : memref<4x8xf32>, memref<16x8xf32>, memref<4x16xf32>
  mdlrt.gemm %ba, %bb, %bc alpha = 0.5 beta = 1.0 transpose_a transpose_b : memref<2x8x4xf64>, memref<16x8xf64>, memref<2x4x16xf64>
  mdlrt.gemm %sa, %sb, %c alpha = 1.0 beta = 1.0 : memref<4x8xf32, strided<[32, 1], offset: 8>>, memref<8x16xf32>, memref<4x16xf32>
  // 16-bit A and B accumulate into an f32 C.
  mdlrt.gemm %ha, %hb, %c alpha = 1.0 beta = 0.0 transpose_b : memref<4x8xbf16>, memref<16x8xbf16>, memref<4x16xf32>
  mdlrt.gemm %fa, %fb, %c alpha = 1.0 beta = 1.0 : memref<4x8xf16>, memref<8x16xf16>, memref<4x16xf32>
  return
}

// -----

func.func @inner_mismatch(%a: memref<4x8xf32>, %b: memref<7x16xf32>, %c: memref<4x16xf32>) {
  // expected-error @+1 {{op(A) is 4x8 but op(B) is 7x16}}
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 : memref<4x8xf32>, memref<7x16xf32>, memref<4x16xf32>
  return
}

// -----

func.func @result_mismatch(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<16x4xf32>) {
  // expected-error @+1 {{C is 16x4 but op(A)*op(B) is 4x16}}
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 : memref<4x8xf32>, memref<8x16xf32>, memref<16x4xf32>
  return
}

// -----

func.func @batch_mismatch(%a: memref<3x4x8xf32>, %b: memref<8x16xf32>, %c: memref<2x4x16xf32>) {
  // expected-error @+1 {{operand A has batch size 3 but C has 2}}
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 : memref<3x4x8xf32>, memref<8x16xf32>, memref<2x4x16xf32>
  return
}

// -----

func.func @batch_without_batched_c(%a: memref<2x4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  // expected-error @+1 {{a rank-3 A or B needs a rank-3 C}}
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 : memref<2x4x8xf32>, memref<8x16xf32>, memref<4x16xf32>
  return
}

// -----

func.func @element_types(%a: memref<4x8xf64>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  // expected-error @+1 {{A and B must have the same element type}}
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 : memref<4x8xf64>, memref<8x16xf32>, memref<4x16xf32>
  return
}

// -----

func.func @wide_c(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf64>) {
  // expected-error @+1 {{C must have A's element type, or be f32 for bf16/f16 A and B; got 'f32' and 'f64'}}
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 : memref<4x8xf32>, memref<8x16xf32>, memref<4x16xf64>
  return
}

// -----

func.func @sixteen_bit_c(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xbf16>) {
  // expected-error @+1 {{a GEMM of 'bf16' operands accumulates into an f32 C}}
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 : memref<4x8xbf16>, memref<8x16xbf16>, memref<4x16xbf16>
  return
}

// -----

func.func @sixteen_bit_into_f64(%a: memref<4x8xf16>, %b: memref<8x16xf16>, %c: memref<4x16xf64>) {
  // expected-error @+1 {{C must have A's element type, or be f32 for bf16/f16 A and B; got 'f16' and 'f64'}}
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 : memref<4x8xf16>, memref<8x16xf16>, memref<4x16xf64>
  return
}

// -----

func.func @column_stride(%a: memref<4x8xf32, strided<[16, 2]>>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  // expected-error @+1 {{operand A must have innermost stride 1, got 2}}
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 : memref<4x8xf32, strided<[16, 2]>>, memref<8x16xf32>, memref<4x16xf32>
  return
}

// -----

func.func @integers(%a: memref<4x8xi32>, %b: memref<8x16xi32>, %c: memref<4x16xi32>) {
  // expected-error @+1 {{operand #0 must be 2D/3D memref of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values}}
  mdlrt.gemm %a, %b, %c alpha = 1.0 beta = 0.0 : memref<4x8xi32>, memref<8x16xi32>, memref<4x16xi32>
  return
}
