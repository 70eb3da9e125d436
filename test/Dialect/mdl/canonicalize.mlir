// The mdl dialect's folds and canonicalization patterns: a transpose by the
// identity, or undoing another, folds away; the transpose of a matrix
// product becomes the product of the transposes in the other order, which
// the lowering reads transposed from the GEMM's operands (no copy).
// RUN: modelc-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @transposes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %same = mdl.transpose %x perm = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %a = mdl.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %b = mdl.transpose %a perm = [1, 2, 0] : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  return %same, %b : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// Two transposes that do not compose to the identity stay.
// CHECK-LABEL: func.func @not_inverse
// CHECK: mdl.transpose
// CHECK: mdl.transpose
func.func @not_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x4x3xf32> {
  %a = mdl.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %b = mdl.transpose %a perm = [1, 0, 2] : tensor<4x2x3xf32> -> tensor<2x4x3xf32>
  return %b : tensor<2x4x3xf32>
}

// -----

// (a b)^T = b^T a^T: with a = x^T, a^T folds to x.
// CHECK-LABEL: func.func @transposed_product
// CHECK-SAME: (%[[X:.*]]: tensor<6x4xbf16>, %[[G:.*]]: tensor<6x8xbf16>)
// CHECK-NEXT: %[[GT:.*]] = mdl.transpose %[[G]] perm = [1, 0] : tensor<6x8xbf16> -> tensor<8x6xbf16>
// CHECK-NEXT: %[[P:.*]] = mdl.matmul %[[GT]], %[[X]] : tensor<8x6xbf16>, tensor<6x4xbf16> -> tensor<8x4xbf16>
// CHECK-NEXT: return %[[P]]
func.func @transposed_product(%x: tensor<6x4xbf16>, %g: tensor<6x8xbf16>) -> tensor<8x4xbf16> {
  %xt = mdl.transpose %x perm = [1, 0] : tensor<6x4xbf16> -> tensor<4x6xbf16>
  %p = mdl.matmul %xt, %g : tensor<4x6xbf16>, tensor<6x8xbf16> -> tensor<4x8xbf16>
  %t = mdl.transpose %p perm = [1, 0] : tensor<4x8xbf16> -> tensor<8x4xbf16>
  return %t : tensor<8x4xbf16>
}

// -----

// A product used elsewhere too, or a permutation that is not the swap of
// the last two axes, stays as it is.
// CHECK-LABEL: func.func @kept
// CHECK: %[[P:.*]] = mdl.matmul
// CHECK: mdl.transpose %[[P]]
// CHECK: %[[Q:.*]] = mdl.matmul
// CHECK: mdl.transpose %[[Q]] perm = [1, 0, 2]
func.func @kept(%a: tensor<4x6xf32>, %b: tensor<6x8xf32>, %c: tensor<2x4x6xf32>, %d: tensor<2x6x8xf32>) -> (tensor<8x4xf32>, tensor<4x8xf32>, tensor<4x2x8xf32>) {
  %p = mdl.matmul %a, %b : tensor<4x6xf32>, tensor<6x8xf32> -> tensor<4x8xf32>
  %t = mdl.transpose %p perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %q = mdl.matmul %c, %d : tensor<2x4x6xf32>, tensor<2x6x8xf32> -> tensor<2x4x8xf32>
  %u = mdl.transpose %q perm = [1, 0, 2] : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
  return %t, %p, %u : tensor<8x4xf32>, tensor<4x8xf32>, tensor<4x2x8xf32>
}
