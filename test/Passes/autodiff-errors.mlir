// --mdl-autodiff: what it rejects, each with its message.
// RUN: modelc-opt %s --mdl-autodiff --split-input-file --verify-diagnostics

mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
// expected-error @+1 {{'mdl.autodiff' names the loss @loss but the function never stores to it}}
func.func @no_store() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  return
}

// -----

mdl.param @w : tensor<3xf32> = zeros()
mdl.buffer @loss : tensor<3xf32> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @not_scalar() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @w : tensor<3xf32>
  // expected-error @+1 {{the loss must be a 0-d float tensor, got 'tensor<3xf32>'}}
  mdl.store %w, @loss : tensor<3xf32>
  return
}

// -----

mdl.param @w : tensor<3xf32> = zeros()
mdl.buffer @loss : tensor<i32> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @not_float() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @w : tensor<3xf32>
  %a = mdl.argmax %w axis = 0 : tensor<3xf32> -> tensor<i64>
  %i = mdl.cast %a : tensor<i64> -> tensor<i32>
  // expected-error @+1 {{the loss must be a 0-d float tensor, got 'tensor<i32>'}}
  mdl.store %i, @loss : tensor<i32>
  return
}

// -----

// expected-error @+1 {{'mdl.autodiff' must be a dictionary with a symbol 'loss' and a float 'scale'}}
func.func @bad_marker() attributes {mdl.autodiff = {loss = "loss"}} {
  return
}

// -----

mdl.param @w : tensor<1x1x4x8xf32> = zeros()
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @attention() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @w : tensor<1x1x4x8xf32>
  // expected-error @+1 {{'mdl.attention' is on the path from the parameters to the loss but has no gradient; run --mdl-decompose before --mdl-autodiff}}
  %o = mdl.attention %w, %w, %w causal scale = 5.000000e-01 : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  %l = mdl.sum %o axes = [0, 1, 2, 3] : tensor<1x1x4x8xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// -----

mdl.param @w : tensor<4xf32> = zeros()
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @dropout() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @w : tensor<4xf32>
  // expected-error @+1 {{'mdl.dropout' is on the path from the parameters to the loss but has no gradient; run --mdl-decompose before --mdl-autodiff}}
  %d = mdl.dropout %w p = 1.000000e-01 : tensor<4xf32>
  %l = mdl.sum %d axes = [0] : tensor<4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// -----

mdl.param @w : tensor<2x3xf32> = zeros()
mdl.buffer @labels : tensor<2xi32> {entry = "t", key = "labels", phase = "train", role = "input"}
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @metric_in_loss() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @w : tensor<2x3xf32>
  %labels = mdl.load @labels : tensor<2xi32>
  // expected-error @+1 {{'mdl.accuracy' is on the path from the parameters to the loss but has no gradient}}
  %a = mdl.accuracy %w, %labels : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  mdl.store %a, @loss : tensor<f32>
  return
}

// -----

mdl.param @w : tensor<3xf32> = zeros()
// expected-error @+1 {{the symbol @"grad:w" is taken, but not by the gradient buffer of parameter @"w"}}
mdl.buffer @"grad:w" : tensor<4xf32> {entry = "", key = "w", phase = "shared", role = "grad"}
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @grad_symbol_taken() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @w : tensor<3xf32>
  %l = mdl.sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// -----

mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
// expected-error @+1 {{a function to differentiate must have a body of one block}}
func.func private @declaration() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}}
