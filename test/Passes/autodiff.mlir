// --mdl-autodiff: how the backward pass is assembled (seed, accumulation,
// tied parameters, gradient buffers, what is not differentiated). The VJPs
// of each op family are in autodiff-{elementwise,unary,reduction,shape,
// matmul,nn}.mlir, the errors in autodiff-errors.mlir.
// RUN: modelc-opt %s --mdl-autodiff --split-input-file | FileCheck %s

// A linear layer and an MSE loss. The gradient buffers follow the parameters
// in parameter order; @unused gets none; the inputs get no gradient (no
// matmul builds dx); the seed is the scale; the bias gradient is the
// broadcast adjoint summed over the batch axis; each parameter's gradient is
// added into its buffer as soon as it is complete (the bias first).

// CHECK-LABEL: module
// CHECK:      mdl.param @unused
// CHECK-NEXT: mdl.buffer @"grad:fc.weight" : tensor<4x3xf32> {entry = "", key = "fc.weight", phase = "shared", role = "grad"}
// CHECK-NEXT: mdl.buffer @"grad:fc.bias" : tensor<4xf32> {entry = "", key = "fc.bias", phase = "shared", role = "grad"}
// CHECK-NOT:  grad:unused
// CHECK-LABEL: func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
// CHECK:      %[[X:.*]] = mdl.load @"t:in:x"
// CHECK:      %[[Y:.*]] = mdl.load @"t:in:y"
// CHECK:      %[[Z:.*]] = mdl.add
// CHECK:      mdl.store %{{.*}}, @"t:out:loss"
// CHECK-NEXT: %[[SEED:.*]] = mdl.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[NORM:.*]] = mdl.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT: %[[SCALE:.*]] = mdl.mul %[[SEED]], %[[NORM]]
// CHECK-NEXT: %[[DIFF:.*]] = mdl.sub %[[Z]], %[[Y]]
// CHECK-NEXT: %[[DZ:.*]] = mdl.mul %[[DIFF]], %[[SCALE]] : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[DZ]] axes = [0] : tensor<2x4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[XT:.*]] = mdl.transpose %[[X]] perm = [1, 0]
// CHECK-NEXT: %[[DWT:.*]] = mdl.matmul %[[XT]], %[[DZ]] : tensor<3x2xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[DW:.*]] = mdl.transpose %[[DWT]] perm = [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[OLDB:.*]] = mdl.load @"grad:fc.bias" : tensor<4xf32>
// CHECK-NEXT: %[[NEWB:.*]] = mdl.add %[[OLDB]], %[[DB]]
// CHECK-NEXT: mdl.store %[[NEWB]], @"grad:fc.bias" : tensor<4xf32>
// CHECK-NEXT: %[[OLDW:.*]] = mdl.load @"grad:fc.weight" : tensor<4x3xf32>
// CHECK-NEXT: %[[NEWW:.*]] = mdl.add %[[OLDW]], %[[DW]]
// CHECK-NEXT: mdl.store %[[NEWW]], @"grad:fc.weight" : tensor<4x3xf32>
// CHECK-NEXT: return
mdl.param @"fc.weight" : tensor<4x3xf32> = kaiming_uniform(3.0)
mdl.param @"fc.bias" : tensor<4xf32> = zeros()
mdl.param @unused : tensor<2xf32> = zeros()
mdl.buffer @"t:in:x" : tensor<2x3xf32> {entry = "t", key = "x", phase = "train", role = "input"}
mdl.buffer @"t:in:y" : tensor<2x4xf32> {entry = "t", key = "y", phase = "train", role = "input"}
mdl.buffer @"t:out:loss" : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @"t.fwd_bwd"() attributes {mdl.autodiff = {loss = @"t:out:loss", scale = 5.000000e-01 : f64}, mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %x = mdl.load @"t:in:x" : tensor<2x3xf32>
  %y = mdl.load @"t:in:y" : tensor<2x4xf32>
  %w = mdl.param_ref @"fc.weight" : tensor<4x3xf32>
  %b = mdl.param_ref @"fc.bias" : tensor<4xf32>
  %u = mdl.param_ref @unused : tensor<2xf32>
  %wt = mdl.transpose %w perm = [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  %h = mdl.matmul %x, %wt : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %z = mdl.add %h, %b : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %l = mdl.mse_loss %z, %y : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<f32>
  mdl.store %l, @"t:out:loss" : tensor<f32>
  return
}

// -----

// Tied parameters: two references of @w and one reference used twice. The
// adjoints of %a's two uses are added, then the two references' gradients
// are added, and @w is updated once.

// CHECK-LABEL: func.func @tied()
// CHECK:      %[[A:.*]] = mdl.param_ref @w
// CHECK-NEXT: %[[B:.*]] = mdl.param_ref @w
// CHECK-NEXT: %[[P:.*]] = mdl.mul %[[A]], %[[B]]
// CHECK:      %[[G:.*]] = mdl.broadcast_to
// CHECK-NEXT: %[[DP:.*]] = mdl.mul %[[G]], %[[A]]
// CHECK-NEXT: %[[DA1:.*]] = mdl.mul %[[G]], %[[P]]
// CHECK-NEXT: %[[DA2:.*]] = mdl.mul %[[DP]], %[[B]]
// CHECK-NEXT: %[[DB:.*]] = mdl.mul %[[DP]], %[[A]]
// CHECK-NEXT: %[[DA:.*]] = mdl.add %[[DA1]], %[[DA2]]
// CHECK-NEXT: %[[DW:.*]] = mdl.add %[[DB]], %[[DA]]
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:w"
// CHECK-NEXT: %[[NEW:.*]] = mdl.add %[[OLD]], %[[DW]]
// CHECK-NEXT: mdl.store %[[NEW]], @"grad:w"
// CHECK-NEXT: return
mdl.param @w : tensor<3xf32> = zeros()
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @tied() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %a = mdl.param_ref @w : tensor<3xf32>
  %b = mdl.param_ref @w : tensor<3xf32>
  %p = mdl.mul %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %q = mdl.mul %p, %a : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = mdl.sum %q axes = [0] : tensor<3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// -----

// A loss that no parameter reaches: nothing is added, no buffer declared,
// the marker is removed.

// CHECK-LABEL: module
// CHECK-NOT:  grad:
// CHECK-LABEL: func.func @constant_loss() {
// CHECK-NEXT: mdl.param_ref @w
// CHECK-NEXT: mdl.load @x
// CHECK-NEXT: mdl.sum
// CHECK-NEXT: mdl.store
// CHECK-NEXT: return
mdl.param @w : tensor<3xf32> = zeros()
mdl.buffer @x : tensor<3xf32> {entry = "t", key = "x", phase = "train", role = "input"}
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @constant_loss() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @w : tensor<3xf32>
  %x = mdl.load @x : tensor<3xf32>
  %l = mdl.sum %x axes = [0] : tensor<3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// -----

// Off the path: a metric without a gradient (accuracy) stored beside the
// loss, integer ids computed from a parameter (argmax cuts the path: only
// the table of the embedding gets a gradient), a dropout mask, and ops
// after the loss store. None is differentiated and none is an error.

// CHECK-LABEL: func.func @off_path()
// CHECK:      %[[MASK:.*]] = mdl.dropout_mask
// CHECK:      mdl.embedding
// CHECK:      mdl.store %{{.*}}, @loss
// CHECK-NEXT: mdl.store %{{.*}}, @acc
// CHECK-NEXT: mdl.add
// CHECK-NEXT: mdl.store %{{.*}}, @late
// CHECK-NEXT: %[[SEED:.*]] = mdl.constant dense<1.000000e+00>
// CHECK-NEXT: mdl.reshape %[[SEED]]
// CHECK-NEXT: %[[G:.*]] = mdl.broadcast_to
// CHECK-NEXT: %[[AGAIN:.*]] = mdl.dropout_mask {{.*}} {mdl.recomputed}
// CHECK-NEXT: %[[DE:.*]] = mdl.mul %[[G]], %[[AGAIN]]
// CHECK-NEXT: %[[DT:.*]] = mdl.embedding_grad %{{.*}}, %[[DE]] : tensor<2xi64>, tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: mdl.load @"grad:table"
// CHECK-NEXT: mdl.add %{{.*}}, %[[DT]]
// CHECK-NEXT: mdl.store %{{.*}}, @"grad:table"
// CHECK-NEXT: return
mdl.param @table : tensor<4x3xf32> = zeros()
mdl.param @scores : tensor<2x4xf32> = zeros()
mdl.buffer @seed : tensor<f64> {entry = "t", key = "seed", phase = "train", role = "hyper"}
mdl.buffer @counter : tensor<f64> {entry = "t", key = "rng_counter", phase = "train", role = "hyper"}
mdl.buffer @labels : tensor<2xi32> {entry = "t", key = "labels", phase = "train", role = "input"}
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
mdl.buffer @acc : tensor<f32> {entry = "t", key = "acc", phase = "train", role = "output"}
mdl.buffer @late : tensor<f32> {entry = "t", key = "late", phase = "train", role = "output"}
func.func @off_path() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %table = mdl.param_ref @table : tensor<4x3xf32>
  %scores = mdl.param_ref @scores : tensor<2x4xf32>
  %labels = mdl.load @labels : tensor<2xi32>
  %seed = mdl.load @seed : tensor<f64>
  %counter = mdl.load @counter : tensor<f64>
  %mask = mdl.dropout_mask %seed, %counter p = 1.000000e-01 id = 0 : tensor<f64>, tensor<f64> -> tensor<2x3xf32>
  %ids = mdl.argmax %scores axis = 1 : tensor<2x4xf32> -> tensor<2xi64>
  %e = mdl.embedding %ids, %table : tensor<2xi64>, tensor<4x3xf32> -> tensor<2x3xf32>
  %d = mdl.mul %e, %mask : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %l = mdl.sum %d axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %acc = mdl.accuracy %scores, %labels : tensor<2x4xf32>, tensor<2xi32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  mdl.store %acc, @acc : tensor<f32>
  %late = mdl.add %l, %acc : tensor<f32>, tensor<f32> -> tensor<f32>
  mdl.store %late, @late : tensor<f32>
  return
}

// -----

// Two functions sharing a parameter share its gradient buffer, which is
// declared once; a function without the marker is left alone.

// CHECK-LABEL: module
// CHECK-COUNT-1: mdl.buffer @"grad:w"
// CHECK-NOT:  mdl.buffer @"grad:w"
// CHECK-LABEL: func.func @first()
// CHECK:      mdl.store %{{.*}}, @"grad:w"
// CHECK-LABEL: func.func @second()
// CHECK:      mdl.store %{{.*}}, @"grad:w"
// CHECK-LABEL: func.func @eval()
// CHECK-NEXT: mdl.param_ref
// CHECK-NEXT: mdl.sum
// CHECK-NEXT: mdl.store
// CHECK-NEXT: return
mdl.param @w : tensor<3xf32> = zeros()
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @first() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @w : tensor<3xf32>
  %l = mdl.sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}
func.func @second() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @w : tensor<3xf32>
  %l = mdl.mean %w axes = [0] : tensor<3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}
func.func @eval() {
  %w = mdl.param_ref @w : tensor<3xf32>
  %l = mdl.sum %w axes = [0] : tensor<3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// -----

// The loss may be any float type; the seed has its type. A loss stored
// twice is the value stored last.

// CHECK-LABEL: func.func @f64_loss()
// CHECK:      %[[W:.*]] = mdl.param_ref @w : tensor<f64>
// CHECK:      %[[SECOND:.*]] = mdl.mul %[[W]], %[[W]]
// CHECK:      mdl.store %[[SECOND]], @loss
// CHECK-NEXT: %[[SEED:.*]] = mdl.constant dense<2.000000e+00> : tensor<f64>
// CHECK-NEXT: mdl.mul %[[SEED]], %[[W]]
// CHECK-NEXT: mdl.mul %[[SEED]], %[[W]]
// CHECK-NEXT: mdl.add
// CHECK-NEXT: mdl.load @"grad:w" : tensor<f64>
mdl.param @w : tensor<f64> = zeros()
mdl.buffer @loss : tensor<f64> {entry = "t", key = "loss", phase = "train", role = "output"}
func.func @f64_loss() attributes {mdl.autodiff = {loss = @loss, scale = 2.000000e+00 : f64}} {
  %w = mdl.param_ref @w : tensor<f64>
  mdl.store %w, @loss : tensor<f64>
  %sq = mdl.mul %w, %w : tensor<f64>, tensor<f64> -> tensor<f64>
  mdl.store %sq, @loss : tensor<f64>
  return
}

// -----

// f16's dynamic loss scaling: `loss_scale` names an f64 scalar (the hyper
// the runtime writes); the seed is scale * loss_scale in the loss's type,
// torch.amp.GradScaler's scale(loss) of the loss already divided by
// `accumulate`.

// CHECK-LABEL: func.func @scaled()
// CHECK:      mdl.store %[[SQ:.*]], @loss
// CHECK-NEXT: %[[SEED:.*]] = mdl.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT: %[[S64:.*]] = mdl.load @"t:hyper:loss_scale" : tensor<f64>
// CHECK-NEXT: %[[S:.*]] = mdl.cast %[[S64]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: %[[SCALED:.*]] = mdl.mul %[[SEED]], %[[S]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT: mdl.mul %[[SCALED]], %{{.*}}
mdl.param @w : tensor<f32> = zeros()
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
mdl.buffer @"t:hyper:loss_scale" : tensor<f64> {entry = "t", key = "loss_scale", phase = "train", role = "hyper"}
func.func @scaled() attributes {mdl.autodiff = {loss = @loss, loss_scale = @"t:hyper:loss_scale", scale = 2.500000e-01 : f64}} {
  %w = mdl.param_ref @w : tensor<f32>
  %sq = mdl.mul %w, %w : tensor<f32>, tensor<f32> -> tensor<f32>
  mdl.store %sq, @loss : tensor<f32>
  return
}

// -----

// A dropout mask the backward needs is recomputed there (a pure hash of its
// operands: the same values), marked so that CSE keeps the copy, instead of
// being kept alive from the forward pass to the backward.

// CHECK-LABEL: func.func @dropout()
// CHECK:      %[[MASK:.*]] = mdl.dropout_mask %[[SEED:.*]], %[[COUNTER:.*]] p = 1.000000e-01 id = 0 : tensor<f64>, tensor<f64> -> tensor<4xf32>
// CHECK-NOT:  mdl.recomputed
// CHECK:      mdl.store %{{.*}}, @loss
// CHECK:      %[[AGAIN:.*]] = mdl.dropout_mask %[[SEED]], %[[COUNTER]] p = 1.000000e-01 id = 0 {mdl.recomputed} : tensor<f64>, tensor<f64> -> tensor<4xf32>
// CHECK-NEXT: mdl.mul %{{.*}}, %[[AGAIN]]
// CHECK-NOT:  %[[MASK]]
// CHECK:      return
mdl.param @w : tensor<4xf32> = zeros()
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
mdl.buffer @seed : tensor<f64> {entry = "t", key = "seed", phase = "train", role = "hyper"}
mdl.buffer @counter : tensor<f64> {entry = "t", key = "rng_counter", phase = "train", role = "hyper"}
func.func @dropout() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %seed = mdl.load @seed : tensor<f64>
  %counter = mdl.load @counter : tensor<f64>
  %w = mdl.param_ref @w : tensor<4xf32>
  %mask = mdl.dropout_mask %seed, %counter p = 1.000000e-01 id = 0 : tensor<f64>, tensor<f64> -> tensor<4xf32>
  %d = mdl.mul %w, %mask : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = mdl.sum %d axes = [0] : tensor<4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}
