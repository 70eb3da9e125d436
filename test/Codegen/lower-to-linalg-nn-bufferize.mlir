// Every NN op lowered by --mdl-lower-to-linalg bufferizes with one-shot
// bufferization, in the pipeline's form (arena buffers, loads and stores):
// no tensor op is left, GEMMs stay named ops on memrefs, and the
// embedding_grad scatter-add writes its one table (no allocation inside).
// RUN: modelc-opt %s --mdl-lower-to-linalg --one-shot-bufferize --split-input-file | FileCheck %s

// A LeNet-style forward and backward step: conv, pooling, linear, losses.
// CHECK-LABEL: func.func @T.fwd_bwd
// CHECK-NOT: tensor<
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<6x25xf32{{.*}}>, memref<25x1568xf32{{.*}}>)
// CHECK: linalg.matmul_transpose_b
// CHECK: linalg.matmul_transpose_a
// CHECK: return
mdl.buffer @"T:in:x" : tensor<2x1x28x28xf32> {entry = "T", key = "x", phase = "train", role = "input"}
mdl.buffer @"T:in:y" : tensor<2xui8> {entry = "T", key = "y", phase = "train", role = "input"}
mdl.buffer @"T:in:t" : tensor<2x10xf32> {entry = "T", key = "t", phase = "train", role = "input"}
mdl.buffer @"T:in:g" : tensor<2x6x28x28xf32> {entry = "T", key = "g", phase = "train", role = "input"}
mdl.buffer @w : tensor<6x1x5x5xf32> {entry = "T", key = "w", phase = "train", role = "input"}
mdl.buffer @b : tensor<6xf32> {entry = "T", key = "b", phase = "train", role = "input"}
mdl.buffer @fc : tensor<10x1176xf32> {entry = "T", key = "fc", phase = "train", role = "input"}
mdl.buffer @"T:out:loss" : tensor<f32> {entry = "T", key = "loss", phase = "train", role = "output"}
mdl.buffer @"T:out:accuracy" : tensor<f32> {entry = "T", key = "accuracy", phase = "train", role = "output"}
mdl.buffer @"T:out:mse" : tensor<f32> {entry = "T", key = "mse", phase = "train", role = "output"}
mdl.buffer @"T:out:dlogits" : tensor<2x10xf32> {entry = "T", key = "dlogits", phase = "train", role = "output"}
mdl.buffer @"T:out:dx" : tensor<2x1x28x28xf32> {entry = "T", key = "dx", phase = "train", role = "output"}
mdl.buffer @"T:out:dw" : tensor<6x1x5x5xf32> {entry = "T", key = "dw", phase = "train", role = "output"}
mdl.buffer @"T:out:dmax" : tensor<2x6x28x28xf32> {entry = "T", key = "dmax", phase = "train", role = "output"}
mdl.buffer @"T:out:davg" : tensor<2x6x28x28xf32> {entry = "T", key = "davg", phase = "train", role = "output"}
func.func @"T.fwd_bwd"() {
  %x = mdl.load @"T:in:x" : tensor<2x1x28x28xf32>
  %y = mdl.load @"T:in:y" : tensor<2xui8>
  %t = mdl.load @"T:in:t" : tensor<2x10xf32>
  %g = mdl.load @"T:in:g" : tensor<2x6x28x28xf32>
  %w = mdl.load @w : tensor<6x1x5x5xf32>
  %b = mdl.load @b : tensor<6xf32>
  %fc = mdl.load @fc : tensor<10x1176xf32>
  %c = mdl.conv2d %x, %w, %b stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<2x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<6xf32> -> tensor<2x6x28x28xf32>
  %p = mdl.max_pool2d %c kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x6x28x28xf32> -> tensor<2x6x14x14xf32>
  %a = mdl.avg_pool2d %p kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x6x14x14xf32> -> tensor<2x6x7x7xf32>
  %f = mdl.reshape %a : tensor<2x6x7x7xf32> -> tensor<2x294xf32>
  %ff = mdl.concat %f, %f, %f, %f axis = 1 : tensor<2x294xf32>, tensor<2x294xf32>, tensor<2x294xf32>, tensor<2x294xf32> -> tensor<2x1176xf32>
  %fct = mdl.transpose %fc perm = [1, 0] : tensor<10x1176xf32> -> tensor<1176x10xf32>
  %logits = mdl.matmul %ff, %fct : tensor<2x1176xf32>, tensor<1176x10xf32> -> tensor<2x10xf32>
  %loss = mdl.cross_entropy %logits, %y ignore_index = -100 : tensor<2x10xf32>, tensor<2xui8> -> tensor<f32>
  %acc = mdl.accuracy %logits, %y : tensor<2x10xf32>, tensor<2xui8> -> tensor<f32>
  %mse = mdl.mse_loss %logits, %t : tensor<2x10xf32>, tensor<2x10xf32> -> tensor<f32>
  %dl = mdl.cross_entropy_grad %logits, %y, %loss ignore_index = -100 : tensor<2x10xf32>, tensor<2xui8>, tensor<f32> -> tensor<2x10xf32>
  %dx = mdl.conv2d_grad_input %g, %w stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<2x6x28x28xf32>, tensor<6x1x5x5xf32> -> tensor<2x1x28x28xf32>
  %dw = mdl.conv2d_grad_weight %x, %g stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<2x1x28x28xf32>, tensor<2x6x28x28xf32> -> tensor<6x1x5x5xf32>
  %gp = mdl.max_pool2d %g kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x6x28x28xf32> -> tensor<2x6x14x14xf32>
  %dmax = mdl.max_pool2d_grad %c, %gp kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x6x28x28xf32>, tensor<2x6x14x14xf32> -> tensor<2x6x28x28xf32>
  %davg = mdl.avg_pool2d_grad %gp kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<2x6x14x14xf32> -> tensor<2x6x28x28xf32>
  mdl.store %loss, @"T:out:loss" : tensor<f32>
  mdl.store %acc, @"T:out:accuracy" : tensor<f32>
  mdl.store %mse, @"T:out:mse" : tensor<f32>
  mdl.store %dl, @"T:out:dlogits" : tensor<2x10xf32>
  mdl.store %dx, @"T:out:dx" : tensor<2x1x28x28xf32>
  mdl.store %dw, @"T:out:dw" : tensor<6x1x5x5xf32>
  mdl.store %dmax, @"T:out:dmax" : tensor<2x6x28x28xf32>
  mdl.store %davg, @"T:out:davg" : tensor<2x6x28x28xf32>
  return
}

// -----

// A GPT-style block: embedding, layer_norm, gelu (both forms), batched
// attention-shaped matmuls, and the gradients of embedding and gelu.
// CHECK-LABEL: func.func @G.fwd_bwd
// CHECK-NOT: tensor<
// CHECK: linalg.batch_matmul_transpose_b
// CHECK: %[[TABLE:.*]] = memref.alloc() : memref<65x16xf32>
// CHECK: mdlrt.row_scatter_add ins(%{{.*}}, %{{.*}} : memref<16xi32, {{.*}}>, memref<16x16xf32, {{.*}}>) outs(%[[TABLE]] : memref<65x16xf32>)
// CHECK-NOT: memref.alloc
// CHECK: memref.store %{{.*}}, %[[TABLE]]
// CHECK: return
mdl.buffer @"G:in:ids" : tensor<2x8xi32> {entry = "G", key = "ids", phase = "train", role = "input"}
mdl.buffer @wte : tensor<65x16xf32> {entry = "G", key = "wte", phase = "train", role = "input"}
mdl.buffer @lnw : tensor<16xf32> {entry = "G", key = "lnw", phase = "train", role = "input"}
mdl.buffer @lnb : tensor<16xf32> {entry = "G", key = "lnb", phase = "train", role = "input"}
mdl.buffer @"G:out:y" : tensor<2x2x8x8xf32> {entry = "G", key = "y", phase = "train", role = "output"}
mdl.buffer @"G:out:dgelu" : tensor<2x8x16xf32> {entry = "G", key = "dgelu", phase = "train", role = "output"}
mdl.buffer @"G:out:dwte" : tensor<65x16xf32> {entry = "G", key = "dwte", phase = "train", role = "output"}
func.func @"G.fwd_bwd"() {
  %ids = mdl.load @"G:in:ids" : tensor<2x8xi32>
  %wte = mdl.load @wte : tensor<65x16xf32>
  %lnw = mdl.load @lnw : tensor<16xf32>
  %lnb = mdl.load @lnb : tensor<16xf32>
  %e = mdl.embedding %ids, %wte : tensor<2x8xi32>, tensor<65x16xf32> -> tensor<2x8x16xf32>
  %n = mdl.layer_norm %e, %lnw, %lnb eps = 1.000000e-05 : tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x8x16xf32>
  %h = mdl.gelu %n {approximate = "tanh"} : tensor<2x8x16xf32>
  %h2 = mdl.gelu %h : tensor<2x8x16xf32>
  %q = mdl.reshape %h2 : tensor<2x8x16xf32> -> tensor<2x8x2x8xf32>
  %qt = mdl.transpose %q perm = [0, 2, 1, 3] : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %kt = mdl.transpose %qt perm = [0, 1, 3, 2] : tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %s = mdl.matmul %qt, %kt : tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %dg = mdl.gelu_grad %n, %h {approximate = "tanh"} : tensor<2x8x16xf32>
  %dg2 = mdl.gelu_grad %h, %dg : tensor<2x8x16xf32>
  %dwte = mdl.embedding_grad %ids, %dg2 : tensor<2x8xi32>, tensor<2x8x16xf32> -> tensor<65x16xf32>
  mdl.store %s, @"G:out:y" : tensor<2x2x8x8xf32>
  mdl.store %dg2, @"G:out:dgelu" : tensor<2x8x16xf32>
  mdl.store %dwte, @"G:out:dwte" : tensor<65x16xf32>
  return
}

// -----

// The LeNet-style step on bf16 (the losses f32, as the frontend makes
// them): the f32 accumulators and GEMM products bufferize like the rest,
// the GEMMs reading bf16 operands into f32 products.
// CHECK-LABEL: func.func @TB.fwd_bwd
// CHECK-NOT: tensor<
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<6x25xbf16{{.*}}>, memref<25x1568xbf16{{.*}}>) outs(%{{.*}} : memref<6x1568xf32>)
// CHECK: return
mdl.buffer @"TB:in:x" : tensor<2x1x28x28xbf16> {entry = "TB", key = "x", phase = "train", role = "input"}
mdl.buffer @"TB:in:y" : tensor<2xui8> {entry = "TB", key = "y", phase = "train", role = "input"}
mdl.buffer @"TB:in:t" : tensor<2x10xbf16> {entry = "TB", key = "t", phase = "train", role = "input"}
mdl.buffer @"TB:in:g" : tensor<2x6x28x28xbf16> {entry = "TB", key = "g", phase = "train", role = "input"}
mdl.buffer @w : tensor<6x1x5x5xbf16> {entry = "TB", key = "w", phase = "train", role = "input"}
mdl.buffer @b : tensor<6xbf16> {entry = "TB", key = "b", phase = "train", role = "input"}
mdl.buffer @fc : tensor<10x1176xbf16> {entry = "TB", key = "fc", phase = "train", role = "input"}
mdl.buffer @"TB:out:loss" : tensor<f32> {entry = "TB", key = "loss", phase = "train", role = "output"}
mdl.buffer @"TB:out:accuracy" : tensor<f32> {entry = "TB", key = "accuracy", phase = "train", role = "output"}
mdl.buffer @"TB:out:mse" : tensor<bf16> {entry = "TB", key = "mse", phase = "train", role = "output"}
mdl.buffer @"TB:out:dlogits" : tensor<2x10xbf16> {entry = "TB", key = "dlogits", phase = "train", role = "output"}
mdl.buffer @"TB:out:dx" : tensor<2x1x28x28xbf16> {entry = "TB", key = "dx", phase = "train", role = "output"}
mdl.buffer @"TB:out:dw" : tensor<6x1x5x5xbf16> {entry = "TB", key = "dw", phase = "train", role = "output"}
mdl.buffer @"TB:out:dmax" : tensor<2x6x28x28xbf16> {entry = "TB", key = "dmax", phase = "train", role = "output"}
mdl.buffer @"TB:out:davg" : tensor<2x6x28x28xbf16> {entry = "TB", key = "davg", phase = "train", role = "output"}
func.func @"TB.fwd_bwd"() {
  %x = mdl.load @"TB:in:x" : tensor<2x1x28x28xbf16>
  %y = mdl.load @"TB:in:y" : tensor<2xui8>
  %t = mdl.load @"TB:in:t" : tensor<2x10xbf16>
  %g = mdl.load @"TB:in:g" : tensor<2x6x28x28xbf16>
  %w = mdl.load @w : tensor<6x1x5x5xbf16>
  %b = mdl.load @b : tensor<6xbf16>
  %fc = mdl.load @fc : tensor<10x1176xbf16>
  %c = mdl.conv2d %x, %w, %b stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<2x1x28x28xbf16>, tensor<6x1x5x5xbf16>, tensor<6xbf16> -> tensor<2x6x28x28xbf16>
  %p = mdl.max_pool2d %c kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x6x28x28xbf16> -> tensor<2x6x14x14xbf16>
  %a = mdl.avg_pool2d %p kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x6x14x14xbf16> -> tensor<2x6x7x7xbf16>
  %f = mdl.reshape %a : tensor<2x6x7x7xbf16> -> tensor<2x294xbf16>
  %ff = mdl.concat %f, %f, %f, %f axis = 1 : tensor<2x294xbf16>, tensor<2x294xbf16>, tensor<2x294xbf16>, tensor<2x294xbf16> -> tensor<2x1176xbf16>
  %fct = mdl.transpose %fc perm = [1, 0] : tensor<10x1176xbf16> -> tensor<1176x10xbf16>
  %logits = mdl.matmul %ff, %fct : tensor<2x1176xbf16>, tensor<1176x10xbf16> -> tensor<2x10xbf16>
  %loss = mdl.cross_entropy %logits, %y ignore_index = -100 : tensor<2x10xbf16>, tensor<2xui8> -> tensor<f32>
  %acc = mdl.accuracy %logits, %y : tensor<2x10xbf16>, tensor<2xui8> -> tensor<f32>
  %mse = mdl.mse_loss %logits, %t : tensor<2x10xbf16>, tensor<2x10xbf16> -> tensor<bf16>
  %dl = mdl.cross_entropy_grad %logits, %y, %loss ignore_index = -100 : tensor<2x10xbf16>, tensor<2xui8>, tensor<f32> -> tensor<2x10xbf16>
  %dx = mdl.conv2d_grad_input %g, %w stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<2x6x28x28xbf16>, tensor<6x1x5x5xbf16> -> tensor<2x1x28x28xbf16>
  %dw = mdl.conv2d_grad_weight %x, %g stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 1 : tensor<2x1x28x28xbf16>, tensor<2x6x28x28xbf16> -> tensor<6x1x5x5xbf16>
  %gp = mdl.max_pool2d %g kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x6x28x28xbf16> -> tensor<2x6x14x14xbf16>
  %dmax = mdl.max_pool2d_grad %c, %gp kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x6x28x28xbf16>, tensor<2x6x14x14xbf16> -> tensor<2x6x28x28xbf16>
  %davg = mdl.avg_pool2d_grad %gp kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<2x6x14x14xbf16> -> tensor<2x6x28x28xbf16>
  mdl.store %loss, @"TB:out:loss" : tensor<f32>
  mdl.store %acc, @"TB:out:accuracy" : tensor<f32>
  mdl.store %mse, @"TB:out:mse" : tensor<bf16>
  mdl.store %dl, @"TB:out:dlogits" : tensor<2x10xbf16>
  mdl.store %dx, @"TB:out:dx" : tensor<2x1x28x28xbf16>
  mdl.store %dw, @"TB:out:dw" : tensor<6x1x5x5xbf16>
  mdl.store %dmax, @"TB:out:dmax" : tensor<2x6x28x28xbf16>
  mdl.store %davg, @"TB:out:davg" : tensor<2x6x28x28xbf16>
  return
}

// -----

// The GPT-style block on bf16: embedding_grad's rows add up in an f32
// table, then rounded once into a bf16 table.
// CHECK-LABEL: func.func @GB.fwd_bwd
// CHECK-NOT: tensor<
// CHECK: %[[TABLE:.*]] = memref.alloc() : memref<65x16xf32>
// CHECK: mdlrt.row_scatter_add ins(%{{.*}}, %{{.*}} : memref<16xi32, {{.*}}>, memref<16x16xbf16, {{.*}}>) outs(%[[TABLE]] : memref<65x16xf32>)
// CHECK-NOT: memref.alloc
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: memref.alloc() {{.*}} : memref<65x16xbf16>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return
mdl.buffer @"GB:in:ids" : tensor<2x8xi32> {entry = "GB", key = "ids", phase = "train", role = "input"}
mdl.buffer @wte : tensor<65x16xbf16> {entry = "GB", key = "wte", phase = "train", role = "input"}
mdl.buffer @lnw : tensor<16xbf16> {entry = "GB", key = "lnw", phase = "train", role = "input"}
mdl.buffer @lnb : tensor<16xbf16> {entry = "GB", key = "lnb", phase = "train", role = "input"}
mdl.buffer @"GB:out:y" : tensor<2x2x8x8xbf16> {entry = "GB", key = "y", phase = "train", role = "output"}
mdl.buffer @"GB:out:dgelu" : tensor<2x8x16xbf16> {entry = "GB", key = "dgelu", phase = "train", role = "output"}
mdl.buffer @"GB:out:dwte" : tensor<65x16xbf16> {entry = "GB", key = "dwte", phase = "train", role = "output"}
func.func @"GB.fwd_bwd"() {
  %ids = mdl.load @"GB:in:ids" : tensor<2x8xi32>
  %wte = mdl.load @wte : tensor<65x16xbf16>
  %lnw = mdl.load @lnw : tensor<16xbf16>
  %lnb = mdl.load @lnb : tensor<16xbf16>
  %e = mdl.embedding %ids, %wte : tensor<2x8xi32>, tensor<65x16xbf16> -> tensor<2x8x16xbf16>
  %n = mdl.layer_norm %e, %lnw, %lnb eps = 1.000000e-05 : tensor<2x8x16xbf16>, tensor<16xbf16>, tensor<16xbf16> -> tensor<2x8x16xbf16>
  %h = mdl.gelu %n {approximate = "tanh"} : tensor<2x8x16xbf16>
  %h2 = mdl.gelu %h : tensor<2x8x16xbf16>
  %q = mdl.reshape %h2 : tensor<2x8x16xbf16> -> tensor<2x8x2x8xbf16>
  %qt = mdl.transpose %q perm = [0, 2, 1, 3] : tensor<2x8x2x8xbf16> -> tensor<2x2x8x8xbf16>
  %kt = mdl.transpose %qt perm = [0, 1, 3, 2] : tensor<2x2x8x8xbf16> -> tensor<2x2x8x8xbf16>
  %s = mdl.matmul %qt, %kt : tensor<2x2x8x8xbf16>, tensor<2x2x8x8xbf16> -> tensor<2x2x8x8xbf16>
  %dg = mdl.gelu_grad %n, %h {approximate = "tanh"} : tensor<2x8x16xbf16>
  %dg2 = mdl.gelu_grad %h, %dg : tensor<2x8x16xbf16>
  %dwte = mdl.embedding_grad %ids, %dg2 : tensor<2x8xi32>, tensor<2x8x16xbf16> -> tensor<65x16xbf16>
  mdl.store %s, @"GB:out:y" : tensor<2x2x8x8xbf16>
  mdl.store %dg2, @"GB:out:dgelu" : tensor<2x8x16xbf16>
  mdl.store %dwte, @"GB:out:dwte" : tensor<65x16xbf16>
  return
}
