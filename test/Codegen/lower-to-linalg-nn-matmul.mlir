// --mdl-lower-to-linalg on mdl.matmul: torch.matmul's cases become the named
// GEMM ops (never a linalg.generic), with zero-filled destinations; a
// last-two-axes transpose operand is read transposed, not copied.
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file | FileCheck %s

// nn.linear: x @ transpose(w) with a batched x is one matmul_transpose_b on
// w itself, the batch folded into the rows (a view), no transpose left.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<8x16x32xf32>, %[[W:.*]]: tensor<64x32xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<8x16x32xf32> into tensor<128x32xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<128x64xf32>
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<128x64xf32>)
// CHECK: %[[Y:.*]] = linalg.matmul_transpose_b ins(%[[ROWS]], %[[W]] : tensor<128x32xf32>, tensor<64x32xf32>) outs(%[[FILL]] : tensor<128x64xf32>)
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [8, 16, 64]
// CHECK: return %[[OUT]]
func.func @linear(%x: tensor<8x16x32xf32>, %w: tensor<64x32xf32>) -> tensor<8x16x64xf32> {
  %t = mdl.transpose %w perm = [1, 0] : tensor<64x32xf32> -> tensor<32x64xf32>
  %y = mdl.matmul %x, %t : tensor<8x16x32xf32>, tensor<32x64xf32> -> tensor<8x16x64xf32>
  return %y : tensor<8x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_2d_f64
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf64>, %[[B:.*]]: tensor<8x16xf64>)
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<4x16xf64>)
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf64>, tensor<8x16xf64>) outs(%[[FILL]] : tensor<4x16xf64>)
// CHECK: return %[[Y]]
func.func @matmul_2d_f64(%a: tensor<4x8xf64>, %b: tensor<8x16xf64>) -> tensor<4x16xf64> {
  %y = mdl.matmul %a, %b : tensor<4x8xf64>, tensor<8x16xf64> -> tensor<4x16xf64>
  return %y : tensor<4x16xf64>
}

// -----

// The weight gradient of a linear layer: transpose(x) @ dy.
// CHECK-LABEL: func.func @transpose_lhs
// CHECK-SAME: (%[[X:.*]]: tensor<128x32xf32>, %[[G:.*]]: tensor<128x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul_transpose_a ins(%[[X]], %[[G]] : tensor<128x32xf32>, tensor<128x64xf32>) outs(%{{.*}} : tensor<32x64xf32>)
func.func @transpose_lhs(%x: tensor<128x32xf32>, %g: tensor<128x64xf32>) -> tensor<32x64xf32> {
  %t = mdl.transpose %x perm = [1, 0] : tensor<128x32xf32> -> tensor<32x128xf32>
  %y = mdl.matmul %t, %g : tensor<32x128xf32>, tensor<128x64xf32> -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

// Two 1-D operands: a row times a column, the 1x1 result collapsed to 0-d.
// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[ROW:.*]] = tensor.expand_shape %[[A]] {{\[}}[0, 1]] output_shape [1, 8]
// CHECK: %[[COL:.*]] = tensor.expand_shape %[[B]] {{\[}}[0, 1]] output_shape [8, 1]
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[ROW]], %[[COL]] : tensor<1x8xf32>, tensor<8x1xf32>)
// CHECK: tensor.collapse_shape %[[Y]] [] : tensor<1x1xf32> into tensor<f32>
func.func @dot(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<f32> {
  %y = mdl.matmul %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @matrix_vector
// CHECK: %[[COL:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [8, 1]
// CHECK: %[[Y:.*]] = linalg.matmul ins(%{{.*}}, %[[COL]] : tensor<4x8xf32>, tensor<8x1xf32>)
// CHECK: tensor.collapse_shape %[[Y]] {{\[}}[0, 1]] : tensor<4x1xf32> into tensor<4xf32>
func.func @matrix_vector(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  %y = mdl.matmul %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Attention scores q @ transpose(k): the batch axes collapsed into one,
// batch_matmul_transpose_b on k.
// CHECK-LABEL: func.func @batched_transpose_b
// CHECK-SAME: (%[[Q:.*]]: tensor<2x3x16x8xf32>, %[[K:.*]]: tensor<2x3x16x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-DAG: %[[QB:.*]] = tensor.collapse_shape %[[Q]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x16x8xf32> into tensor<6x16x8xf32>
// CHECK-DAG: %[[KB:.*]] = tensor.collapse_shape %[[K]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x16x8xf32> into tensor<6x16x8xf32>
// CHECK: %[[S:.*]] = linalg.batch_matmul_transpose_b ins(%[[QB]], %[[KB]] : tensor<6x16x8xf32>, tensor<6x16x8xf32>) outs(%{{.*}} : tensor<6x16x16xf32>)
// CHECK: tensor.expand_shape %[[S]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 16, 16]
func.func @batched_transpose_b(%q: tensor<2x3x16x8xf32>, %k: tensor<2x3x16x8xf32>) -> tensor<2x3x16x16xf32> {
  %t = mdl.transpose %k perm = [0, 1, 3, 2] : tensor<2x3x16x8xf32> -> tensor<2x3x8x16xf32>
  %y = mdl.matmul %q, %t : tensor<2x3x16x8xf32>, tensor<2x3x8x16xf32> -> tensor<2x3x16x16xf32>
  return %y : tensor<2x3x16x16xf32>
}

// -----

// A 2-D lhs against a batched rhs: the lhs is broadcast over the batch
// (a copying generic), then one batch_matmul.
// CHECK-LABEL: func.func @broadcast_lhs
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<5x8x2xf32>)
// CHECK: %[[AB:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<5x4x8xf32>)
// CHECK: linalg.batch_matmul ins(%[[AB]], %[[B]] : tensor<5x4x8xf32>, tensor<5x8x2xf32>) outs(%{{.*}} : tensor<5x4x2xf32>)
func.func @broadcast_lhs(%a: tensor<4x8xf32>, %b: tensor<5x8x2xf32>) -> tensor<5x4x2xf32> {
  %y = mdl.matmul %a, %b : tensor<4x8xf32>, tensor<5x8x2xf32> -> tensor<5x4x2xf32>
  return %y : tensor<5x4x2xf32>
}

// -----

// Size-1 batch axes broadcast: [3, 1] x [1, 2] batches become 6.
// CHECK-LABEL: func.func @broadcast_both
// CHECK: %[[A:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x2x4x8xf32>)
// CHECK: %[[AB:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2], [3]] : tensor<3x2x4x8xf32> into tensor<6x4x8xf32>
// CHECK: %[[B:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x2x8x5xf32>)
// CHECK: %[[BB:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1], [2], [3]] : tensor<3x2x8x5xf32> into tensor<6x8x5xf32>
// CHECK: linalg.batch_matmul ins(%[[AB]], %[[BB]] : tensor<6x4x8xf32>, tensor<6x8x5xf32>)
func.func @broadcast_both(%a: tensor<3x1x4x8xf32>, %b: tensor<2x8x5xf32>) -> tensor<3x2x4x5xf32> {
  %y = mdl.matmul %a, %b : tensor<3x1x4x8xf32>, tensor<2x8x5xf32> -> tensor<3x2x4x5xf32>
  return %y : tensor<3x2x4x5xf32>
}

// -----

// A transposed lhs whose batch would fold into the rows keeps its
// transpose (its rows are not contiguous) and uses a plain matmul.
// CHECK-LABEL: func.func @transposed_lhs_batch_kept
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[T]] {{\[}}[0, 1], [2]] : tensor<5x4x8xf32> into tensor<20x8xf32>
// CHECK: linalg.matmul ins(%[[ROWS]], %{{.*}} : tensor<20x8xf32>, tensor<8x2xf32>)
func.func @transposed_lhs_batch_kept(%x: tensor<5x8x4xf32>, %w: tensor<8x2xf32>) -> tensor<5x4x2xf32> {
  %t = mdl.transpose %x perm = [0, 2, 1] : tensor<5x8x4xf32> -> tensor<5x4x8xf32>
  %y = mdl.matmul %t, %w : tensor<5x4x8xf32>, tensor<8x2xf32> -> tensor<5x4x2xf32>
  return %y : tensor<5x4x2xf32>
}

// -----

// Integer matmul (mdl.matmul is numeric): ui8 is signless i8 after the
// conversion; wrapping products are the same bits either way.
// CHECK-LABEL: func.func @integer
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<3x4xi32>) outs(%{{.*}} : tensor<2x4xi32>)
func.func @integer(%a: tensor<2x3xi32>, %b: tensor<3x4xi32>) -> tensor<2x4xi32> {
  %y = mdl.matmul %a, %b : tensor<2x3xi32>, tensor<3x4xi32> -> tensor<2x4xi32>
  return %y : tensor<2x4xi32>
}

// -----

// 16-bit operands are read as they are by a matmul into an f32 accumulator
// (linalg widens them exactly), which the library GEMM computes in f32
// (no f32 copies of the operands), and the product is rounded once to
// bf16, as a tensor core computes (never a bf16 accumulator).
// CHECK-LABEL: func.func @matmul_bf16
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xbf16>, %[[B:.*]]: tensor<16x8xbf16>)
// CHECK-NOT: arith.extf
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: %[[P:.*]] = linalg.matmul_transpose_b ins(%[[A]], %[[B]] : tensor<4x8xbf16>, tensor<16x8xbf16>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<4x16xf32>) outs(%{{.*}} : tensor<4x16xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[Y]]
func.func @matmul_bf16(%a: tensor<4x8xbf16>, %b: tensor<16x8xbf16>) -> tensor<4x16xbf16> {
  %t = mdl.transpose %b perm = [1, 0] : tensor<16x8xbf16> -> tensor<8x16xbf16>
  %y = mdl.matmul %a, %t : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}
