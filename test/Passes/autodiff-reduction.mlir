// --mdl-autodiff: the vector-Jacobian products of the reductions and of
// softmax/log_softmax (ReductionVJP.cpp). The losses are MSE against an
// input or the reduction itself; G is the reduced value's adjoint.
// RUN: modelc-opt %s --mdl-autodiff | FileCheck %s

mdl.param @x : tensor<2x3x4xf32> = zeros()
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
mdl.buffer @y : tensor<3xf32> {entry = "t", key = "y", phase = "train", role = "input"}
mdl.buffer @z : tensor<2x3x4xf32> {entry = "t", key = "z", phase = "train", role = "input"}

// sum over [0, 2]: the adjoint with the reduced axes put back as 1,
// broadcast to the input.
// CHECK-LABEL: func.func @sum()
// CHECK:      %[[G:.*]] = mdl.mul %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
// CHECK-NEXT: %[[GK:.*]] = mdl.reshape %[[G]] : tensor<3xf32> -> tensor<1x3x1xf32>
// CHECK-NEXT: %[[DX:.*]] = mdl.broadcast_to %[[GK]] : tensor<1x3x1xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:x"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DX]]
func.func @sum() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @x : tensor<2x3x4xf32>
  %y = mdl.load @y : tensor<3xf32>
  %r = mdl.sum %x axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %l = mdl.mse_loss %r, %y : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// mean over [1] with keepdim: the adjoint (already 2x1x4) divided by the
// count 3, then broadcast.
// CHECK-LABEL: func.func @mean_keepdim()
// CHECK:      %[[G:.*]] = mdl.add %{{.*}}, %{{.*}} : tensor<2x1x4xf32>
// CHECK-NEXT: %[[N:.*]] = mdl.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[GN:.*]] = mdl.div %[[G]], %[[N]]
// CHECK-NEXT: %[[DX:.*]] = mdl.broadcast_to %[[GN]] : tensor<2x1x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:x"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DX]]
func.func @mean_keepdim() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @x : tensor<2x3x4xf32>
  %r = mdl.mean %x axes = [1] keepdim : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %s = mdl.mul %r, %r : tensor<2x1x4xf32>, tensor<2x1x4xf32> -> tensor<2x1x4xf32>
  %l = mdl.sum %s axes = [0, 1, 2] : tensor<2x1x4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// max over [0, 2] (torch.amax): the adjoint split evenly among the
// elements equal to the maximum: restore(G) / count * mask.
// CHECK-LABEL: func.func @max()
// CHECK:      %[[X:.*]] = mdl.param_ref @x
// CHECK:      %[[R:.*]] = mdl.max %[[X]]
// CHECK:      %[[G:.*]] = mdl.mul %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
// CHECK-NEXT: %[[RK:.*]] = mdl.reshape %[[R]] : tensor<3xf32> -> tensor<1x3x1xf32>
// CHECK-NEXT: %[[EQ:.*]] = mdl.compare eq, %[[X]], %[[RK]] : tensor<2x3x4xf32>, tensor<1x3x1xf32> -> tensor<2x3x4xi1>
// CHECK-NEXT: %[[MASK:.*]] = mdl.cast %[[EQ]] : tensor<2x3x4xi1> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[COUNT:.*]] = mdl.sum %[[MASK]] axes = [0, 2] keepdim : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
// CHECK-NEXT: %[[GK:.*]] = mdl.reshape %[[G]] : tensor<3xf32> -> tensor<1x3x1xf32>
// CHECK-NEXT: %[[SHARE:.*]] = mdl.div %[[GK]], %[[COUNT]]
// CHECK-NEXT: %[[DX:.*]] = mdl.mul %[[SHARE]], %[[MASK]] : tensor<1x3x1xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:x"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DX]]
func.func @max() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @x : tensor<2x3x4xf32>
  %y = mdl.load @y : tensor<3xf32>
  %r = mdl.max %x axes = [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  %l = mdl.mse_loss %r, %y : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// min over every axis: the same with a 0-d result.
// CHECK-LABEL: func.func @min()
// CHECK:      %[[X:.*]] = mdl.param_ref @x
// CHECK-NEXT: %[[R:.*]] = mdl.min %[[X]]
// CHECK:      %[[SEED:.*]] = mdl.constant dense<1.000000e+00>
// CHECK-NEXT: %[[RK:.*]] = mdl.reshape %[[R]] : tensor<f32> -> tensor<1x1x1xf32>
// CHECK-NEXT: %[[EQ:.*]] = mdl.compare eq, %[[X]], %[[RK]]
// CHECK-NEXT: %[[MASK:.*]] = mdl.cast %[[EQ]]
// CHECK-NEXT: %[[COUNT:.*]] = mdl.sum %[[MASK]] axes = [0, 1, 2] keepdim
// CHECK-NEXT: %[[GK:.*]] = mdl.reshape %[[SEED]] : tensor<f32> -> tensor<1x1x1xf32>
// CHECK-NEXT: %[[SHARE:.*]] = mdl.div %[[GK]], %[[COUNT]]
// CHECK-NEXT: %[[DX:.*]] = mdl.mul %[[SHARE]], %[[MASK]]
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:x"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DX]]
func.func @min() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @x : tensor<2x3x4xf32>
  %l = mdl.min %x axes = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// softmax along 1: y * (G - sum(G * y, 1, keepdim)).
// CHECK-LABEL: func.func @softmax()
// CHECK:      %[[Y:.*]] = mdl.softmax
// CHECK:      %[[G:.*]] = mdl.mul %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<f32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[GY:.*]] = mdl.mul %[[G]], %[[Y]]
// CHECK-NEXT: %[[DOT:.*]] = mdl.sum %[[GY]] axes = [1] keepdim : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT: %[[CENTERED:.*]] = mdl.sub %[[G]], %[[DOT]]
// CHECK-NEXT: %[[DX:.*]] = mdl.mul %[[Y]], %[[CENTERED]]
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:x"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DX]]
func.func @softmax() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @x : tensor<2x3x4xf32>
  %z = mdl.load @z : tensor<2x3x4xf32>
  %r = mdl.softmax %x axis = 1 : tensor<2x3x4xf32>
  %l = mdl.mse_loss %r, %z : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// log_softmax along 2: G - exp(y) * sum(G, 2, keepdim).
// CHECK-LABEL: func.func @log_softmax()
// CHECK:      %[[Y:.*]] = mdl.log_softmax
// CHECK:      %[[G:.*]] = mdl.mul %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<f32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[TOTAL:.*]] = mdl.sum %[[G]] axes = [2] keepdim : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT: %[[P:.*]] = mdl.exp %[[Y]]
// CHECK-NEXT: %[[PT:.*]] = mdl.mul %[[P]], %[[TOTAL]]
// CHECK-NEXT: %[[DX:.*]] = mdl.sub %[[G]], %[[PT]]
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:x"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DX]]
func.func @log_softmax() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @x : tensor<2x3x4xf32>
  %z = mdl.load @z : tensor<2x3x4xf32>
  %r = mdl.log_softmax %x axis = 2 : tensor<2x3x4xf32>
  %l = mdl.mse_loss %r, %z : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}
