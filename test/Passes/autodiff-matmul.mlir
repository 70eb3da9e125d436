// --mdl-autodiff: the vector-Jacobian product of mdl.matmul in every
// torch.matmul case (NNVJP.cpp): 1-D operands, a matrix shared by a batch,
// and batch axes that broadcast. G is the result's adjoint.
// RUN: modelc-opt %s --mdl-autodiff | FileCheck %s

mdl.param @v : tensor<4xf32> = zeros()
mdl.param @u : tensor<4xf32> = zeros()
mdl.param @m : tensor<4x5xf32> = zeros()
mdl.param @x : tensor<2x3x4xf32> = zeros()
mdl.param @a : tensor<2x1x3x4xf32> = zeros()
mdl.param @b : tensor<6x4x5xf32> = zeros()
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}

// 1-D x 1-D (a dot product): each vector gets the 0-d adjoint times the
// other.
// CHECK-LABEL: func.func @dot()
// CHECK:      %[[V:.*]] = mdl.param_ref @v
// CHECK-NEXT: %[[U:.*]] = mdl.param_ref @u
// CHECK:      %[[G:.*]] = mdl.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[DV:.*]] = mdl.mul %[[G]], %[[U]] : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[DU:.*]] = mdl.mul %[[G]], %[[V]] : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[OLDU:.*]] = mdl.load @"grad:u"
// CHECK-NEXT: mdl.add %[[OLDU]], %[[DU]]
// CHECK:      %[[OLDV:.*]] = mdl.load @"grad:v"
// CHECK-NEXT: mdl.add %[[OLDV]], %[[DV]]
func.func @dot() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %v = mdl.param_ref @v : tensor<4xf32>
  %u = mdl.param_ref @u : tensor<4xf32>
  %l = mdl.matmul %v, %u : tensor<4xf32>, tensor<4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// 1-D x 2-D: the vector is promoted to a row [1, 4] and the adjoint
// [5] to [1, 5]; dv = G M^T reshaped to [4], dM = v^T G (an outer product).
// CHECK-LABEL: func.func @vector_matrix()
// CHECK:      %[[V:.*]] = mdl.param_ref @v
// CHECK-NEXT: %[[M:.*]] = mdl.param_ref @m
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} -> tensor<5xf32>
// CHECK-NEXT: %[[ROW:.*]] = mdl.reshape %[[V]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK-NEXT: %[[G2:.*]] = mdl.reshape %[[G]] : tensor<5xf32> -> tensor<1x5xf32>
// CHECK-NEXT: %[[MT:.*]] = mdl.transpose %[[M]] perm = [1, 0] : tensor<4x5xf32> -> tensor<5x4xf32>
// CHECK-NEXT: %[[DROW:.*]] = mdl.matmul %[[G2]], %[[MT]] : tensor<1x5xf32>, tensor<5x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT: %[[COL:.*]] = mdl.transpose %[[ROW]] perm = [1, 0] : tensor<1x4xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[DM:.*]] = mdl.matmul %[[COL]], %[[G2]] : tensor<4x1xf32>, tensor<1x5xf32> -> tensor<4x5xf32>
// CHECK-NEXT: %[[DV:.*]] = mdl.reshape %[[DROW]] : tensor<1x4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[OLDM:.*]] = mdl.load @"grad:m"
// CHECK-NEXT: mdl.add %[[OLDM]], %[[DM]]
// CHECK:      %[[OLDV:.*]] = mdl.load @"grad:v"
// CHECK-NEXT: mdl.add %[[OLDV]], %[[DV]]
func.func @vector_matrix() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %v = mdl.param_ref @v : tensor<4xf32>
  %m = mdl.param_ref @m : tensor<4x5xf32>
  %r = mdl.matmul %v, %m : tensor<4xf32>, tensor<4x5xf32> -> tensor<5xf32>
  %l = mdl.sum %r axes = [0] : tensor<5xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// 3-D x 1-D: the vector is promoted to a column [4, 1] and the adjoint
// [2, 3] to [2, 3, 1]. dx = G v^T; dv = x^T G with the batch flattened into
// the rows of one GEMM ([4, 6] x [6, 1]) instead of a batched product and a
// sum.
// CHECK-LABEL: func.func @batch_vector()
// CHECK:      %[[X:.*]] = mdl.param_ref @x
// CHECK-NEXT: %[[V:.*]] = mdl.param_ref @v
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} -> tensor<2x3xf32>
// CHECK-NEXT: %[[COL:.*]] = mdl.reshape %[[V]] : tensor<4xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[G3:.*]] = mdl.reshape %[[G]] : tensor<2x3xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT: %[[ROW:.*]] = mdl.transpose %[[COL]] perm = [1, 0]
// CHECK-NEXT: %[[DX:.*]] = mdl.matmul %[[G3]], %[[ROW]] : tensor<2x3x1xf32>, tensor<1x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[XFLAT:.*]] = mdl.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[GFLAT:.*]] = mdl.reshape %[[G3]] : tensor<2x3x1xf32> -> tensor<6x1xf32>
// CHECK-NEXT: %[[XT:.*]] = mdl.transpose %[[XFLAT]] perm = [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[DCOL:.*]] = mdl.matmul %[[XT]], %[[GFLAT]] : tensor<4x6xf32>, tensor<6x1xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[DV:.*]] = mdl.reshape %[[DCOL]] : tensor<4x1xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[OLDV:.*]] = mdl.load @"grad:v"
// CHECK-NEXT: mdl.add %[[OLDV]], %[[DV]]
// CHECK:      %[[OLDX:.*]] = mdl.load @"grad:x"
// CHECK-NEXT: mdl.add %[[OLDX]], %[[DX]]
func.func @batch_vector() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @x : tensor<2x3x4xf32>
  %v = mdl.param_ref @v : tensor<4xf32>
  %r = mdl.matmul %x, %v : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// 3-D x 2-D (a linear layer on [batch, tokens, features]): dx = G M^T
// keeps the batch; dM sums over it inside one GEMM on the flattened rows.
// CHECK-LABEL: func.func @linear()
// CHECK:      %[[X:.*]] = mdl.param_ref @x
// CHECK-NEXT: %[[M:.*]] = mdl.param_ref @m
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} -> tensor<2x3x5xf32>
// CHECK-NEXT: %[[MT:.*]] = mdl.transpose %[[M]] perm = [1, 0] : tensor<4x5xf32> -> tensor<5x4xf32>
// CHECK-NEXT: %[[DX:.*]] = mdl.matmul %[[G]], %[[MT]] : tensor<2x3x5xf32>, tensor<5x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[XFLAT:.*]] = mdl.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[GFLAT:.*]] = mdl.reshape %[[G]] : tensor<2x3x5xf32> -> tensor<6x5xf32>
// CHECK-NEXT: %[[XT:.*]] = mdl.transpose %[[XFLAT]] perm = [1, 0]
// CHECK-NEXT: %[[DM:.*]] = mdl.matmul %[[XT]], %[[GFLAT]] : tensor<4x6xf32>, tensor<6x5xf32> -> tensor<4x5xf32>
// CHECK-NEXT: %[[OLDM:.*]] = mdl.load @"grad:m"
// CHECK-NEXT: mdl.add %[[OLDM]], %[[DM]]
// CHECK:      %[[OLDX:.*]] = mdl.load @"grad:x"
// CHECK-NEXT: mdl.add %[[OLDX]], %[[DX]]
func.func @linear() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @x : tensor<2x3x4xf32>
  %m = mdl.param_ref @m : tensor<4x5xf32>
  %r = mdl.matmul %x, %m : tensor<2x3x4xf32>, tensor<4x5xf32> -> tensor<2x3x5xf32>
  %l = mdl.sum %r axes = [0, 1, 2] : tensor<2x3x5xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// Batched with broadcast batch axes ([2, 1] against [6]): the batched
// products give [2, 6, ...] adjoints, summed over the axes each operand was
// broadcast along (axis 1 for a, the added axis 0 for b).
// CHECK-LABEL: func.func @batch_broadcast()
// CHECK:      %[[A:.*]] = mdl.param_ref @a
// CHECK-NEXT: %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} -> tensor<2x6x3x5xf32>
// CHECK-NEXT: %[[BT:.*]] = mdl.transpose %[[B]] perm = [0, 2, 1] : tensor<6x4x5xf32> -> tensor<6x5x4xf32>
// CHECK-NEXT: %[[GA:.*]] = mdl.matmul %[[G]], %[[BT]] : tensor<2x6x3x5xf32>, tensor<6x5x4xf32> -> tensor<2x6x3x4xf32>
// CHECK-NEXT: %[[SA:.*]] = mdl.sum %[[GA]] axes = [1] : tensor<2x6x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[DA:.*]] = mdl.reshape %[[SA]] : tensor<2x3x4xf32> -> tensor<2x1x3x4xf32>
// CHECK-NEXT: %[[AT:.*]] = mdl.transpose %[[A]] perm = [0, 1, 3, 2] : tensor<2x1x3x4xf32> -> tensor<2x1x4x3xf32>
// CHECK-NEXT: %[[GB:.*]] = mdl.matmul %[[AT]], %[[G]] : tensor<2x1x4x3xf32>, tensor<2x6x3x5xf32> -> tensor<2x6x4x5xf32>
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[GB]] axes = [0] : tensor<2x6x4x5xf32> -> tensor<6x4x5xf32>
// CHECK-NEXT: %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @batch_broadcast() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x1x3x4xf32>
  %b = mdl.param_ref @b : tensor<6x4x5xf32>
  %r = mdl.matmul %a, %b : tensor<2x1x3x4xf32>, tensor<6x4x5xf32> -> tensor<2x6x3x5xf32>
  %l = mdl.sum %r axes = [0, 1, 2, 3] : tensor<2x6x3x5xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}
