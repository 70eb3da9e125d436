// --mdl-build-entry-functions declares each entry's buffers and builds its
// program functions; the entry ops stay as declarations.
// RUN: modelc-opt %s --split-input-file --mdl-build-entry-functions --verify-diagnostics | FileCheck %s

// A train entry with a metric, eval data and accumulate = 4.

// CHECK-LABEL: mdl.train @fashion
// CHECK: mdl.yield
// CHECK: mdl.buffer @"fashion:in:image" : tensor<8x4x4xui8> {entry = "fashion", key = "image", phase = "train", role = "input"}
// CHECK-NEXT: mdl.buffer @"fashion:in:label" : tensor<8xui8> {entry = "fashion", key = "label", phase = "train", role = "input"}
// CHECK-NEXT: mdl.buffer @"fashion:out:loss" : tensor<f32> {entry = "fashion", key = "loss", phase = "train", role = "output"}
// CHECK-NEXT: mdl.buffer @"fashion:out:accuracy" : tensor<f32> {entry = "fashion", key = "accuracy", phase = "train", role = "output"}
// CHECK-NEXT: mdl.buffer @"fashion:out:lr" : tensor<f32> {entry = "fashion", key = "lr", phase = "train", role = "output"}
// CHECK-NEXT: mdl.buffer @"fashion:out:grad_norm" : tensor<f32> {entry = "fashion", key = "grad_norm", phase = "train", role = "output"}
// CHECK-NEXT: mdl.buffer @"fashion:hyper:step" : tensor<f64> {entry = "fashion", key = "step", phase = "train", role = "hyper"}
// CHECK-NEXT: mdl.buffer @"fashion:hyper:total_steps" : tensor<f64> {entry = "fashion", key = "total_steps", phase = "train", role = "hyper"}
// CHECK-NEXT: mdl.buffer @"fashion:hyper:lr" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:weight_decay" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:momentum" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:beta1" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:beta2" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:eps" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:alpha" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:lr_decay" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:initial_accumulator_value" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:rho" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:grad_clip" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:warmup" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:min_lr" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:every" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:gamma" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:seed" : tensor<f64>
// CHECK-NEXT: mdl.buffer @"fashion:hyper:rng_counter" : tensor<f64> {entry = "fashion", key = "rng_counter", phase = "train", role = "hyper"}
// CHECK-NEXT: mdl.buffer @"fashion:hyper:optimizer_step" : tensor<f64> {entry = "fashion", key = "optimizer_step", phase = "train", role = "hyper"}
// CHECK-NEXT: mdl.buffer @"fashion:hyper:loss_scale" : tensor<f64> {entry = "fashion", key = "loss_scale", phase = "train", role = "hyper"}
// CHECK-NEXT: mdl.buffer @"fashion:eval_in:image" : tensor<8x4x4xui8> {entry = "fashion", key = "image", phase = "eval", role = "input"}
// CHECK-NEXT: mdl.buffer @"fashion:eval_in:label" : tensor<8xui8> {entry = "fashion", key = "label", phase = "eval", role = "input"}
// CHECK-NEXT: mdl.buffer @"fashion:eval_out:loss" : tensor<f32> {entry = "fashion", key = "loss", phase = "eval", role = "output"}
// CHECK-NEXT: mdl.buffer @"fashion:eval_out:accuracy" : tensor<f32> {entry = "fashion", key = "accuracy", phase = "eval", role = "output"}

// CHECK-LABEL: func.func @fashion.fwd_bwd()
// CHECK-SAME: attributes {mdl.autodiff = {loss = @"fashion:out:loss", scale = 2.500000e-01 : f64}, mdl.entry = "fashion", mdl.function = "fwd_bwd"}
// CHECK-NEXT: %[[IMAGE:.*]] = mdl.load @"fashion:in:image" : tensor<8x4x4xui8>
// CHECK-NEXT: %[[LABEL:.*]] = mdl.load @"fashion:in:label" : tensor<8xui8>
// CHECK-NEXT: %[[F:.*]] = mdl.cast %[[IMAGE]]
// CHECK-NEXT: %[[X:.*]] = mdl.reshape %[[F]]
// CHECK-NEXT: %[[W:.*]] = mdl.param_ref @w
// CHECK-NEXT: %[[Y:.*]] = mdl.matmul %[[X]], %[[W]]
// CHECK-NEXT: %[[L:.*]] = mdl.cast %[[LABEL]]
// CHECK-NEXT: %[[LOSS:.*]] = mdl.cross_entropy %[[Y]], %[[L]]
// CHECK-NEXT: %[[ACC:.*]] = mdl.accuracy %[[Y]], %[[LABEL]]
// CHECK-NEXT: mdl.store %[[LOSS]], @"fashion:out:loss" : tensor<f32>
// CHECK-NEXT: mdl.store %[[ACC]], @"fashion:out:accuracy" : tensor<f32>
// CHECK-NEXT: return

// CHECK-LABEL: func.func @fashion.eval()
// CHECK-SAME: attributes {mdl.entry = "fashion", mdl.function = "eval"}
// CHECK-NEXT: %[[IMAGE:.*]] = mdl.load @"fashion:eval_in:image" : tensor<8x4x4xui8>
// CHECK-NEXT: %[[LABEL:.*]] = mdl.load @"fashion:eval_in:label" : tensor<8xui8>
// CHECK: %[[LOSS:.*]] = mdl.cross_entropy
// CHECK-NEXT: %[[ACC:.*]] = mdl.accuracy %{{.*}}, %[[LABEL]]
// CHECK-NEXT: mdl.store %[[LOSS]], @"fashion:eval_out:loss" : tensor<f32>
// CHECK-NEXT: mdl.store %[[ACC]], @"fashion:eval_out:accuracy" : tensor<f32>
// CHECK-NEXT: return
mdl.param @w : tensor<16x10xf32> = zeros()
mdl.data @train_set {
  mdl.field "image" : tensor<4x4xui8> = idx "train-images.gz"
  mdl.field "label" : tensor<ui8> = idx "train-labels.gz"
}
mdl.data @test_set {
  mdl.field "image" : tensor<4x4xui8> = idx "test-images.gz"
  mdl.field "label" : tensor<ui8> = idx "test-labels.gz"
}
mdl.train @fashion data @train_set outputs ["loss", "accuracy"] settings {accumulate = 4 : i64, batch = 8 : i64, eval = {data = "test_set", every = 0 : i64, steps = 0 : i64}} {
^bb0(%image: tensor<8x4x4xui8>, %label: tensor<8xui8>):
  %f = mdl.cast %image : tensor<8x4x4xui8> -> tensor<8x4x4xf32>
  %x = mdl.reshape %f : tensor<8x4x4xf32> -> tensor<8x16xf32>
  %w = mdl.param_ref @w : tensor<16x10xf32>
  %y = mdl.matmul %x, %w : tensor<8x16xf32>, tensor<16x10xf32> -> tensor<8x10xf32>
  %l = mdl.cast %label : tensor<8xui8> -> tensor<8xi32>
  %loss = mdl.cross_entropy %y, %l ignore_index = -100 : tensor<8x10xf32>, tensor<8xi32> -> tensor<f32>
  %acc = mdl.accuracy %y, %label : tensor<8x10xf32>, tensor<8xui8> -> tensor<f32>
  mdl.yield %loss, %acc : tensor<f32>, tensor<f32>
}

// -----

// Without eval (and without accumulate: scale 1) there is no eval function
// and no eval buffer.

// CHECK-NOT: eval
// CHECK-LABEL: func.func @t.fwd_bwd()
// CHECK-SAME: mdl.autodiff = {loss = @"t:out:loss", scale = 1.000000e+00 : f64}
// CHECK-NOT: eval
mdl.data @d {
  mdl.field "x" : tensor<f32> = npy "x.npy"
}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2xf32>):
  %s = mdl.sum %x axes = [0] : tensor<2xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}

// -----

// precision f16: update also stores `found_inf`, and the backward's seed is
// multiplied by the loss_scale hyper (dynamic loss scaling).

// CHECK-LABEL: mdl.train @half
// CHECK: mdl.buffer @"half:out:grad_norm"
// CHECK-NEXT: mdl.buffer @"half:out:found_inf" : tensor<f32> {entry = "half", key = "found_inf", phase = "train", role = "output"}
// CHECK: mdl.buffer @"half:hyper:loss_scale" : tensor<f64>
// CHECK-LABEL: func.func @half.fwd_bwd()
// CHECK-SAME: mdl.autodiff = {loss = @"half:out:loss", loss_scale = @"half:hyper:loss_scale", scale = 1.000000e+00 : f64}
mdl.data @d {
  mdl.field "x" : tensor<f32> = npy "x.npy"
}
mdl.train @half data @d outputs ["loss"] settings {batch = 2 : i64, precision = "f16"} {
^bb0(%x: tensor<2xf32>):
  %s = mdl.sum %x axes = [0] : tensor<2xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}

// -----

// An infer entry with two outputs; output types come from what it yields,
// and an input may be yielded as it is.

// CHECK-LABEL: mdl.infer @classify
// CHECK: mdl.yield
// CHECK-NEXT: }
// CHECK-NEXT: mdl.buffer @"classify:in:image" : tensor<4x3xf32> {entry = "classify", key = "image", phase = "infer", role = "input"}
// CHECK-NEXT: mdl.buffer @"classify:out:probs" : tensor<4x3xf32> {entry = "classify", key = "probs", phase = "infer", role = "output"}
// CHECK-NEXT: mdl.buffer @"classify:out:label" : tensor<4xi64> {entry = "classify", key = "label", phase = "infer", role = "output"}
// CHECK-NEXT: mdl.buffer @"classify:out:echo" : tensor<4x3xf32> {entry = "classify", key = "echo", phase = "infer", role = "output"}
// CHECK-LABEL: func.func @classify.infer()
// CHECK-SAME: attributes {mdl.entry = "classify", mdl.function = "infer"}
// CHECK-NEXT: %[[IMAGE:.*]] = mdl.load @"classify:in:image" : tensor<4x3xf32>
// CHECK-NEXT: %[[P:.*]] = mdl.softmax %[[IMAGE]]
// CHECK-NEXT: %[[L:.*]] = mdl.argmax %[[P]]
// CHECK-NEXT: mdl.store %[[P]], @"classify:out:probs" : tensor<4x3xf32>
// CHECK-NEXT: mdl.store %[[L]], @"classify:out:label" : tensor<4xi64>
// CHECK-NEXT: mdl.store %[[IMAGE]], @"classify:out:echo" : tensor<4x3xf32>
// CHECK-NEXT: return
// CHECK-NOT: mdl.autodiff
mdl.infer @classify inputs ["image"] outputs ["probs", "label", "echo"] {
^bb0(%image: tensor<4x3xf32>):
  %p = mdl.softmax %image axis = 1 : tensor<4x3xf32>
  %l = mdl.argmax %p axis = 1 : tensor<4x3xf32> -> tensor<4xi64>
  mdl.yield %p, %l, %image : tensor<4x3xf32>, tensor<4xi64>, tensor<4x3xf32>
}

// -----

mdl.data @a {
  mdl.field "x" : tensor<3xf32> = npy "a.npy"
}
mdl.data @b {
  mdl.field "x" : tensor<4xf32> = npy "b.npy"
}
// expected-error @below {{eval data @b has field 'x' of type 'tensor<4xf32>' where the training data @a has field 'x' of type 'tensor<3xf32>'}}
mdl.train @t data @a outputs ["loss"] settings {batch = 2 : i64, eval = {data = "b", every = 0 : i64, steps = 0 : i64}} {
^bb0(%x: tensor<2x3xf32>):
  %s = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}

// -----

mdl.data @a {
  mdl.field "x" : tensor<3xf32> = npy "a.npy"
}
mdl.data @b {
  mdl.field "y" : tensor<3xf32> = npy "b.npy"
}
// expected-error @below {{eval data @b has field 'y' of type 'tensor<3xf32>' where the training data @a has field 'x' of type 'tensor<3xf32>'}}
mdl.train @t data @a outputs ["loss"] settings {batch = 2 : i64, eval = {data = "b", every = 0 : i64, steps = 0 : i64}} {
^bb0(%x: tensor<2x3xf32>):
  %s = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}

// -----

mdl.data @a {
  mdl.field "x" : tensor<3xf32> = npy "a.npy"
}
mdl.data @b {
  mdl.field "x" : tensor<3xf32> = npy "b.npy"
  mdl.field "z" : tensor<3xf32> = npy "b.npy"
}
// expected-error @below {{eval data @b has 2 fields but the training data @a has 1}}
mdl.train @t data @a outputs ["loss"] settings {batch = 2 : i64, eval = {data = "b", every = 0 : i64, steps = 0 : i64}} {
^bb0(%x: tensor<2x3xf32>):
  %s = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}

// -----

mdl.data @a {
  mdl.field "x" : tensor<3xf32> = npy "a.npy"
}
// expected-error @below {{metric name 'lr' is reserved for the optimizer's output}}
mdl.train @t data @a outputs ["loss", "lr"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>):
  %s = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %s, %s : tensor<f32>, tensor<f32>
}

// -----

// A parameter whose dotted name is a function's symbol clashes with it.
// expected-error @below {{cannot declare @"t.fwd_bwd" for entry @t: the symbol already exists}}
mdl.param @t.fwd_bwd : tensor<f32> = zeros()
mdl.data @a {
  mdl.field "x" : tensor<3xf32> = npy "a.npy"
}
mdl.train @t data @a outputs ["loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x3xf32>):
  %s = mdl.sum %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}
