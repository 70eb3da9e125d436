// --mdl-autodiff: the vector-Jacobian products of the unary elementwise ops
// and casts (ElementwiseVJP.cpp). Each function computes r = op(a) from the
// parameter @a : 2x3 (the last one also uses @b : 3) and the loss sum(r),
// whose adjoint G is the seed broadcast to 2x3.
// RUN: modelc-opt %s --mdl-autodiff | FileCheck %s

mdl.param @a : tensor<2x3xf32> = zeros()
mdl.param @b : tensor<3xf32> = zeros()
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}

// neg: -G.
// CHECK-LABEL: func.func @neg()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DA:.*]] = mdl.neg %[[G]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @neg() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.neg %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// abs: G * sign(a), 0 at a = 0.
// CHECK-LABEL: func.func @abs()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[ZERO:.*]] = mdl.constant dense<0.000000e+00>
// CHECK-NEXT: %[[POS:.*]] = mdl.compare gt, %[[A]], %[[ZERO]]
// CHECK-NEXT: %[[GPOS:.*]] = mdl.where %[[POS]], %[[G]], %[[ZERO]]
// CHECK-NEXT: %[[NEGG:.*]] = mdl.neg %[[G]]
// CHECK-NEXT: %[[NEG:.*]] = mdl.compare lt, %[[A]], %[[ZERO]]
// CHECK-NEXT: %[[DA:.*]] = mdl.where %[[NEG]], %[[NEGG]], %[[GPOS]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @abs() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.abs %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// relu: G where the result is positive (0 at a = 0).
// CHECK-LABEL: func.func @relu()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[ZERO:.*]] = mdl.constant dense<0.000000e+00>
// CHECK-NEXT: %[[POS:.*]] = mdl.compare gt, %[[R]], %[[ZERO]]
// CHECK-NEXT: %[[DA:.*]] = mdl.where %[[POS]], %[[G]], %[[ZERO]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @relu() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.relu %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// exp: G * r.
// CHECK-LABEL: func.func @exp()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DA:.*]] = mdl.mul %[[G]], %[[R]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @exp() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.exp %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// log: G / a.
// CHECK-LABEL: func.func @log()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DA:.*]] = mdl.div %[[G]], %[[A]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @log() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.log %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// sqrt: G / (2 r).
// CHECK-LABEL: func.func @sqrt()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[TWO:.*]] = mdl.constant dense<2.000000e+00>
// CHECK-NEXT: %[[R2:.*]] = mdl.mul %[[R]], %[[TWO]]
// CHECK-NEXT: %[[DA:.*]] = mdl.div %[[G]], %[[R2]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @sqrt() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.sqrt %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// rsqrt: -0.5 G r^3.
// CHECK-LABEL: func.func @rsqrt()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[RR:.*]] = mdl.mul %[[R]], %[[R]]
// CHECK-NEXT: %[[RRR:.*]] = mdl.mul %[[RR]], %[[R]]
// CHECK-NEXT: %[[MHALF:.*]] = mdl.constant dense<-5.000000e-01>
// CHECK-NEXT: %[[GH:.*]] = mdl.mul %[[G]], %[[MHALF]]
// CHECK-NEXT: %[[DA:.*]] = mdl.mul %[[GH]], %[[RRR]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @rsqrt() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.rsqrt %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// tanh: G (1 - r^2).
// CHECK-LABEL: func.func @tanh()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[RR:.*]] = mdl.mul %[[R]], %[[R]]
// CHECK-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00>
// CHECK-NEXT: %[[D:.*]] = mdl.sub %[[ONE]], %[[RR]]
// CHECK-NEXT: %[[DA:.*]] = mdl.mul %[[G]], %[[D]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @tanh() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.tanh %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// sigmoid: G (1 - r) r.
// CHECK-LABEL: func.func @sigmoid()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00>
// CHECK-NEXT: %[[D:.*]] = mdl.sub %[[ONE]], %[[R]]
// CHECK-NEXT: %[[GD:.*]] = mdl.mul %[[G]], %[[D]]
// CHECK-NEXT: %[[DA:.*]] = mdl.mul %[[GD]], %[[R]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @sigmoid() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.sigmoid %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// silu: G s (1 + a (1 - s)) with s = sigmoid(a).
// CHECK-LABEL: func.func @silu()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[S:.*]] = mdl.sigmoid %[[A]]
// CHECK-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00>
// CHECK-NEXT: %[[OMS:.*]] = mdl.sub %[[ONE]], %[[S]]
// CHECK-NEXT: %[[AOMS:.*]] = mdl.mul %[[A]], %[[OMS]]
// CHECK-NEXT: %[[F:.*]] = mdl.add %[[ONE]], %[[AOMS]]
// CHECK-NEXT: %[[GS:.*]] = mdl.mul %[[G]], %[[S]]
// CHECK-NEXT: %[[DA:.*]] = mdl.mul %[[GS]], %[[F]]
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @silu() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.silu %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// gelu (erf form): gelu_grad.
// CHECK-LABEL: func.func @gelu()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DA:.*]] = mdl.gelu_grad %[[A]], %[[G]] : tensor<2x3xf32>
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @gelu() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.gelu %a : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// gelu (tanh form): gelu_grad keeps the form.
// CHECK-LABEL: func.func @gelu_tanh()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DA:.*]] = mdl.gelu_grad %[[A]], %[[G]] {approximate = "tanh"} : tensor<2x3xf32>
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @gelu_tanh() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %r = mdl.gelu %a {approximate = "tanh"} : tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// cast between float types: the adjoint is cast back.
// CHECK-LABEL: func.func @cast()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[G64:.*]] = mdl.cast %[[G]] : tensor<2x3xf32> -> tensor<2x3xf64>
// CHECK-NEXT: %[[D64:.*]] = mdl.mul %[[G64]], %[[E:.*]] : tensor<2x3xf64>
// CHECK-NEXT: %[[DA:.*]] = mdl.cast %[[D64]] : tensor<2x3xf64> -> tensor<2x3xf32>
// CHECK:      %[[OLDA:.*]] = mdl.load @"grad:a"
// CHECK-NEXT: mdl.add %[[OLDA]], %[[DA]]
func.func @cast() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %d = mdl.cast %a : tensor<2x3xf32> -> tensor<2x3xf64>
  %e = mdl.exp %d : tensor<2x3xf64>
  %r = mdl.cast %e : tensor<2x3xf64> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// A cast to an integer type cuts the path: b still gets its gradient,
// a (only reached through the integers) gets none.
// CHECK-LABEL: func.func @cast_to_int()
// CHECK-DAG:  %[[A:.*]] = mdl.param_ref @a
// CHECK-DAG:  %[[B:.*]] = mdl.param_ref @b
// CHECK:      %[[R:.*]] = mdl.
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[G]] axes = [0]
// CHECK:      %[[OLDB:.*]] = mdl.load @"grad:b"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK-NOT:  grad:a
// CHECK:      return
func.func @cast_to_int() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @a : tensor<2x3xf32>
  %b = mdl.param_ref @b : tensor<3xf32>
  %i = mdl.cast %a : tensor<2x3xf32> -> tensor<2x3xi32>
  %f = mdl.cast %i : tensor<2x3xi32> -> tensor<2x3xf32>
  %r = mdl.add %f, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %r axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}
