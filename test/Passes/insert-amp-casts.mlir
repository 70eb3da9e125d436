// RUN: modelc-opt %s --mdl-insert-amp-casts | FileCheck %s
// RUN: modelc-opt %s --mdl-insert-amp-casts --mdl-autodiff | FileCheck %s --check-prefix=GRAD

// --mdl-insert-amp-casts: torch.autocast's casts in the fwd_bwd and eval
// functions of train entries whose precision is bf16 or f16
// (docs/passes/amp.md). Parameters and buffers keep their f32 types.
// CHECK: mdl.param @w : tensor<8x4xf32>
// CHECK: mdl.buffer @"t:out:h" : tensor<2x8xf32>
mdl.param @w : tensor<8x4xf32> = normal(0.0, 1.0)
mdl.param @b : tensor<8xf32> = zeros()
mdl.param @k : tensor<2x3x3x3xf32> = normal(0.0, 1.0)
mdl.param @kb : tensor<2xf32> = zeros()
mdl.param @v : tensor<4x4xf64> = normal(0.0, 1.0)
mdl.data @d {
  mdl.field "x" : tensor<4xf32> = npy "x.npy"
}
mdl.data @images {
  mdl.field "x" : tensor<3x5x5xf32> = npy "x.npy"
}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64, precision = "bf16"} {
^bb0(%x: tensor<2x4xf32>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}
mdl.train @half data @images outputs ["loss"] settings {batch = 2 : i64, precision = "f16"} {
^bb0(%x: tensor<2x3x5x5xf32>):
  %l = mdl.sum %x axes = [0, 1, 2, 3] : tensor<2x3x5x5xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}
mdl.train @full data @d outputs ["loss"] settings {batch = 2 : i64, precision = "f32"} {
^bb0(%x: tensor<2x4xf32>):
  %l = mdl.sum %x axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}
mdl.buffer @"t:in:x" : tensor<2x4xf32> {entry = "t", key = "x", phase = "train", role = "input"}
mdl.buffer @"t:out:loss" : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}
mdl.buffer @"t:out:h" : tensor<2x8xf32> {entry = "t", key = "h", phase = "train", role = "output"}
mdl.buffer @"t:eval_out:loss" : tensor<f32> {entry = "t", key = "loss", phase = "eval", role = "output"}
mdl.buffer @"half:in:x" : tensor<2x3x5x5xf32> {entry = "half", key = "x", phase = "train", role = "input"}
mdl.buffer @"half:out:loss" : tensor<f32> {entry = "half", key = "loss", phase = "train", role = "output"}
mdl.buffer @"full:in:x" : tensor<2x4xf32> {entry = "full", key = "x", phase = "train", role = "input"}
mdl.buffer @"full:out:loss" : tensor<f32> {entry = "full", key = "loss", phase = "train", role = "output"}

// A linear layer: the matmul takes bf16 operands (the weight cast from its
// f32 master) and gives bf16; its bias add is part of the layer (F.linear),
// so the bias is cast too; relu follows its input. A Python-scalar-like 0-d
// constant takes part weakly: the multiplication is computed in f32 with the
// unrounded 0.5 and rounded once to bf16. Softmax and sum run in f32; an add
// of f32 and bf16 tensors promotes to f32. Stored values are cast to their
// buffer's type.
// CHECK-LABEL: func.func @t.fwd_bwd
// CHECK: %[[X:.*]] = mdl.load @"t:in:x" : tensor<2x4xf32>
// CHECK: %[[W:.*]] = mdl.param_ref @w : tensor<8x4xf32>
// CHECK: %[[B:.*]] = mdl.param_ref @b : tensor<8xf32>
// The transposed weight is cast before it is transposed (the GEMM reads
// the 16-bit weight transposed; the f32 transpose is left unused).
// CHECK: %[[WT:.*]] = mdl.transpose %[[W]]
// CHECK: %[[XL:.*]] = mdl.cast %[[X]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK: %[[WC:.*]] = mdl.cast %[[W]] : tensor<8x4xf32> -> tensor<8x4xbf16>
// CHECK: %[[WL:.*]] = mdl.transpose %[[WC]] perm = [1, 0] : tensor<8x4xbf16> -> tensor<4x8xbf16>
// CHECK: %[[Y:.*]] = mdl.matmul %[[XL]], %[[WL]] : tensor<2x4xbf16>, tensor<4x8xbf16> -> tensor<2x8xbf16>
// CHECK: %[[BL:.*]] = mdl.cast %[[B]] : tensor<8xf32> -> tensor<8xbf16>
// CHECK: %[[Z:.*]] = mdl.add %[[Y]], %[[BL]] : tensor<2x8xbf16>, tensor<8xbf16> -> tensor<2x8xbf16>
// CHECK: %[[R:.*]] = mdl.relu %[[Z]] : tensor<2x8xbf16>
// CHECK: %[[C:.*]] = mdl.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[RW:.*]] = mdl.cast %[[R]] : tensor<2x8xbf16> -> tensor<2x8xf32>
// CHECK: %[[HW:.*]] = mdl.mul %[[RW]], %[[C]] : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
// CHECK: %[[H:.*]] = mdl.cast %[[HW]] : tensor<2x8xf32> -> tensor<2x8xbf16>
// CHECK: %[[HS:.*]] = mdl.cast %[[H]] : tensor<2x8xbf16> -> tensor<2x8xf32>
// CHECK: %[[S:.*]] = mdl.softmax %[[HS]] axis = 1 : tensor<2x8xf32>
// CHECK: %[[HE:.*]] = mdl.cast %[[H]] : tensor<2x8xbf16> -> tensor<2x8xf32>
// CHECK: %[[E:.*]] = mdl.add %[[S]], %[[HE]] : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK: %[[L:.*]] = mdl.sum %[[E]] axes = [0, 1] : tensor<2x8xf32> -> tensor<f32>
// CHECK: mdl.store %[[L]], @"t:out:loss" : tensor<f32>
// CHECK: %[[RS:.*]] = mdl.cast %[[R]] : tensor<2x8xbf16> -> tensor<2x8xf32>
// CHECK: mdl.store %[[RS]], @"t:out:h" : tensor<2x8xf32>
func.func @"t.fwd_bwd"() attributes {mdl.autodiff = {loss = @"t:out:loss", scale = 1.000000e+00 : f64}, mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %x = mdl.load @"t:in:x" : tensor<2x4xf32>
  %w = mdl.param_ref @w : tensor<8x4xf32>
  %b = mdl.param_ref @b : tensor<8xf32>
  %wt = mdl.transpose %w perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %y = mdl.matmul %x, %wt : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  %z = mdl.add %y, %b : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %r = mdl.relu %z : tensor<2x8xf32>
  %c = mdl.constant dense<5.000000e-01> : tensor<f32>
  %h = mdl.mul %r, %c : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %s = mdl.softmax %h axis = 1 : tensor<2x8xf32>
  %e = mdl.add %s, %h : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %l = mdl.sum %e axes = [0, 1] : tensor<2x8xf32> -> tensor<f32>
  mdl.store %l, @"t:out:loss" : tensor<f32>
  mdl.store %r, @"t:out:h" : tensor<2x8xf32>
  return
}

// The gradients flow back through the casts: the weight's gradient comes
// out of the bf16 matmul's and is cast back to f32 for its master.
// GRAD-LABEL: func.func @t.fwd_bwd
// (Transposed back first: the weight was cast, then transposed.)
// GRAD: mdl.matmul {{.*}} : tensor<4x2xbf16>, tensor<2x8xbf16> -> tensor<4x8xbf16>
// GRAD: mdl.transpose %{{.*}} perm = [1, 0] : tensor<4x8xbf16> -> tensor<8x4xbf16>
// GRAD: mdl.cast %{{.*}} : tensor<8x4xbf16> -> tensor<8x4xf32>
// GRAD: mdl.store %{{.*}}, @"grad:w" : tensor<8x4xf32>

// eval is rewritten as fwd_bwd is (torch.autocast around the eval loop).
// Attention (scaled_dot_product_attention, on the lower-precision list)
// takes 16-bit query, key and value and gives a 16-bit result; its
// log-sum-exp stays f32.
// CHECK-LABEL: func.func @t.eval
// CHECK: %[[X:.*]] = mdl.load @"t:in:x" : tensor<2x4xf32>
// CHECK: %[[Y:.*]] = mdl.matmul %{{.*}} : tensor<2x4xbf16>, tensor<4x8xbf16> -> tensor<2x8xbf16>
// CHECK: %[[X4:.*]] = mdl.reshape %[[X]] : tensor<2x4xf32> -> tensor<1x1x2x4xf32>
// CHECK: %[[Y4:.*]] = mdl.reshape %[[Y]] : tensor<2x8xbf16> -> tensor<1x1x2x8xbf16>
// CHECK: %[[QH:.*]] = mdl.cast %[[X4]] : tensor<1x1x2x4xf32> -> tensor<1x1x2x4xbf16>
// CHECK: %[[KH:.*]] = mdl.cast %[[X4]] : tensor<1x1x2x4xf32> -> tensor<1x1x2x4xbf16>
// CHECK: %[[A:.*]], %[[L:.*]] = mdl.attention_forward %[[QH]], %[[KH]], %[[Y4]] scale = 1.000000e+00 : tensor<1x1x2x4xbf16>, tensor<1x1x2x4xbf16>, tensor<1x1x2x8xbf16> -> tensor<1x1x2x8xbf16>, tensor<1x1x2xf32>
// CHECK: %[[AF:.*]] = mdl.cast %[[A]] : tensor<1x1x2x8xbf16> -> tensor<1x1x2x8xf32>
// CHECK: mdl.sum %[[AF]] {{.*}} : tensor<1x1x2x8xf32> -> tensor<f32>
func.func @"t.eval"() attributes {mdl.entry = "t", mdl.function = "eval"} {
  %x = mdl.load @"t:in:x" : tensor<2x4xf32>
  %w = mdl.param_ref @w : tensor<8x4xf32>
  %wt = mdl.transpose %w perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %y0 = mdl.matmul %x, %wt : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  %x4 = mdl.reshape %x : tensor<2x4xf32> -> tensor<1x1x2x4xf32>
  %y4 = mdl.reshape %y0 : tensor<2x8xf32> -> tensor<1x1x2x8xf32>
  %a, %lse = mdl.attention_forward %x4, %x4, %y4 scale = 1.0 : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x8xf32> -> tensor<1x1x2x8xf32>, tensor<1x1x2xf32>
  %l = mdl.sum %a axes = [0, 1, 2, 3] : tensor<1x1x2x8xf32> -> tensor<f32>
  mdl.store %l, @"t:eval_out:loss" : tensor<f32>
  return
}

// f16: a convolution takes its input, weight and bias in f16; an f64
// matmul is left alone (torch.autocast does not cast f64).
// CHECK-LABEL: func.func @half.fwd_bwd
// CHECK: %[[XH:.*]] = mdl.cast %{{.*}} : tensor<2x3x5x5xf32> -> tensor<2x3x5x5xf16>
// CHECK: %[[KH:.*]] = mdl.cast %{{.*}} : tensor<2x3x3x3xf32> -> tensor<2x3x3x3xf16>
// CHECK: %[[BH:.*]] = mdl.cast %{{.*}} : tensor<2xf32> -> tensor<2xf16>
// CHECK: %[[Y:.*]] = mdl.conv2d %[[XH]], %[[KH]], %[[BH]] {{.*}} -> tensor<2x2x3x3xf16>
// CHECK: %[[YF:.*]] = mdl.cast %[[Y]] : tensor<2x2x3x3xf16> -> tensor<2x2x3x3xf32>
// CHECK: mdl.mean %[[YF]]
// CHECK: mdl.matmul %{{.*}} : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
func.func @"half.fwd_bwd"() attributes {mdl.autodiff = {loss = @"half:out:loss", scale = 1.000000e+00 : f64}, mdl.entry = "half", mdl.function = "fwd_bwd"} {
  %x = mdl.load @"half:in:x" : tensor<2x3x5x5xf32>
  %k = mdl.param_ref @k : tensor<2x3x3x3xf32>
  %kb = mdl.param_ref @kb : tensor<2xf32>
  %y = mdl.conv2d %x, %k, %kb stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<2x3x5x5xf32>, tensor<2x3x3x3xf32>, tensor<2xf32> -> tensor<2x2x3x3xf32>
  %m = mdl.mean %y axes = [0, 1, 2, 3] : tensor<2x2x3x3xf32> -> tensor<f32>
  %v = mdl.param_ref @v : tensor<4x4xf64>
  %vv = mdl.matmul %v, %v : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
  %s = mdl.sum %vv axes = [0, 1] : tensor<4x4xf64> -> tensor<f64>
  %sf = mdl.cast %s : tensor<f64> -> tensor<f32>
  %l = mdl.add %m, %sf : tensor<f32>, tensor<f32> -> tensor<f32>
  mdl.store %l, @"half:out:loss" : tensor<f32>
  return
}

// precision = f32: nothing changes.
// CHECK-LABEL: func.func @full.fwd_bwd
// CHECK-NOT: bf16
// CHECK-NOT: f16
// CHECK: return
func.func @"full.fwd_bwd"() attributes {mdl.autodiff = {loss = @"full:out:loss", scale = 1.000000e+00 : f64}, mdl.entry = "full", mdl.function = "fwd_bwd"} {
  %x = mdl.load @"full:in:x" : tensor<2x4xf32>
  %w = mdl.param_ref @w : tensor<8x4xf32>
  %wt = mdl.transpose %w perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %y = mdl.matmul %x, %wt : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  %l = mdl.sum %y axes = [0, 1] : tensor<2x8xf32> -> tensor<f32>
  mdl.store %l, @"full:out:loss" : tensor<f32>
  return
}
