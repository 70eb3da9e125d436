// --mdl-lower-to-linalg, shape family: reshapes as collapse/expand views,
// linalg.transpose, concat as insert_slices into a fresh tensor, split and
// slice as extract_slices, broadcast_to and arange as generics, slice_grad as
// a zero fill plus a strided insert_slice.
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file | FileCheck %s

// Nesting shapes take one collapse or expand; [2, 3] -> [3, 2] goes through
// 1-D; a scalar expands with no reassociation.
// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[A:.*]]: tensor<8x28x28xf32>, %[[B:.*]]: tensor<2x3xf32>, %[[C:.*]]: tensor<f32>, %[[D:.*]]: tensor<8x784xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0], [1, 2]] : tensor<8x28x28xf32> into tensor<8x784xf32>
// CHECK: %[[B1:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: %[[B2:.*]] = tensor.expand_shape %[[B1]] {{\[}}[0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK: %[[C2:.*]] = tensor.expand_shape %[[C]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK: %[[D2:.*]] = tensor.expand_shape %[[D]] {{\[}}[0], [1, 2]] output_shape [8, 28, 28] : tensor<8x784xf32> into tensor<8x28x28xf32>
// CHECK: return %[[FLAT]], %[[B2]], %[[C2]], %[[D2]]
func.func @reshape(%a: tensor<8x28x28xf32>, %b: tensor<2x3xf32>, %c: tensor<f32>, %d: tensor<8x784xf32>) -> (tensor<8x784xf32>, tensor<3x2xf32>, tensor<1x1xf32>, tensor<8x28x28xf32>) {
  %0 = mdl.reshape %a : tensor<8x28x28xf32> -> tensor<8x784xf32>
  %1 = mdl.reshape %b : tensor<2x3xf32> -> tensor<3x2xf32>
  %2 = mdl.reshape %c : tensor<f32> -> tensor<1x1xf32>
  %3 = mdl.reshape %d : tensor<8x784xf32> -> tensor<8x28x28xf32>
  return %0, %1, %2, %3 : tensor<8x784xf32>, tensor<3x2xf32>, tensor<1x1xf32>, tensor<8x28x28xf32>
}

// -----

// Result axis i is input axis perm[i], linalg.transpose's convention; the
// identity permutation is no op.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x2xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<8x2x4xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<4x8x2xf32>) outs(%[[INIT]] : tensor<8x2x4xf32>) permutation = [1, 2, 0]
// CHECK: return %[[T]], %[[X]]
func.func @transpose(%x: tensor<4x8x2xf32>) -> (tensor<8x2x4xf32>, tensor<4x8x2xf32>) {
  %0 = mdl.transpose %x perm = [1, 2, 0] : tensor<4x8x2xf32> -> tensor<8x2x4xf32>
  %1 = mdl.transpose %x perm = [0, 1, 2] : tensor<4x8x2xf32> -> tensor<4x8x2xf32>
  return %0, %1 : tensor<8x2x4xf32>, tensor<4x8x2xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<4x2xf32>, %[[B:.*]]: tensor<4x6xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[PART:.*]] = tensor.insert_slice %[[A]] into %[[INIT]][0, 0] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x8xf32>
// CHECK: %[[ALL:.*]] = tensor.insert_slice %[[B]] into %[[PART]][0, 2] [4, 6] [1, 1] : tensor<4x6xf32> into tensor<4x8xf32>
// CHECK: return %[[ALL]]
func.func @concat(%a: tensor<4x2xf32>, %b: tensor<4x6xf32>) -> tensor<4x8xf32> {
  %r = mdl.concat %a, %b axis = 1 : tensor<4x2xf32>, tensor<4x6xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>)
// CHECK: %[[P0:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 2] [1, 1] : tensor<4x6xf32> to tensor<4x2xf32>
// CHECK: %[[P1:.*]] = tensor.extract_slice %[[X]][0, 2] [4, 2] [1, 1] : tensor<4x6xf32> to tensor<4x2xf32>
// CHECK: %[[P2:.*]] = tensor.extract_slice %[[X]][0, 4] [4, 2] [1, 1] : tensor<4x6xf32> to tensor<4x2xf32>
// CHECK: return %[[P0]], %[[P1]], %[[P2]]
func.func @split(%x: tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %p:3 = mdl.split %x axis = 1 : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
  return %p#0, %p#1, %p#2 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// A copying generic whose maps broadcast (a size-1 axis read at index 0).
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @broadcast_to
// CHECK-SAME: (%[[X:.*]]: tensor<1x10xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<1x10xf32>) outs(%{{.*}} : tensor<2x128x10xf32>)
// CHECK: ^bb0(%[[E:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[E]] : f32
func.func @broadcast_to(%x: tensor<1x10xf32>) -> tensor<2x128x10xf32> {
  %r = mdl.broadcast_to %x : tensor<1x10xf32> -> tensor<2x128x10xf32>
  return %r : tensor<2x128x10xf32>
}

// -----

// CHECK-LABEL: func.func @arange
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<64xi32>
// CHECK: linalg.generic {{.*}} outs(%[[INIT]] : tensor<64xi32>)
// CHECK-NEXT: ^bb0(%{{.*}}: i32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[V:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK-NEXT: linalg.yield %[[V]] : i32
func.func @arange() -> tensor<64xi32> {
  %r = mdl.arange : tensor<64xi32>
  return %r : tensor<64xi32>
}

// -----

// A strided slice is a strided extract_slice (a view once bufferized).
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][1, 0] [2, 4] [1, 2] : tensor<4x8xf32> to tensor<2x4xf32>
// CHECK: return %[[S]]
func.func @slice(%x: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %r = mdl.slice %x starts = [1, 0] limits = [3, 8] strides = [1, 2] : tensor<4x8xf32> -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// slice_grad: zeros, with the adjoint written where the slice read.
// CHECK-LABEL: func.func @slice_grad
// CHECK-SAME: (%[[G:.*]]: tensor<2x4xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK: %[[R:.*]] = tensor.insert_slice %[[G]] into %[[ZEROS]][1, 0] [2, 4] [1, 2] : tensor<2x4xf32> into tensor<4x8xf32>
// CHECK: return %[[R]]
func.func @slice_grad(%g: tensor<2x4xf32>) -> tensor<4x8xf32> {
  %r = mdl.slice_grad %g starts = [1, 0] limits = [3, 8] strides = [1, 2] : tensor<2x4xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Shape ops on ui16 data work on the signless tensors.
// CHECK-LABEL: func.func @unsigned_shapes
// CHECK: %[[T:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<2x8xi16>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[T]][0, 0] [2, 7] [1, 1] : tensor<2x8xi16> to tensor<2x7xi16>
// CHECK: tensor.collapse_shape %[[S]] {{\[}}[0, 1]] : tensor<2x7xi16> into tensor<14xi16>
mdl.buffer @tokens : tensor<2x8xui16> {entry = "T", key = "tokens", phase = "train", role = "input"}
mdl.buffer @flat : tensor<14xui16> {entry = "T", key = "flat", phase = "train", role = "output"}
func.func @unsigned_shapes() {
  %t = mdl.load @tokens : tensor<2x8xui16>
  %s = mdl.slice %t starts = [0, 0] limits = [2, 7] strides = [1, 1] : tensor<2x8xui16> -> tensor<2x7xui16>
  %f = mdl.reshape %s : tensor<2x7xui16> -> tensor<14xui16>
  mdl.store %f, @flat : tensor<14xui16>
  return
}
