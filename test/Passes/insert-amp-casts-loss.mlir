// RUN: modelc-opt %s --mdl-insert-amp-casts | FileCheck %s
// RUN: modelc-opt %s --mdl-insert-amp-casts --mdl-autodiff | FileCheck %s --check-prefix=GRAD

// cross_entropy under bf16: torch.autocast runs it in f32 on an f32 copy of
// the logits; its lowering reads 16-bit logits extended to f32 exactly and
// computes in f32, so the pass leaves the bf16 logits as they are (no f32
// copy of a [tokens, vocabulary] tensor) and the loss is f32. Its gradient
// is computed in f32 and rounded once to bf16, as torch's f32 gradient is
// when it flows back through the cast (docs/passes/amp.md).
// CHECK-LABEL: func.func @c.fwd_bwd
// CHECK: %[[LOGITS:.*]] = mdl.matmul %{{.*}}, %{{.*}} : tensor<6x4xbf16>, tensor<4x10xbf16> -> tensor<6x10xbf16>
// CHECK-NOT: mdl.cast %[[LOGITS]]
// CHECK: %[[L:.*]] = mdl.cross_entropy %[[LOGITS]], %{{.*}} ignore_index = -100 : tensor<6x10xbf16>, tensor<6xi32> -> tensor<f32>
// CHECK: mdl.store %[[L]], @"c:out:loss" : tensor<f32>
// GRAD-LABEL: func.func @c.fwd_bwd
// GRAD: mdl.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} ignore_index = -100 : tensor<6x10xbf16>, tensor<6xi32>, tensor<f32> -> tensor<6x10xbf16>
mdl.param @w : tensor<10x4xf32> = normal(0.0, 1.0)
mdl.data @d {
  mdl.field "x" : tensor<4xf32> = npy "x.npy"
}
mdl.train @c data @d outputs ["loss"] settings {batch = 6 : i64, precision = "bf16"} {
^bb0(%x: tensor<6x4xf32>):
  %l = mdl.sum %x axes = [0, 1] : tensor<6x4xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}
mdl.buffer @"c:in:x" : tensor<6x4xf32> {entry = "c", key = "x", phase = "train", role = "input"}
mdl.buffer @"c:in:y" : tensor<6xi32> {entry = "c", key = "y", phase = "train", role = "input"}
mdl.buffer @"c:out:loss" : tensor<f32> {entry = "c", key = "loss", phase = "train", role = "output"}
mdl.buffer @"grad:w" : tensor<10x4xf32> {entry = "", key = "w", phase = "shared", role = "grad"}
func.func @"c.fwd_bwd"() attributes {mdl.autodiff = {loss = @"c:out:loss", scale = 1.000000e+00 : f64}, mdl.entry = "c", mdl.function = "fwd_bwd"} {
  %x = mdl.load @"c:in:x" : tensor<6x4xf32>
  %y = mdl.load @"c:in:y" : tensor<6xi32>
  %w = mdl.param_ref @w : tensor<10x4xf32>
  %wt = mdl.transpose %w perm = [1, 0] : tensor<10x4xf32> -> tensor<4x10xf32>
  %logits = mdl.matmul %x, %wt : tensor<6x4xf32>, tensor<4x10xf32> -> tensor<6x10xf32>
  %l = mdl.cross_entropy %logits, %y ignore_index = -100 : tensor<6x10xf32>, tensor<6xi32> -> tensor<f32>
  mdl.store %l, @"c:out:loss" : tensor<f32>
  return
}
