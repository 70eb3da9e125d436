// RUN: modelc-opt %s --mdl-widen-to-f64 | FileCheck %s

// f32 parameters, non-input buffers, constants and op results become f64;
// an f32 input keeps its type and is cast where it is loaded; integer
// tensors and hypers are left alone.
// CHECK: mdl.param @w : tensor<3xf64>
// CHECK: mdl.buffer @"t:in:x" : tensor<2x3xf32>
// CHECK: mdl.buffer @"t:in:y" : tensor<2xi32>
// CHECK: mdl.buffer @"t:out:loss" : tensor<f64>
// CHECK: mdl.buffer @"t:hyper:seed" : tensor<f64>
mdl.param @w : tensor<3xf32> = normal(0.0, 1.0)
mdl.buffer @"t:in:x" : tensor<2x3xf32> {entry = "t", key = "x", phase = "train", role = "input"}
mdl.buffer @"t:in:y" : tensor<2xi32> {entry = "t", key = "y", phase = "train", role = "input"}
mdl.buffer @"t:out:loss" : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
mdl.buffer @"t:hyper:seed" : tensor<f64> {entry = "t", key = "seed", phase = "train", role = "hyper"}

// CHECK-LABEL: func.func @t.fwd_bwd
// CHECK: %[[X:.*]] = mdl.load @"t:in:x" : tensor<2x3xf32>
// CHECK: %[[XW:.*]] = mdl.cast %[[X]] : tensor<2x3xf32> -> tensor<2x3xf64>
// CHECK: %[[W:.*]] = mdl.param_ref @w : tensor<3xf64>
// CHECK: %[[C:.*]] = mdl.constant dense<5.000000e-01> : tensor<f64>
// CHECK: %[[M:.*]] = mdl.mul %[[XW]], %[[W]] : tensor<2x3xf64>, tensor<3xf64> -> tensor<2x3xf64>
// CHECK: %[[S:.*]] = mdl.mul %[[M]], %[[C]]
// CHECK: mdl.mean %[[S]] axes = [0, 1] : tensor<2x3xf64> -> tensor<f64>
// CHECK: mdl.store %{{.*}}, @"t:out:loss" : tensor<f64>
func.func @"t.fwd_bwd"() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %x = mdl.load @"t:in:x" : tensor<2x3xf32>
  %w = mdl.param_ref @w : tensor<3xf32>
  %c = mdl.constant dense<5.000000e-01> : tensor<f32>
  %m = mdl.mul %x, %w : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %s = mdl.mul %m, %c : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %l = mdl.mean %s axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @"t:out:loss" : tensor<f32>
  return
}
