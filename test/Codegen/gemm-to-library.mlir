// --mdl-gemm-to-library: each linalg matmul form on memrefs becomes one
// mdlrt.gemm with its transpose flags; a zero fill of C right before it
// becomes beta = 0; what BLAS cannot address stays linalg.
// RUN: modelc-opt %s --mdl-gemm-to-library --split-input-file | FileCheck %s

// A zero fill of C and the matmul: C = A*B with beta = 0, the fill gone.
// CHECK-LABEL: func.func @matmul_after_zero_fill
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8x16xf32>)
// CHECK: %[[C:.*]] = memref.alloc() : memref<4x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: mdlrt.gemm %[[A]], %[[B]], %[[C]] alpha = 1.000000e+00 beta = 0.000000e+00 : memref<4x8xf32>, memref<8x16xf32>, memref<4x16xf32>
// CHECK-NOT: linalg.matmul
func.func @matmul_after_zero_fill(%a: memref<4x8xf32>, %b: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// Without a fill the product accumulates into C: beta = 1.
// CHECK-LABEL: func.func @matmul_transpose_b_accumulates
// CHECK: %[[X:.*]] = mdlrt.buffer @x
// CHECK: %[[W:.*]] = mdlrt.buffer @w
// CHECK: %[[G:.*]] = mdlrt.buffer @g
// CHECK: mdlrt.gemm %[[X]], %[[W]], %[[G]] alpha = 1.000000e+00 beta = 1.000000e+00 transpose_b : memref<4x8xf32>, memref<16x8xf32>, memref<4x16xf32>
func.func @matmul_transpose_b_accumulates() {
  %x = mdlrt.buffer @x : memref<4x8xf32>
  %w = mdlrt.buffer @w : memref<16x8xf32>
  %g = mdlrt.buffer @g : memref<4x16xf32>
  linalg.matmul_transpose_b ins(%x, %w : memref<4x8xf32>, memref<16x8xf32>) outs(%g : memref<4x16xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @matmul_transpose_a_f64
// CHECK: mdlrt.gemm {{.*}} beta = 0.000000e+00 transpose_a : memref<8x4xf64>, memref<8x16xf64>, memref<4x16xf64>
func.func @matmul_transpose_a_f64() {
  %zero = arith.constant 0.0 : f64
  %a = mdlrt.buffer @a : memref<8x4xf64>
  %b = mdlrt.buffer @b : memref<8x16xf64>
  %c = memref.alloc() : memref<4x16xf64>
  linalg.fill ins(%zero : f64) outs(%c : memref<4x16xf64>)
  linalg.matmul_transpose_a ins(%a, %b : memref<8x4xf64>, memref<8x16xf64>) outs(%c : memref<4x16xf64>)
  return
}

// -----

// The batched forms keep their rank-3 operands.
// CHECK-LABEL: func.func @batch_matmuls
// CHECK: mdlrt.gemm {{.*}} beta = 0.000000e+00 : memref<2x4x8xf32>, memref<2x8x16xf32>, memref<2x4x16xf32>
// CHECK: mdlrt.gemm {{.*}} beta = 0.000000e+00 transpose_a : memref<2x8x4xf32>, memref<2x8x16xf32>, memref<2x4x16xf32>
// CHECK: mdlrt.gemm {{.*}} beta = 0.000000e+00 transpose_b : memref<2x4x8xf32>, memref<2x16x8xf32>, memref<2x4x16xf32>
// CHECK-NOT: linalg
func.func @batch_matmuls(%a: memref<2x4x8xf32>, %b: memref<2x8x16xf32>,
                         %at: memref<2x8x4xf32>, %bt: memref<2x16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = memref.alloc() : memref<2x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c0 : memref<2x4x16xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%c0 : memref<2x4x16xf32>)
  %c1 = memref.alloc() : memref<2x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c1 : memref<2x4x16xf32>)
  linalg.batch_matmul_transpose_a ins(%at, %b : memref<2x8x4xf32>, memref<2x8x16xf32>) outs(%c1 : memref<2x4x16xf32>)
  %c2 = memref.alloc() : memref<2x4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<2x4x16xf32>)
  linalg.batch_matmul_transpose_b ins(%a, %bt : memref<2x4x8xf32>, memref<2x16x8xf32>) outs(%c2 : memref<2x4x16xf32>)
  return
}

// -----

// A read of C between the fill and the matmul sees the zeros: the fill
// stays and the gemm accumulates.
// CHECK-LABEL: func.func @fill_read_in_between
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: mdlrt.gemm {{.*}} beta = 1.000000e+00
func.func @fill_read_in_between(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %out: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  memref.copy %c, %out : memref<4x16xf32> to memref<4x16xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// The fill covers the whole buffer but the matmul writes only a view of
// it: the rest must stay zero, so the fill stays.
// CHECK-LABEL: func.func @fill_of_a_larger_buffer
// CHECK: linalg.fill
// CHECK: mdlrt.gemm {{.*}} beta = 1.000000e+00
func.func @fill_of_a_larger_buffer(%a: memref<4x8xf32>, %b: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x32xf32>)
  %view = memref.subview %c[0, 0] [4, 16] [1, 1] : memref<4x32xf32> to memref<4x16xf32, strided<[32, 1]>>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%view : memref<4x16xf32, strided<[32, 1]>>)
  return
}

// -----

// A fill with ones is not beta = 0.
// CHECK-LABEL: func.func @fill_with_ones
// CHECK: linalg.fill
// CHECK: mdlrt.gemm {{.*}} beta = 1.000000e+00
func.func @fill_with_ones(%a: memref<4x8xf32>, %b: memref<8x16xf32>) {
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%one : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A row stride larger than the row (a column block of a wider matrix) is a
// leading dimension; BLAS takes it.
// CHECK-LABEL: func.func @strided_rows
// CHECK: mdlrt.gemm {{.*}} : memref<4x8xf32, strided<[32, 1], offset: 8>>, memref<8x16xf32>, memref<4x16xf32>
func.func @strided_rows(%wide: memref<4x32xf32>, %b: memref<8x16xf32>) {
  %a = memref.subview %wide[0, 8] [4, 8] [1, 1] : memref<4x32xf32> to memref<4x8xf32, strided<[32, 1], offset: 8>>
  %c = memref.alloc() : memref<4x16xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32, strided<[32, 1], offset: 8>>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// What BLAS cannot do stays linalg: a column stride other than 1, mixed
// 16-bit/f32 operands, 16-bit operands into a 16-bit or f64 C, integers,
// and a product written over one of its inputs.
// CHECK-LABEL: func.func @left_to_loops
// CHECK-NOT: mdlrt.gemm
// CHECK-COUNT-6: linalg.matmul
// CHECK-NOT: mdlrt.gemm
func.func @left_to_loops(%wide: memref<4x16xf32>, %b: memref<8x16xf32>,
                         %h: memref<4x8xf16>, %hb: memref<8x16xf16>,
                         %i: memref<4x8xi32>, %ib: memref<8x16xi32>) {
  %a = memref.subview %wide[0, 0] [4, 8] [1, 2] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 2]>>
  %c = memref.alloc() : memref<4x16xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32, strided<[16, 2]>>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%h, %b : memref<4x8xf16>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  %hc = memref.alloc() : memref<4x16xf16>
  linalg.matmul ins(%h, %hb : memref<4x8xf16>, memref<8x16xf16>) outs(%hc : memref<4x16xf16>)
  %dc = memref.alloc() : memref<4x16xf64>
  linalg.matmul ins(%h, %hb : memref<4x8xf16>, memref<8x16xf16>) outs(%dc : memref<4x16xf64>)
  %ic = memref.alloc() : memref<4x16xi32>
  linalg.matmul ins(%i, %ib : memref<4x8xi32>, memref<8x16xi32>) outs(%ic : memref<4x16xi32>)
  %sq = memref.alloc() : memref<8x8xf32>
  %sq2 = mdlrt.buffer @sq : memref<8x8xf32>
  linalg.matmul ins(%sq, %sq2 : memref<8x8xf32>, memref<8x8xf32>) outs(%sq : memref<8x8xf32>)
  return
}

// 16-bit operands accumulated into an f32 C (the tensor-core contract):
// one mdlrt.gemm with bf16 or f16 A and B, batched too.
// CHECK-LABEL: func.func @sixteen_bit_into_f32
// CHECK-NOT: linalg.fill
// CHECK: mdlrt.gemm {{.*}} beta = 0.000000e+00 transpose_b : memref<4x8xbf16>, memref<16x8xbf16>, memref<4x16xf32>
// CHECK: mdlrt.gemm {{.*}} beta = 1.000000e+00 : memref<2x4x8xf16>, memref<2x8x16xf16>, memref<2x4x16xf32>
// CHECK-NOT: linalg.
func.func @sixteen_bit_into_f32(%a: memref<4x8xbf16>, %b: memref<16x8xbf16>,
                                %ha: memref<2x4x8xf16>, %hb: memref<2x8x16xf16>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul_transpose_b ins(%a, %b : memref<4x8xbf16>, memref<16x8xbf16>) outs(%c : memref<4x16xf32>)
  %hc = memref.alloc() : memref<2x4x16xf32>
  linalg.batch_matmul ins(%ha, %hb : memref<2x4x8xf16>, memref<2x8x16xf16>) outs(%hc : memref<2x4x16xf32>)
  return
}

// -----

// Tensors are bufferization's business, not this pass's.
// CHECK-LABEL: func.func @tensors_untouched
// CHECK: linalg.matmul
func.func @tensors_untouched(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
