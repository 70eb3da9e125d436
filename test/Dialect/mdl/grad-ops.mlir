// The gradient ops, buffer ops and the dropout mask print and parse back
// unchanged, in the custom and in the generic form. Their verifier rules
// are in grad-ops-invalid.mlir.
// RUN: modelc-opt %s | modelc-opt | FileCheck %s
// RUN: modelc-opt %s --mlir-print-op-generic | modelc-opt | FileCheck %s
// Printing the printed form again changes nothing.
// RUN: modelc-opt %s > %t && modelc-opt %t | diff %t -

// CHECK-LABEL: func.func @conv2d_grads(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4x9x9xf32>, %[[W:[^:]*]]: tensor<6x2x3x3xf32>, %[[G:[^:]*]]: tensor<2x6x5x5xf32>
func.func @conv2d_grads(%x: tensor<2x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %g: tensor<2x6x5x5xf32>) {
  // CHECK: mdl.conv2d_grad_input %[[G]], %[[W]] stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<2x6x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x9xf32>
  %0 = mdl.conv2d_grad_input %g, %w stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<2x6x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x9xf32>
  // CHECK: mdl.conv2d_grad_weight %[[X]], %[[G]] stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<2x4x9x9xf32>, tensor<2x6x5x5xf32> -> tensor<6x2x3x3xf32>
  %1 = mdl.conv2d_grad_weight %x, %g stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<2x4x9x9xf32>, tensor<2x6x5x5xf32> -> tensor<6x2x3x3xf32>
  return
}

// CHECK-LABEL: func.func @pool_grads(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x3x8x8xf64>, %[[G:[^:]*]]: tensor<1x3x4x4xf64>
func.func @pool_grads(%x: tensor<1x3x8x8xf64>, %g: tensor<1x3x4x4xf64>) {
  // CHECK: mdl.max_pool2d_grad %[[X]], %[[G]] kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<1x3x8x8xf64>, tensor<1x3x4x4xf64> -> tensor<1x3x8x8xf64>
  %0 = mdl.max_pool2d_grad %x, %g kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<1x3x8x8xf64>, tensor<1x3x4x4xf64> -> tensor<1x3x8x8xf64>
  // CHECK: mdl.avg_pool2d_grad %[[G]] kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<1x3x4x4xf64> -> tensor<1x3x8x8xf64>
  %1 = mdl.avg_pool2d_grad %g kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<1x3x4x4xf64> -> tensor<1x3x8x8xf64>
  return
}

// CHECK-LABEL: func.func @embedding_grad(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<8x16xui16>, %[[G:[^:]*]]: tensor<8x16x32xbf16>
func.func @embedding_grad(%ids: tensor<8x16xui16>, %g: tensor<8x16x32xbf16>) -> tensor<100x32xbf16> {
  // CHECK: mdl.embedding_grad %[[IDS]], %[[G]] : tensor<8x16xui16>, tensor<8x16x32xbf16> -> tensor<100x32xbf16>
  %0 = mdl.embedding_grad %ids, %g : tensor<8x16xui16>, tensor<8x16x32xbf16> -> tensor<100x32xbf16>
  return %0 : tensor<100x32xbf16>
}

// CHECK-LABEL: func.func @layer_norm_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x8xf32>, %[[W:[^:]*]]: tensor<8xf32>, %[[G:[^:]*]]: tensor<2x3x8xf32>
func.func @layer_norm_grad(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %g: tensor<2x3x8xf32>) {
  // CHECK: mdl.layer_norm_grad %[[X]], %[[W]], %[[G]] eps = 1.000000e-05 : tensor<2x3x8xf32>, tensor<8xf32>
  %dx, %dw, %db = mdl.layer_norm_grad %x, %w, %g eps = 1.0e-5 : tensor<2x3x8xf32>, tensor<8xf32>
  return
}

// CHECK-LABEL: func.func @gelu_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf16>, %[[G:[^:]*]]: tensor<4x8xf16>
func.func @gelu_grad(%x: tensor<4x8xf16>, %g: tensor<4x8xf16>) {
  // CHECK: mdl.gelu_grad %[[X]], %[[G]] : tensor<4x8xf16>
  %0 = mdl.gelu_grad %x, %g : tensor<4x8xf16>
  // The default form is not printed.
  // CHECK: mdl.gelu_grad %[[X]], %[[G]] : tensor<4x8xf16>
  %1 = mdl.gelu_grad %x, %g {approximate = "none"} : tensor<4x8xf16>
  // CHECK: mdl.gelu_grad %[[X]], %[[G]] {approximate = "tanh"} : tensor<4x8xf16>
  %2 = mdl.gelu_grad %x, %g {approximate = "tanh"} : tensor<4x8xf16>
  return
}

// CHECK-LABEL: func.func @cross_entropy_grad(
// CHECK-SAME: %[[Z:[^:]*]]: tensor<4x16x10xf32>, %[[L:[^:]*]]: tensor<4x16xi64>, %[[G:[^:]*]]: tensor<f32>
func.func @cross_entropy_grad(%z: tensor<4x16x10xf32>, %l: tensor<4x16xi64>, %g: tensor<f32>) {
  // CHECK: mdl.cross_entropy_grad %[[Z]], %[[L]], %[[G]] ignore_index = -100 : tensor<4x16x10xf32>, tensor<4x16xi64>, tensor<f32> -> tensor<4x16x10xf32>
  %0 = mdl.cross_entropy_grad %z, %l, %g ignore_index = -100 : tensor<4x16x10xf32>, tensor<4x16xi64>, tensor<f32> -> tensor<4x16x10xf32>
  return
}

// CHECK-LABEL: func.func @slice_grad(
// CHECK-SAME: %[[G:[^:]*]]: tensor<2x3xf32>
func.func @slice_grad(%g: tensor<2x3xf32>) {
  // CHECK: mdl.slice_grad %[[G]] starts = [1, 1] limits = [5, 6] strides = [2, 2] : tensor<2x3xf32> -> tensor<5x6xf32>
  %0 = mdl.slice_grad %g starts = [1, 1] limits = [5, 6] strides = [2, 2] : tensor<2x3xf32> -> tensor<5x6xf32>
  return
}

// CHECK: mdl.param @w : tensor<4x3xf32> = zeros()
// CHECK: mdl.buffer @"grad:w" : tensor<4x3xf32> {entry = "", key = "w", phase = "shared", role = "grad"}
// CHECK: mdl.buffer @"t:hyper:seed" : tensor<f64> {entry = "t", key = "seed", phase = "train", role = "hyper"}
// CHECK: mdl.buffer @"t:hyper:rng_counter" : tensor<f64> {entry = "t", key = "rng_counter", phase = "train", role = "hyper"}
// CHECK: mdl.buffer @"i:out:y" : tensor<8xi64> {entry = "i", key = "y", phase = "infer", role = "output"}
mdl.param @w : tensor<4x3xf32> = zeros()
mdl.buffer @"grad:w" : tensor<4x3xf32> {entry = "", key = "w", phase = "shared", role = "grad"}
mdl.buffer @"t:hyper:seed" : tensor<f64> {entry = "t", key = "seed", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:rng_counter" : tensor<f64> {entry = "t", key = "rng_counter", phase = "train", role = "hyper"}
mdl.buffer @"i:out:y" : tensor<8xi64> {entry = "i", key = "y", phase = "infer", role = "output"}

// CHECK-LABEL: func.func @load_store_mask()
func.func @load_store_mask() {
  // CHECK: %[[G:.*]] = mdl.load @"grad:w" : tensor<4x3xf32>
  %g = mdl.load @"grad:w" : tensor<4x3xf32>
  // A parameter can be loaded and stored too.
  // CHECK: %[[W:.*]] = mdl.load @w : tensor<4x3xf32>
  %w = mdl.load @w : tensor<4x3xf32>
  // CHECK: %[[SEED:.*]] = mdl.load @"t:hyper:seed" : tensor<f64>
  %seed = mdl.load @"t:hyper:seed" : tensor<f64>
  // CHECK: %[[COUNTER:.*]] = mdl.load @"t:hyper:rng_counter" : tensor<f64>
  %counter = mdl.load @"t:hyper:rng_counter" : tensor<f64>
  // CHECK: %[[MASK:.*]] = mdl.dropout_mask %[[SEED]], %[[COUNTER]] p = 1.000000e-01 id = 3 : tensor<f64>, tensor<f64> -> tensor<4x3xf32>
  %mask = mdl.dropout_mask %seed, %counter p = 1.000000e-01 id = 3 : tensor<f64>, tensor<f64> -> tensor<4x3xf32>
  %new = mdl.add %w, %mask : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  // CHECK: mdl.store %{{.*}}, @w : tensor<4x3xf32>
  mdl.store %new, @w : tensor<4x3xf32>
  // CHECK: mdl.store %[[G]], @"grad:w" : tensor<4x3xf32>
  mdl.store %g, @"grad:w" : tensor<4x3xf32>
  return
}

// The fused attention and its gradient (--mdl-decompose and --mdl-autodiff
// make them): the log-sum-exp in f32 for f32 and 16-bit inputs, a mask,
// the dropout's seed and counter.

// CHECK-LABEL: func.func @attention_fused
// CHECK: %[[O:.*]], %[[L:.*]] = mdl.attention_forward %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} : tensor<2x1x1x5xi1> rng(%{{.*}}, %{{.*}} : tensor<f64>, tensor<f64>) causal scale = 2.500000e-01 dropout = 1.000000e-01 id = 3 : tensor<2x3x4x8xbf16>, tensor<2x3x5x8xbf16>, tensor<2x3x5x6xbf16> -> tensor<2x3x4x6xbf16>, tensor<2x3x4xf32>
// CHECK: mdl.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %{{.*}}, %[[L]] mask %{{.*}} : tensor<2x1x1x5xi1> rng(%{{.*}}, %{{.*}} : tensor<f64>, tensor<f64>) causal scale = 2.500000e-01 dropout = 1.000000e-01 id = 3 : {{.*}} -> tensor<2x3x4x8xbf16>, tensor<2x3x5x8xbf16>, tensor<2x3x5x6xbf16>
// CHECK: mdl.attention_forward %{{.*}}, %{{.*}}, %{{.*}} scale = 1.000000e+00 : tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64> -> tensor<1x1x2x2xf64>, tensor<1x1x2xf64>
func.func @attention_fused(%q: tensor<2x3x4x8xbf16>, %k: tensor<2x3x5x8xbf16>, %v: tensor<2x3x5x6xbf16>, %m: tensor<2x1x1x5xi1>, %seed: tensor<f64>, %counter: tensor<f64>, %do: tensor<2x3x4x6xbf16>, %x: tensor<1x1x2x2xf64>) {
  %o, %lse = mdl.attention_forward %q, %k, %v mask %m : tensor<2x1x1x5xi1> rng(%seed, %counter : tensor<f64>, tensor<f64>) causal scale = 0.25 dropout = 0.1 id = 3 : tensor<2x3x4x8xbf16>, tensor<2x3x5x8xbf16>, tensor<2x3x5x6xbf16> -> tensor<2x3x4x6xbf16>, tensor<2x3x4xf32>
  %dq, %dk, %dv = mdl.attention_backward %q, %k, %v, %o, %do, %lse mask %m : tensor<2x1x1x5xi1> rng(%seed, %counter : tensor<f64>, tensor<f64>) causal scale = 0.25 dropout = 0.1 id = 3 : tensor<2x3x4x8xbf16>, tensor<2x3x5x8xbf16>, tensor<2x3x5x6xbf16>, tensor<2x3x4x6xbf16>, tensor<2x3x4x6xbf16>, tensor<2x3x4xf32> -> tensor<2x3x4x8xbf16>, tensor<2x3x5x8xbf16>, tensor<2x3x5x6xbf16>
  %y, %ly = mdl.attention_forward %x, %x, %x scale = 1.0 : tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64>, tensor<1x1x2x2xf64> -> tensor<1x1x2x2xf64>, tensor<1x1x2xf64>
  return
}
