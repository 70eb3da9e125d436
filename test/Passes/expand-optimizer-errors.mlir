// --mdl-expand-optimizer needs the functions and buffers of the earlier
// passes and settings it knows.
// RUN: modelc-opt %s --split-input-file --mdl-expand-optimizer --verify-diagnostics

mdl.data @d {
  mdl.field "x" : tensor<f32> = npy "x.npy"
}
// expected-error @below {{no fwd_bwd function for @t; run --mdl-build-entry-functions first}}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64, optimizer = {kind = "sgd"}} {
^bb0(%x: tensor<2xf32>):
  %s = mdl.sum %x axes = [0] : tensor<2xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<f32> = npy "x.npy"
}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64, optimizer = {kind = "sgd"}} {
^bb0(%x: tensor<2xf32>):
  %s = mdl.sum %x axes = [0] : tensor<2xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}
mdl.buffer @"t:out:loss" : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
// expected-error @below {{has no gradients yet; run --mdl-autodiff first}}
func.func @t.fwd_bwd() attributes {mdl.autodiff = {loss = @"t:out:loss", scale = 1.0 : f64}, mdl.entry = "t", mdl.function = "fwd_bwd"} {
  return
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<f32> = npy "x.npy"
}
// expected-error @below {{unknown optimizer 'lamb'}}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64, optimizer = {kind = "lamb"}} {
^bb0(%x: tensor<2xf32>):
  %s = mdl.sum %x axes = [0] : tensor<2xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<f32> = npy "x.npy"
}
// expected-error @below {{unknown schedule 'cyclic'}}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64, optimizer = {kind = "adam"}, schedule = {kind = "cyclic"}} {
^bb0(%x: tensor<2xf32>):
  %s = mdl.sum %x axes = [0] : tensor<2xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}

// -----

mdl.data @d {
  mdl.field "x" : tensor<f32> = npy "x.npy"
}
// expected-error @below {{@"t:out:lr" is not declared}}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64, optimizer = {kind = "adam"}} {
^bb0(%x: tensor<2xf32>):
  %s = mdl.sum %x axes = [0] : tensor<2xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  return
}
