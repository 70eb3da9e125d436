// --mdl-autodiff: the vector-Jacobian products of the binary elementwise
// ops and where (ElementwiseVJP.cpp; the unary ops are in
// autodiff-unary.mlir). Each function computes r = op(a, b) from the
// parameters @a : 2x3 and @b : 3 (broadcast along axis 0) and the loss
// sum(r), whose adjoint G is the seed broadcast to 2x3.
// RUN: modelc-opt %s --mdl-autodiff | FileCheck %s

mdl.param @a : tensor<2x3xf32> = zeros()
mdl.param @b : tensor<3xf32> = zeros()
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}

// add: both get G; b was broadcast along axis 0, so it gets G summed
// over it.
// CHECK-LABEL: func.func @add()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[G]] axes = [0] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK:      %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[G]]
func.func @add() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// sub: a gets G, b gets -sum(G) (negated after the reduction).
// CHECK-LABEL: func.func @sub()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[SUM:.*]] = mdl.sum %[[G]] axes = [0]
// CHECK-NEXT: %[[DB:.*]] = mdl.neg %[[SUM]] : tensor<3xf32>
// CHECK:      %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[G]]
func.func @sub() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.sub %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// mul: a gets G * b, b gets sum(G * a).
// CHECK-LABEL: func.func @mul()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DA:.*]] = mdl.mul %[[G]], %[[B]]
// CHECK-NEXT: %[[GA:.*]] = mdl.mul %[[G]], %[[A]]
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[GA]] axes = [0]
// CHECK:      %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @mul() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.mul %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// div: a gets G / b, b gets -sum(G * (r / b)) (PyTorch's
// -grad * self / other / other, with r = self / other).
// CHECK-LABEL: func.func @div()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[RB:.*]] = mdl.div %[[R]], %[[B]]
// CHECK-NEXT: %[[GRB:.*]] = mdl.mul %[[G]], %[[RB]]
// CHECK-NEXT: %[[DA:.*]] = mdl.div %[[G]], %[[B]]
// CHECK-NEXT: %[[SUM:.*]] = mdl.sum %[[GRB]] axes = [0]
// CHECK-NEXT: %[[DB:.*]] = mdl.neg %[[SUM]]
// CHECK:      %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @div() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.div %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// remainder: a gets G, b gets -sum(G * floor(a / b)) with the floor
// division computed as (a - r) / b.
// CHECK-LABEL: func.func @rem()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[AR:.*]] = mdl.sub %[[A]], %[[R]]
// CHECK-NEXT: %[[Q:.*]] = mdl.div %[[AR]], %[[B]]
// CHECK-NEXT: %[[GQ:.*]] = mdl.mul %[[G]], %[[Q]]
// CHECK-NEXT: %[[SUM:.*]] = mdl.sum %[[GQ]] axes = [0]
// CHECK-NEXT: %[[DB:.*]] = mdl.neg %[[SUM]]
// CHECK:      %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[G]]
func.func @rem() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.rem %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// pow: a gets where(b == 0, 0, G * b * a^(b - 1)); b gets
// G * where(a == 0 & b >= 0, 0, r * log(a)) summed (nan for a < 0, as
// PyTorch).
// CHECK-LABEL: func.func @pow()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[ZERO:.*]] = mdl.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[BM1:.*]] = mdl.sub %[[B]], %[[ONE]]
// CHECK-NEXT: %[[POW:.*]] = mdl.pow %[[A]], %[[BM1]]
// CHECK-NEXT: %[[BPOW:.*]] = mdl.mul %[[B]], %[[POW]]
// CHECK-NEXT: %[[GBPOW:.*]] = mdl.mul %[[G]], %[[BPOW]]
// CHECK-NEXT: %[[BZERO:.*]] = mdl.compare eq, %[[B]], %[[ZERO]]
// CHECK-NEXT: %[[DA:.*]] = mdl.where %[[BZERO]], %[[ZERO]], %[[GBPOW]]
// CHECK-NEXT: %[[AZERO:.*]] = mdl.compare eq, %[[A]], %[[ZERO]]
// CHECK-NEXT: %[[BNONNEG:.*]] = mdl.compare ge, %[[B]], %[[ZERO]]
// CHECK-NEXT: %[[LOG:.*]] = mdl.log %[[A]]
// CHECK-NEXT: %[[RLOG:.*]] = mdl.mul %[[R]], %[[LOG]]
// CHECK-NEXT: %[[GUARD:.*]] = mdl.and %[[AZERO]], %[[BNONNEG]]
// CHECK-NEXT: %[[SAFE:.*]] = mdl.where %[[GUARD]], %[[ZERO]], %[[RLOG]]
// CHECK-NEXT: %[[GB:.*]] = mdl.mul %[[G]], %[[SAFE]]
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[GB]] axes = [0]
// CHECK:      %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @pow() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.pow %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// maximum: the larger operand gets G, a tie gives G / 2 to each:
// a gets where(a < b, 0, where(a == b, G / 2, G)), b the same with a > b.
// CHECK-LABEL: func.func @maximum()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[ZERO:.*]] = mdl.constant dense<0.000000e+00>
// CHECK-NEXT: %[[HALF:.*]] = mdl.constant dense<5.000000e-01>
// CHECK-NEXT: %[[GHALF:.*]] = mdl.mul %[[G]], %[[HALF]]
// CHECK-NEXT: %[[EQ:.*]] = mdl.compare eq, %[[A]], %[[B]]
// CHECK-NEXT: %[[SHARED:.*]] = mdl.where %[[EQ]], %[[GHALF]], %[[G]]
// CHECK-NEXT: %[[LT:.*]] = mdl.compare lt, %[[A]], %[[B]]
// CHECK-NEXT: %[[GT:.*]] = mdl.compare gt, %[[A]], %[[B]]
// CHECK-NEXT: %[[DA:.*]] = mdl.where %[[LT]], %[[ZERO]], %[[SHARED]]
// CHECK-NEXT: %[[GB:.*]] = mdl.where %[[GT]], %[[ZERO]], %[[SHARED]]
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[GB]] axes = [0]
// CHECK:      %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @maximum() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.maximum %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// minimum: as maximum with the masks swapped.
// CHECK-LABEL: func.func @minimum()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK:      %[[SHARED:.*]] = mdl.where %{{.*}}, %{{.*}}, %[[G]]
// CHECK-NEXT: %[[LT:.*]] = mdl.compare lt, %[[A]], %[[B]]
// CHECK-NEXT: %[[GT:.*]] = mdl.compare gt, %[[A]], %[[B]]
// CHECK-NEXT: %[[DA:.*]] = mdl.where %[[GT]], %{{.*}}, %[[SHARED]]
// CHECK-NEXT: %[[GB:.*]] = mdl.where %[[LT]], %{{.*}}, %[[SHARED]]
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[GB]] axes = [0]
// CHECK:      %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @minimum() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.minimum %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// where: on_true gets G where the condition holds, on_false elsewhere;
// the condition gets nothing.
// CHECK-LABEL: func.func @where()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[ZERO:.*]] = mdl.constant dense<0.000000e+00>
// CHECK-NEXT: %[[DA:.*]] = mdl.where %[[C:.*]], %[[G]], %[[ZERO]]
// CHECK-NEXT: %[[GB:.*]] = mdl.where %[[C]], %[[ZERO]], %[[G]]
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[GB]] axes = [0]
// CHECK:      %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @where() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %z = mdl.constant dense<0.000000e+00> : tensor<f32>
  %c = mdl.compare gt, %a, %z : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xi1>
  %r = mdl.where %c, %a, %b : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}
