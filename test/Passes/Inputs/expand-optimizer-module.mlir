// The input of the expand-optimizer tests: a train entry @t after
// --mdl-build-entry-functions and --mdl-autodiff, with two parameters whose
// gradients @t.fwd_bwd accumulates (a matrix and a scalar) and one whose
// gradient buffer it does not touch. The RUN lines replace SETTINGS.
mdl.param @w : tensor<4x3xf32> = zeros()
mdl.param @frozen : tensor<2xf32> = zeros()
mdl.param @s : tensor<f32> = ones()
mdl.data @d {
  mdl.field "x" : tensor<4xf32> = npy "x.npy"
}
mdl.train @t data @d outputs ["loss"] settings SETTINGS {
^bb0(%x: tensor<2x4xf32>):
  %w = mdl.param_ref @w : tensor<4x3xf32>
  %y = mdl.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %l = mdl.mean %y axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}
mdl.buffer @"t:in:x" : tensor<2x4xf32> {entry = "t", key = "x", phase = "train", role = "input"}
mdl.buffer @"t:out:loss" : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
mdl.buffer @"t:out:lr" : tensor<f32> {entry = "t", key = "lr", phase = "train", role = "output"}
mdl.buffer @"t:out:grad_norm" : tensor<f32> {entry = "t", key = "grad_norm", phase = "train", role = "output"}
mdl.buffer @"t:out:found_inf" : tensor<f32> {entry = "t", key = "found_inf", phase = "train", role = "output"}
mdl.buffer @"t:hyper:step" : tensor<f64> {entry = "t", key = "step", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:total_steps" : tensor<f64> {entry = "t", key = "total_steps", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:lr" : tensor<f64> {entry = "t", key = "lr", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:weight_decay" : tensor<f64> {entry = "t", key = "weight_decay", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:momentum" : tensor<f64> {entry = "t", key = "momentum", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:beta1" : tensor<f64> {entry = "t", key = "beta1", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:beta2" : tensor<f64> {entry = "t", key = "beta2", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:eps" : tensor<f64> {entry = "t", key = "eps", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:grad_clip" : tensor<f64> {entry = "t", key = "grad_clip", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:warmup" : tensor<f64> {entry = "t", key = "warmup", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:min_lr" : tensor<f64> {entry = "t", key = "min_lr", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:every" : tensor<f64> {entry = "t", key = "every", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:gamma" : tensor<f64> {entry = "t", key = "gamma", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:seed" : tensor<f64> {entry = "t", key = "seed", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:rng_counter" : tensor<f64> {entry = "t", key = "rng_counter", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:optimizer_step" : tensor<f64> {entry = "t", key = "optimizer_step", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:loss_scale" : tensor<f64> {entry = "t", key = "loss_scale", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:alpha" : tensor<f64> {entry = "t", key = "alpha", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:lr_decay" : tensor<f64> {entry = "t", key = "lr_decay", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:initial_accumulator_value" : tensor<f64> {entry = "t", key = "initial_accumulator_value", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:rho" : tensor<f64> {entry = "t", key = "rho", phase = "train", role = "hyper"}
mdl.buffer @"grad:w" : tensor<4x3xf32> {entry = "", key = "w", phase = "shared", role = "grad"}
mdl.buffer @"grad:frozen" : tensor<2xf32> {entry = "", key = "frozen", phase = "shared", role = "grad"}
mdl.buffer @"grad:s" : tensor<f32> {entry = "", key = "s", phase = "shared", role = "grad"}
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %gw = mdl.load @"grad:w" : tensor<4x3xf32>
  %gs = mdl.load @"grad:s" : tensor<f32>
  %one = mdl.constant dense<1.0> : tensor<f32>
  %loss = mdl.constant dense<0.5> : tensor<f32>
  %gw2 = mdl.add %gw, %one : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %gs2 = mdl.add %gs, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  mdl.store %loss, @"t:out:loss" : tensor<f32>
  mdl.store %gw2, @"grad:w" : tensor<4x3xf32>
  mdl.store %gs2, @"grad:s" : tensor<f32>
  return
}
