// Every verifier rule of the gradient ops, buffer ops and the dropout mask
// rejects what it should, with its message. One case per rule.
// RUN: modelc-opt %s -split-input-file -verify-diagnostics

func.func @f(%w: tensor<6x2x3x3xf32>, %g: tensor<2x6x4x4xf32>) {
  // expected-error @+1 {{grad has type 'tensor<2x6x4x4xf32>' but the forward op gives shape [2, 6, 5, 5]}}
  %0 = mdl.conv2d_grad_input %g, %w stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<2x6x4x4xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x9xf32>
  return
}

// -----

func.func @f(%w: tensor<6x2x3x3xf16>, %g: tensor<2x6x5x5xf32>) {
  // expected-error @+1 {{operands and result must have one element type}}
  %0 = mdl.conv2d_grad_input %g, %w stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<2x6x5x5xf32>, tensor<6x2x3x3xf16> -> tensor<2x4x9x9xf32>
  return
}

// -----

func.func @f(%w: tensor<6x2x3x3xf32>, %g: tensor<2x6x5x5xf32>) {
  // expected-error @+1 {{operand shapes and attributes do not describe a valid forward op}}
  %0 = mdl.conv2d_grad_input %g, %w stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 3 : tensor<2x6x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x9xf32>
  return
}

// -----

func.func @f(%x: tensor<2x4x9x9xf32>, %g: tensor<2x6x5x5xf32>) {
  // expected-error @+1 {{grad has type 'tensor<2x6x5x5xf32>' but the forward op gives shape [2, 6, 7, 7]}}
  %0 = mdl.conv2d_grad_weight %x, %g stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : tensor<2x4x9x9xf32>, tensor<2x6x5x5xf32> -> tensor<6x2x3x3xf32>
  return
}

// -----

func.func @f(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{result type must be the input type}}
  %0 = mdl.max_pool2d_grad %x, %g kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32> -> tensor<1x3x8x9xf32>
  return
}

// -----

func.func @f(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{grad has type 'tensor<1x3x4x4xf32>' but the forward op gives shape [1, 3, 3, 3]}}
  %0 = mdl.max_pool2d_grad %x, %g kernel = [3, 3] stride = [2, 2] padding = [0, 0] : tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @f(%g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{grad has type 'tensor<1x3x4x4xf32>' but the forward op gives shape [1, 3, 5, 5]}}
  %0 = mdl.avg_pool2d_grad %g kernel = [2, 2] stride = [2, 2] padding = [1, 1] : tensor<1x3x4x4xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @f(%ids: tensor<8xi32>, %g: tensor<8x16xf32>) {
  // expected-error @+1 {{grad has type 'tensor<8x16xf32>' but the forward op gives shape [8, 32]}}
  %0 = mdl.embedding_grad %ids, %g : tensor<8xi32>, tensor<8x16xf32> -> tensor<100x32xf32>
  return
}

// -----

func.func @f(%ids: tensor<8xi32>, %g: tensor<8x32xf32>) {
  // expected-error @+1 {{operand shapes and attributes do not describe a valid forward op}}
  %0 = mdl.embedding_grad %ids, %g : tensor<8xi32>, tensor<8x32xf32> -> tensor<100x32x1xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "erf"}}
  %0 = mdl.gelu_grad %x, %g {approximate = "erf"} : tensor<4xf32>
  return
}

// -----

func.func @f(%z: tensor<4x10xf32>, %l: tensor<4xi64>, %g: tensor<f32>) {
  // expected-error @+1 {{result type must be the logits type}}
  %0 = mdl.cross_entropy_grad %z, %l, %g ignore_index = -100 : tensor<4x10xf32>, tensor<4xi64>, tensor<f32> -> tensor<4x10xf64>
  return
}

// -----

func.func @f(%z: tensor<4x10xf32>, %l: tensor<10xi64>, %g: tensor<f32>) {
  // expected-error @+1 {{labels must have the logits' shape without its last (class) axis}}
  %0 = mdl.cross_entropy_grad %z, %l, %g ignore_index = -100 : tensor<4x10xf32>, tensor<10xi64>, tensor<f32> -> tensor<4x10xf32>
  return
}

// -----

func.func @f(%z: tensor<4x10xf32>, %l: tensor<4xi64>, %g: tensor<1xf32>) {
  // expected-error @+1 {{operand #2 must be 0-d tensor of floating-point values, but got 'tensor<1xf32>'}}
  %0 = mdl.cross_entropy_grad %z, %l, %g ignore_index = -100 : tensor<4x10xf32>, tensor<4xi64>, tensor<1xf32> -> tensor<4x10xf32>
  return
}

// -----

func.func @f(%g: tensor<2x2xf32>) {
  // expected-error @+1 {{grad has type 'tensor<2x2xf32>' but the forward op gives shape [2, 3]}}
  %0 = mdl.slice_grad %g starts = [1, 1] limits = [5, 6] strides = [2, 2] : tensor<2x2xf32> -> tensor<5x6xf32>
  return
}

// -----

func.func @f(%g: tensor<2x3xf32>) {
  // expected-error @+1 {{operand shapes and attributes do not describe a valid forward op}}
  %0 = mdl.slice_grad %g starts = [1, 1] limits = [5, 7] strides = [2, 2] : tensor<2x3xf32> -> tensor<5x6xf32>
  return
}

// -----

// expected-error @+1 {{role must be grad, state, input, output or hyper, got 'weight'}}
mdl.buffer @b : tensor<4xf32> {entry = "", key = "b", phase = "shared", role = "weight"}

// -----

// expected-error @+1 {{phase must be shared, train, eval or infer, got 'test'}}
mdl.buffer @b : tensor<4xf32> {entry = "", key = "b", phase = "test", role = "grad"}

// -----

// expected-error @+1 {{a hyper buffer must be tensor<f64>}}
mdl.buffer @"t:hyper:lr" : tensor<f32> {entry = "t", key = "lr", phase = "train", role = "hyper"}

// -----

func.func @f() {
  // expected-error @+1 {{@missing does not name an mdl.buffer or mdl.param}}
  %0 = mdl.load @missing : tensor<4xf32>
  return
}

// -----

mdl.buffer @b : tensor<4xf32> {entry = "", key = "b", phase = "shared", role = "grad"}
func.func @f() {
  // expected-error @+1 {{type 'tensor<3xf32>' does not match 'tensor<4xf32>' of @b}}
  %0 = mdl.load @b : tensor<3xf32>
  return
}

// -----

mdl.param @w : tensor<4xf32> = zeros()
func.func @f(%v: tensor<4xf64>) {
  // expected-error @+1 {{type 'tensor<4xf64>' does not match 'tensor<4xf32>' of @w}}
  mdl.store %v, @w : tensor<4xf64>
  return
}

// -----

func.func @f(%v: tensor<4xf32>) {
  // expected-error @+1 {{@f does not name an mdl.buffer or mdl.param}}
  mdl.store %v, @f : tensor<4xf32>
  return
}

// -----

func.func @f(%seed: tensor<f64>, %counter: tensor<f64>) {
  // expected-error @+1 {{p must be in [0, 1), got 1}}
  %0 = mdl.dropout_mask %seed, %counter p = 1.000000e+00 id = 0 : tensor<f64>, tensor<f64> -> tensor<4xf32>
  return
}

// -----

func.func @f(%seed: tensor<1xf64>, %counter: tensor<f64>) {
  // expected-error @+1 {{seed and counter must be 0-d tensors}}
  %0 = mdl.dropout_mask %seed, %counter p = 5.000000e-01 id = 0 : tensor<1xf64>, tensor<f64> -> tensor<4xf32>
  return
}

// -----

func.func @f(%seed: tensor<f64>, %counter: tensor<f64>) {
  // expected-error @+1 {{result #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = mdl.dropout_mask %seed, %counter p = 5.000000e-01 id = 0 : tensor<f64>, tensor<f64> -> tensor<4xi32>
  return
}

// -----

func.func @f(%q: tensor<2x4x16x8xf32>) {
  // expected-error @+1 {{'mdl.attention_forward' op a dropout needs the seed and counter operands}}
  %o, %l = mdl.attention_forward %q, %q, %q scale = 1.0 dropout = 0.5 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x16x8xbf16>) {
  // expected-error @+1 {{'mdl.attention_forward' op lse type 'tensor<2x4x16xbf16>' does not match the expected 'tensor<2x4x16xf32>'}}
  %o, %l = mdl.attention_forward %q, %q, %q scale = 1.0 : tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16> -> tensor<2x4x16x8xbf16>, tensor<2x4x16xbf16>
  return
}

// -----

func.func @f(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x20x8xf32>, %m: tensor<2x1x16x16xi1>) {
  // expected-error @+1 {{'mdl.attention_forward' op mask of shape [2, 1, 16, 16] does not broadcast to the scores [b, h, t, s] = [2, 4, 16, 20]}}
  %o, %l = mdl.attention_forward %q, %k, %k mask %m : tensor<2x1x16x16xi1> scale = 1.0 : tensor<2x4x16x8xf32>, tensor<2x4x20x8xf32>, tensor<2x4x20x8xf32> -> tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x4x16x8xf32>, %l: tensor<2x4x16xf32>) {
  // expected-error @+1 {{'mdl.attention_backward' op key_grad type 'tensor<2x4x8x8xf32>' does not match the expected 'tensor<2x4x16x8xf32>'}}
  %dq, %dk, %dv = mdl.attention_backward %q, %q, %q, %q, %q, %l scale = 1.0 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32> -> tensor<2x4x16x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x16x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %w: tensor<4xf32>, %g: tensor<2x8xf32>) {
  // expected-error @+1 {{weight must have shape [8] (the last axis of the input), got [4]}}
  %dx, %dw, %db = mdl.layer_norm_grad %x, %w, %g eps = 1.0e-5 : tensor<2x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %g: tensor<2x8xf32>) {
  // expected-error @+1 {{eps must be positive}}
  %dx, %dw, %db = mdl.layer_norm_grad %x, %w, %g eps = 0.0 : tensor<2x8xf32>, tensor<8xf32>
  return
}
