// --mdl-autodiff: the vector-Jacobian products of the shape ops
// (ShapeVJP.cpp). The loss sums the result, so the result's adjoint G is
// the seed broadcast to its shape.
// RUN: modelc-opt %s --mdl-autodiff | FileCheck %s

mdl.param @p : tensor<2x6xf32> = zeros()
mdl.param @q : tensor<2x3x4xf32> = zeros()
mdl.param @c : tensor<3x1xf32> = zeros()
mdl.buffer @x : tensor<2x2xf32> {entry = "t", key = "x", phase = "train", role = "input"}
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}

// reshape: the adjoint reshaped back.
// CHECK-LABEL: func.func @reshape()
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} -> tensor<3x4xf32>
// CHECK-NEXT: %[[DP:.*]] = mdl.reshape %[[G]] : tensor<3x4xf32> -> tensor<2x6xf32>
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:p"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DP]]
func.func @reshape() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %p = mdl.param_ref @p : tensor<2x6xf32>
  %r = mdl.reshape %p : tensor<2x6xf32> -> tensor<3x4xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// transpose by [2, 0, 1]: the adjoint transposed by the inverse [1, 2, 0].
// CHECK-LABEL: func.func @transpose()
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} -> tensor<4x2x3xf32>
// CHECK-NEXT: %[[DQ:.*]] = mdl.transpose %[[G]] perm = [1, 2, 0] : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:q"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DQ]]
func.func @transpose() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %q = mdl.param_ref @q : tensor<2x3x4xf32>
  %r = mdl.transpose %q perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %l = mdl.sum %r axes = [0, 1, 2] : tensor<4x2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// concat: each operand gets its slab of the adjoint; the input %x gets
// none (its slice is erased), @p (twice) gets the sum of its two slabs.
// CHECK-LABEL: func.func @concat()
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} -> tensor<2x14xf32>
// CHECK-NEXT: %[[FIRST:.*]] = mdl.slice %[[G]] starts = [0, 0] limits = [2, 6] strides = [1, 1] : tensor<2x14xf32> -> tensor<2x6xf32>
// CHECK-NEXT: %[[THIRD:.*]] = mdl.slice %[[G]] starts = [0, 8] limits = [2, 14] strides = [1, 1] : tensor<2x14xf32> -> tensor<2x6xf32>
// CHECK-NEXT: %[[DP:.*]] = mdl.add %[[FIRST]], %[[THIRD]]
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:p"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DP]]
func.func @concat() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %p = mdl.param_ref @p : tensor<2x6xf32>
  %x = mdl.load @x : tensor<2x2xf32>
  %r = mdl.concat %p, %x, %p axis = 1 : tensor<2x6xf32>, tensor<2x2xf32>, tensor<2x6xf32> -> tensor<2x14xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x14xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// split: the parts' adjoints concatenated back, zeros for the unused
// middle part.
// CHECK-LABEL: func.func @split()
// CHECK:      mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[D0:.*]] = mdl.mul %{{.*}}, %{{.*}}#2
// CHECK-NEXT: %[[D2:.*]] = mdl.mul %{{.*}}, %{{.*}}#0
// CHECK-NEXT: %[[ZEROS:.*]] = mdl.constant dense<0.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT: %[[DP:.*]] = mdl.concat %[[D0]], %[[ZEROS]], %[[D2]] axis = 1 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x6xf32>
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:p"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DP]]
func.func @split() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %p = mdl.param_ref @p : tensor<2x6xf32>
  %s:3 = mdl.split %p axis = 1 : tensor<2x6xf32> -> tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
  %r = mdl.mul %s#0, %s#2 : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x2xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// broadcast_to from 3x1 to 2x3x4: the adjoint summed over the added axis 0
// and the stretched axis 2, reshaped to 3x1.
// CHECK-LABEL: func.func @broadcast_to()
// CHECK:      mdl.broadcast_to %{{.*}} : tensor<1x1x1xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[DB:.*]] = mdl.mul %{{.*}}, %{{.*}} : tensor<2x3x4xf32>
// CHECK-NEXT: mdl.mul
// CHECK-NEXT: %[[SUM:.*]] = mdl.sum %[[DB]] axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[DC:.*]] = mdl.reshape %[[SUM]] : tensor<3xf32> -> tensor<3x1xf32>
// CHECK:      %[[OLD:.*]] = mdl.load @"grad:c"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DC]]
func.func @broadcast_to() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %c = mdl.param_ref @c : tensor<3x1xf32>
  %q = mdl.param_ref @q : tensor<2x3x4xf32>
  %b = mdl.broadcast_to %c : tensor<3x1xf32> -> tensor<2x3x4xf32>
  %r = mdl.mul %b, %q : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %l = mdl.sum %r axes = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// slice: slice_grad puts the adjoint back where the slice read; a slice
// that takes everything passes the adjoint through.
// CHECK-LABEL: func.func @slice()
// CHECK:      %[[WHOLE:.*]] = mdl.broadcast_to %{{.*}} -> tensor<2x6xf32>
// CHECK:      %[[G:.*]] = mdl.add %{{.*}}, %{{.*}} : tensor<1x3xf32>
// CHECK-NEXT: %[[DS:.*]] = mdl.slice_grad %[[G]] starts = [1, 1] limits = [2, 6] strides = [1, 2] : tensor<1x3xf32> -> tensor<2x6xf32>
// CHECK-NEXT: %[[DP:.*]] = mdl.add %[[WHOLE]], %[[DS]]
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:p"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DP]]
func.func @slice() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %p = mdl.param_ref @p : tensor<2x6xf32>
  %r = mdl.slice %p starts = [1, 1] limits = [2, 6] strides = [1, 2] : tensor<2x6xf32> -> tensor<1x3xf32>
  %whole = mdl.slice %p starts = [0, 0] limits = [2, 6] strides = [1, 1] : tensor<2x6xf32> -> tensor<2x6xf32>
  %m = mdl.mul %r, %r : tensor<1x3xf32>, tensor<1x3xf32> -> tensor<1x3xf32>
  %l1 = mdl.sum %m axes = [0, 1] : tensor<1x3xf32> -> tensor<f32>
  %l2 = mdl.sum %whole axes = [0, 1] : tensor<2x6xf32> -> tensor<f32>
  %l = mdl.add %l1, %l2 : tensor<f32>, tensor<f32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}
