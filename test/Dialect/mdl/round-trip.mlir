// Every compute op of the mdl dialect prints and parses back unchanged, in
// the custom and in the generic form.
// RUN: modelc-opt %s | modelc-opt | FileCheck %s
// RUN: modelc-opt %s --mlir-print-op-generic | modelc-opt | FileCheck %s
// Printing the printed form again changes nothing.
// RUN: modelc-opt %s > %t && modelc-opt %t | diff %t -

// CHECK-LABEL: func.func @binary(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<8xf32>
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // CHECK: mdl.add %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %0 = mdl.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: mdl.sub %[[B]], %[[A]] : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = mdl.sub %b, %a : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: mdl.mul %[[A]], %[[A]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = mdl.mul %a, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: mdl.div %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %3 = mdl.div %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: mdl.rem %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %4 = mdl.rem %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: mdl.pow %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %5 = mdl.pow %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: mdl.maximum %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %6 = mdl.maximum %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  // CHECK: mdl.minimum %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %7 = mdl.minimum %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return
}

// CHECK-LABEL: func.func @broadcast_both_ways(
func.func @broadcast_both_ways(%a: tensor<4x1xi32>, %b: tensor<3xi32>) -> tensor<4x3xi32> {
  // CHECK: mdl.add %{{.*}}, %{{.*}} : tensor<4x1xi32>, tensor<3xi32> -> tensor<4x3xi32>
  %0 = mdl.add %a, %b : tensor<4x1xi32>, tensor<3xi32> -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// CHECK-LABEL: func.func @compare_and_logic(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xf32>, %[[S:[^:]*]]: tensor<f32>
func.func @compare_and_logic(%a: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  // CHECK: %[[LT:.*]] = mdl.compare lt, %[[A]], %[[S]] : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
  %lt = mdl.compare lt, %a, %s : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
  // CHECK: mdl.compare eq, %[[A]], %[[A]]
  %eq = mdl.compare eq, %a, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
  // CHECK: mdl.compare ne,
  %ne = mdl.compare ne, %a, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
  // CHECK: mdl.compare le,
  %le = mdl.compare le, %a, %s : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
  // CHECK: mdl.compare gt,
  %gt = mdl.compare gt, %s, %a : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xi1>
  // CHECK: mdl.compare ge,
  %ge = mdl.compare ge, %a, %s : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
  // CHECK: %[[AND:.*]] = mdl.and %[[LT]], %{{.*}} : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
  %and = mdl.and %lt, %eq : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
  // CHECK: mdl.or %[[AND]], %{{.*}} : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
  %or = mdl.or %and, %ne : tensor<4x8xi1>, tensor<4x8xi1> -> tensor<4x8xi1>
  // CHECK: %[[NOT:.*]] = mdl.not %{{.*}} : tensor<4x8xi1>
  %not = mdl.not %or : tensor<4x8xi1>
  // CHECK: mdl.where %[[NOT]], %[[A]], %[[S]] : tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %w = mdl.where %not, %a, %s : tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @unary(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3xf32>, %[[I:[^:]*]]: tensor<5xi64>
func.func @unary(%x: tensor<2x3xf32>, %i: tensor<5xi64>) {
  // CHECK: mdl.neg %[[X]] : tensor<2x3xf32>
  %0 = mdl.neg %x : tensor<2x3xf32>
  // CHECK: mdl.neg %[[I]] : tensor<5xi64>
  %1 = mdl.neg %i : tensor<5xi64>
  // CHECK: mdl.abs %[[I]] : tensor<5xi64>
  %2 = mdl.abs %i : tensor<5xi64>
  // CHECK: mdl.relu %[[X]] : tensor<2x3xf32>
  %3 = mdl.relu %x : tensor<2x3xf32>
  // CHECK: mdl.exp %[[X]] : tensor<2x3xf32>
  %4 = mdl.exp %x : tensor<2x3xf32>
  // CHECK: mdl.log %[[X]] : tensor<2x3xf32>
  %5 = mdl.log %x : tensor<2x3xf32>
  // CHECK: mdl.sqrt %[[X]] : tensor<2x3xf32>
  %6 = mdl.sqrt %x : tensor<2x3xf32>
  // CHECK: mdl.rsqrt %[[X]] : tensor<2x3xf32>
  %7 = mdl.rsqrt %x : tensor<2x3xf32>
  // CHECK: mdl.tanh %[[X]] : tensor<2x3xf32>
  %8 = mdl.tanh %x : tensor<2x3xf32>
  // CHECK: mdl.sigmoid %[[X]] : tensor<2x3xf32>
  %9 = mdl.sigmoid %x : tensor<2x3xf32>
  // CHECK: mdl.silu %[[X]] : tensor<2x3xf32>
  %10 = mdl.silu %x : tensor<2x3xf32>
  // The default approximation is not printed.
  // CHECK: mdl.gelu %[[X]] : tensor<2x3xf32>
  %11 = mdl.gelu %x : tensor<2x3xf32>
  // CHECK: mdl.gelu %[[X]] : tensor<2x3xf32>
  %12 = mdl.gelu %x {approximate = "none"} : tensor<2x3xf32>
  // CHECK: mdl.gelu %[[X]] {approximate = "tanh"} : tensor<2x3xf32>
  %13 = mdl.gelu %x {approximate = "tanh"} : tensor<2x3xf32>
  // CHECK: mdl.abs %[[X]] : tensor<2x3xf32>
  %14 = mdl.abs %x : tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @casts(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x28x28xui8>
func.func @casts(%x: tensor<8x28x28xui8>) -> tensor<8x28x28xi1> {
  // CHECK: %[[F:.*]] = mdl.cast %[[X]] : tensor<8x28x28xui8> -> tensor<8x28x28xbf16>
  %f = mdl.cast %x : tensor<8x28x28xui8> -> tensor<8x28x28xbf16>
  // CHECK: mdl.cast %[[F]] : tensor<8x28x28xbf16> -> tensor<8x28x28xi1>
  %b = mdl.cast %f : tensor<8x28x28xbf16> -> tensor<8x28x28xi1>
  return %b : tensor<8x28x28xi1>
}

// CHECK-LABEL: func.func @constants(
func.func @constants() {
  // CHECK: mdl.constant dense<2.550000e+02> : tensor<f32>
  %0 = mdl.constant dense<255.0> : tensor<f32>
  // CHECK: mdl.constant dense<[1, 2, 3]> : tensor<3xi32>
  %1 = mdl.constant dense<[1, 2, 3]> : tensor<3xi32>
  // CHECK: mdl.constant dense<true> : tensor<2x2xi1>
  %2 = mdl.constant dense<true> : tensor<2x2xi1>
  // CHECK: mdl.constant dense<7> : tensor<ui16>
  %3 = mdl.constant dense<7> : tensor<ui16>
  return
}

// CHECK-LABEL: func.func @reductions(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8x16xf32>
func.func @reductions(%x: tensor<4x8x16xf32>) {
  // CHECK: mdl.sum %[[X]] axes = [1] : tensor<4x8x16xf32> -> tensor<4x16xf32>
  %0 = mdl.sum %x axes = [1] : tensor<4x8x16xf32> -> tensor<4x16xf32>
  // CHECK: mdl.mean %[[X]] axes = [0, 2] keepdim : tensor<4x8x16xf32> -> tensor<1x8x1xf32>
  %1 = mdl.mean %x axes = [0, 2] keepdim : tensor<4x8x16xf32> -> tensor<1x8x1xf32>
  // CHECK: mdl.max %[[X]] axes = [0, 1, 2] : tensor<4x8x16xf32> -> tensor<f32>
  %2 = mdl.max %x axes = [0, 1, 2] : tensor<4x8x16xf32> -> tensor<f32>
  // CHECK: mdl.min %[[X]] axes = [2] keepdim : tensor<4x8x16xf32> -> tensor<4x8x1xf32>
  %3 = mdl.min %x axes = [2] keepdim : tensor<4x8x16xf32> -> tensor<4x8x1xf32>
  // CHECK: mdl.argmax %[[X]] axis = 2 : tensor<4x8x16xf32> -> tensor<4x8xi64>
  %4 = mdl.argmax %x axis = 2 : tensor<4x8x16xf32> -> tensor<4x8xi64>
  // CHECK: mdl.argmax %[[X]] axis = 0 keepdim : tensor<4x8x16xf32> -> tensor<1x8x16xi64>
  %5 = mdl.argmax %x axis = 0 keepdim : tensor<4x8x16xf32> -> tensor<1x8x16xi64>
  // CHECK: mdl.softmax %[[X]] axis = 2 : tensor<4x8x16xf32>
  %6 = mdl.softmax %x axis = 2 : tensor<4x8x16xf32>
  // CHECK: mdl.log_softmax %[[X]] axis = 0 : tensor<4x8x16xf32>
  %7 = mdl.log_softmax %x axis = 0 : tensor<4x8x16xf32>
  return
}

// CHECK-LABEL: func.func @shapes(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x6xf32>, %[[Y:[^:]*]]: tensor<4x2xf32>
func.func @shapes(%x: tensor<4x6xf32>, %y: tensor<4x2xf32>) {
  // CHECK: mdl.reshape %[[X]] : tensor<4x6xf32> -> tensor<2x3x4xf32>
  %0 = mdl.reshape %x : tensor<4x6xf32> -> tensor<2x3x4xf32>
  // CHECK: mdl.transpose %[[X]] perm = [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %1 = mdl.transpose %x perm = [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  // CHECK: mdl.concat %[[X]], %[[Y]], %[[X]] axis = 1 : tensor<4x6xf32>, tensor<4x2xf32>, tensor<4x6xf32> -> tensor<4x14xf32>
  %2 = mdl.concat %x, %y, %x axis = 1 : tensor<4x6xf32>, tensor<4x2xf32>, tensor<4x6xf32> -> tensor<4x14xf32>
  // CHECK: %{{.*}}:3 = mdl.split %[[X]] axis = 1 : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
  %3:3 = mdl.split %x axis = 1 : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
  // CHECK: mdl.broadcast_to %[[Y]] : tensor<4x2xf32> -> tensor<3x4x2xf32>
  %4 = mdl.broadcast_to %y : tensor<4x2xf32> -> tensor<3x4x2xf32>
  // CHECK: mdl.arange : tensor<64xi32>
  %5 = mdl.arange : tensor<64xi32>
  // CHECK: mdl.slice %[[X]] starts = [1, 0] limits = [4, 6] strides = [1, 4] : tensor<4x6xf32> -> tensor<3x2xf32>
  %6 = mdl.slice %x starts = [1, 0] limits = [4, 6] strides = [1, 4] : tensor<4x6xf32> -> tensor<3x2xf32>
  // CHECK: mdl.slice %[[X]] starts = [0, 3] limits = [4, 3] strides = [1, 1] : tensor<4x6xf32> -> tensor<4x0xf32>
  %7 = mdl.slice %x starts = [0, 3] limits = [4, 3] strides = [1, 1] : tensor<4x6xf32> -> tensor<4x0xf32>
  return
}

// CHECK-LABEL: func.func @matmuls(
func.func @matmuls(%v: tensor<8xf32>, %m: tensor<8x5xf32>, %n: tensor<3x8xf32>,
                   %b: tensor<2x1x3x8xf32>, %c: tensor<4x8x5xf32>) {
  // CHECK: mdl.matmul %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32> -> tensor<f32>
  %0 = mdl.matmul %v, %v : tensor<8xf32>, tensor<8xf32> -> tensor<f32>
  // CHECK: mdl.matmul %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8x5xf32> -> tensor<5xf32>
  %1 = mdl.matmul %v, %m : tensor<8xf32>, tensor<8x5xf32> -> tensor<5xf32>
  // CHECK: mdl.matmul %{{.*}}, %{{.*}} : tensor<3x8xf32>, tensor<8xf32> -> tensor<3xf32>
  %2 = mdl.matmul %n, %v : tensor<3x8xf32>, tensor<8xf32> -> tensor<3xf32>
  // CHECK: mdl.matmul %{{.*}}, %{{.*}} : tensor<3x8xf32>, tensor<8x5xf32> -> tensor<3x5xf32>
  %3 = mdl.matmul %n, %m : tensor<3x8xf32>, tensor<8x5xf32> -> tensor<3x5xf32>
  // CHECK: mdl.matmul %{{.*}}, %{{.*}} : tensor<2x1x3x8xf32>, tensor<4x8x5xf32> -> tensor<2x4x3x5xf32>
  %4 = mdl.matmul %b, %c : tensor<2x1x3x8xf32>, tensor<4x8x5xf32> -> tensor<2x4x3x5xf32>
  // CHECK: mdl.matmul %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<4x8x5xf32> -> tensor<4x5xf32>
  %5 = mdl.matmul %v, %c : tensor<8xf32>, tensor<4x8x5xf32> -> tensor<4x5xf32>
  // CHECK: mdl.matmul %{{.*}}, %{{.*}} : tensor<2x1x3x8xf32>, tensor<8xf32> -> tensor<2x1x3xf32>
  %6 = mdl.matmul %b, %v : tensor<2x1x3x8xf32>, tensor<8xf32> -> tensor<2x1x3xf32>
  return
}

// CHECK-LABEL: func.func @convolutions(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4x28x28xf32>, %[[W:[^:]*]]: tensor<6x2x5x5xf32>, %[[B:[^:]*]]: tensor<6xf32>
func.func @convolutions(%x: tensor<8x4x28x28xf32>, %w: tensor<6x2x5x5xf32>, %b: tensor<6xf32>) {
  // CHECK: mdl.conv2d %[[X]], %[[W]], %[[B]] stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 2 : tensor<8x4x28x28xf32>, tensor<6x2x5x5xf32>, tensor<6xf32> -> tensor<8x6x28x28xf32>
  %0 = mdl.conv2d %x, %w, %b stride = [1, 1] padding = [2, 2] dilation = [1, 1] groups = 2 : tensor<8x4x28x28xf32>, tensor<6x2x5x5xf32>, tensor<6xf32> -> tensor<8x6x28x28xf32>
  // Without bias; strided, dilated: (28 + 0 - 2 * 4 - 1) / 3 + 1 = 7.
  // CHECK: mdl.conv2d %[[X]], %[[W]] stride = [3, 3] padding = [0, 0] dilation = [2, 2] groups = 2 : tensor<8x4x28x28xf32>, tensor<6x2x5x5xf32> -> tensor<8x6x7x7xf32>
  %1 = mdl.conv2d %x, %w stride = [3, 3] padding = [0, 0] dilation = [2, 2] groups = 2 : tensor<8x4x28x28xf32>, tensor<6x2x5x5xf32> -> tensor<8x6x7x7xf32>
  // CHECK: mdl.max_pool2d %[[X]] kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<8x4x28x28xf32> -> tensor<8x4x14x14xf32>
  %2 = mdl.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<8x4x28x28xf32> -> tensor<8x4x14x14xf32>
  // (28 + 2 - 3) / 2 + 1 = 14.
  // CHECK: mdl.avg_pool2d %[[X]] kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<8x4x28x28xf32> -> tensor<8x4x14x14xf32>
  %3 = mdl.avg_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<8x4x28x28xf32> -> tensor<8x4x14x14xf32>
  return
}

// CHECK-LABEL: func.func @transformer_ops(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<2x16xi32>, %[[WTE:[^:]*]]: tensor<100x32xf32>, %[[G:[^:]*]]: tensor<32xf32>, %[[Q:[^:]*]]: tensor<2x4x16x8xf32>, %[[KV:[^:]*]]: tensor<2x4x20x8xf32>
func.func @transformer_ops(%ids: tensor<2x16xi32>, %wte: tensor<100x32xf32>, %g: tensor<32xf32>,
                           %q: tensor<2x4x16x8xf32>, %kv: tensor<2x4x20x8xf32>) {
  // CHECK: %[[E:.*]] = mdl.embedding %[[IDS]], %[[WTE]] : tensor<2x16xi32>, tensor<100x32xf32> -> tensor<2x16x32xf32>
  %e = mdl.embedding %ids, %wte : tensor<2x16xi32>, tensor<100x32xf32> -> tensor<2x16x32xf32>
  // CHECK: mdl.layer_norm %[[E]], %[[G]], %[[G]] eps = 1.000000e-05 : tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x16x32xf32>
  %n = mdl.layer_norm %e, %g, %g eps = 1.0e-5 : tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x16x32xf32>
  // CHECK: mdl.rms_norm %[[E]], %[[G]] eps = 1.1920928955078125E-7 : tensor<2x16x32xf32>, tensor<32xf32> -> tensor<2x16x32xf32>
  %r = mdl.rms_norm %e, %g eps = 1.1920928955078125E-7 : tensor<2x16x32xf32>, tensor<32xf32> -> tensor<2x16x32xf32>
  // CHECK: mdl.rms_norm %[[E]] eps = 0.000000e+00 : tensor<2x16x32xf32> -> tensor<2x16x32xf32>
  %r0 = mdl.rms_norm %e eps = 0.0 : tensor<2x16x32xf32> -> tensor<2x16x32xf32>
  // CHECK: mdl.nll_loss %[[E]], %[[IDS]] ignore_index = -1 label_smoothing = 1.000000e-01 : tensor<2x16x32xf32>, tensor<2x16xi32> -> tensor<f32>
  %nl = mdl.nll_loss %e, %ids ignore_index = -1 label_smoothing = 0.1 : tensor<2x16x32xf32>, tensor<2x16xi32> -> tensor<f32>
  // CHECK: mdl.bce_with_logits %[[E]], %[[E]], %[[G]] : tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32> -> tensor<f32>
  %bce = mdl.bce_with_logits %e, %e, %g : tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32> -> tensor<f32>
  // CHECK: mdl.dropout %[[E]] p = 1.000000e-01 : tensor<2x16x32xf32>
  %d = mdl.dropout %e p = 0.1 : tensor<2x16x32xf32>
  // CHECK: mdl.attention %[[Q]], %[[KV]], %[[KV]] causal scale = 3.535530e-01 : tensor<2x4x16x8xf32>, tensor<2x4x20x8xf32>, tensor<2x4x20x8xf32> -> tensor<2x4x16x8xf32>
  %a = mdl.attention %q, %kv, %kv causal scale = 0.353553 : tensor<2x4x16x8xf32>, tensor<2x4x20x8xf32>, tensor<2x4x20x8xf32> -> tensor<2x4x16x8xf32>
  // CHECK: mdl.attention %[[Q]], %[[KV]], %[[KV]] scale = 1.000000e+00 : tensor<2x4x16x8xf32>, tensor<2x4x20x8xf32>, tensor<2x4x20x8xf32> -> tensor<2x4x16x8xf32>
  %b = mdl.attention %q, %kv, %kv scale = 1.0 : tensor<2x4x16x8xf32>, tensor<2x4x20x8xf32>, tensor<2x4x20x8xf32> -> tensor<2x4x16x8xf32>
  %m = mdl.constant dense<true> : tensor<2x1x1x20xi1>
  // CHECK: mdl.attention %[[Q]], %[[KV]], %[[KV]] mask %{{.*}} causal scale = 1.000000e+00 dropout = 1.000000e-01 : tensor<2x4x16x8xf32>, tensor<2x4x20x8xf32>, tensor<2x4x20x8xf32>, tensor<2x1x1x20xi1> -> tensor<2x4x16x8xf32>
  %c = mdl.attention %q, %kv, %kv mask %m causal scale = 1.0 dropout = 0.1 : tensor<2x4x16x8xf32>, tensor<2x4x20x8xf32>, tensor<2x4x20x8xf32>, tensor<2x1x1x20xi1> -> tensor<2x4x16x8xf32>
  return
}

// CHECK-LABEL: func.func @losses(
// CHECK-SAME: %[[L:[^:]*]]: tensor<2x16x10xf32>, %[[Y:[^:]*]]: tensor<2x16xi64>, %[[U:[^:]*]]: tensor<2x16xui8>
func.func @losses(%logits: tensor<2x16x10xf32>, %labels: tensor<2x16xi64>, %u8: tensor<2x16xui8>,
                  %p: tensor<3xf64>) {
  // CHECK: mdl.cross_entropy %[[L]], %[[Y]] ignore_index = -100 : tensor<2x16x10xf32>, tensor<2x16xi64> -> tensor<f32>
  %0 = mdl.cross_entropy %logits, %labels ignore_index = -100 : tensor<2x16x10xf32>, tensor<2x16xi64> -> tensor<f32>
  // CHECK: mdl.cross_entropy %[[L]], %[[U]] ignore_index = 0 : tensor<2x16x10xf32>, tensor<2x16xui8> -> tensor<f32>
  %1 = mdl.cross_entropy %logits, %u8 ignore_index = 0 : tensor<2x16x10xf32>, tensor<2x16xui8> -> tensor<f32>
  // CHECK: mdl.accuracy %[[L]], %[[U]] : tensor<2x16x10xf32>, tensor<2x16xui8> -> tensor<f32>
  %2 = mdl.accuracy %logits, %u8 : tensor<2x16x10xf32>, tensor<2x16xui8> -> tensor<f32>
  // CHECK: mdl.mse_loss %{{.*}}, %{{.*}} : tensor<3xf64>, tensor<3xf64> -> tensor<f64>
  %3 = mdl.mse_loss %p, %p : tensor<3xf64>, tensor<3xf64> -> tensor<f64>
  return
}

// CHECK-LABEL: func.func @lstm_ops(
func.func @lstm_ops(%xw: tensor<4x16x32xf32>, %w: tensor<32x8xf32>, %h0: tensor<4x8xf32>,
                    %dh: tensor<4x17x8xf32>) {
  // CHECK: %{{.*}}, %[[C:.*]], %[[G:.*]] = mdl.lstm_scan %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x16x32xf32>, tensor<32x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x17x8xf32>, tensor<4x17x8xf32>, tensor<4x16x32xf32>)
  %h, %c, %g = mdl.lstm_scan %xw, %w, %h0, %h0 : (tensor<4x16x32xf32>, tensor<32x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x17x8xf32>, tensor<4x17x8xf32>, tensor<4x16x32xf32>)
  // CHECK: mdl.lstm_scan_grad %{{.*}}, %{{.*}}, %[[G]], %[[C]], %{{.*}} : (tensor<4x17x8xf32>, tensor<4x17x8xf32>, tensor<4x16x32xf32>, tensor<4x17x8xf32>, tensor<32x8xf32>) -> (tensor<4x16x32xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  %dx, %dh0, %dc0 = mdl.lstm_scan_grad %dh, %dh, %g, %c, %w : (tensor<4x17x8xf32>, tensor<4x17x8xf32>, tensor<4x16x32xf32>, tensor<4x17x8xf32>, tensor<32x8xf32>) -> (tensor<4x16x32xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// CHECK-LABEL: func.func @gru_ops(
func.func @gru_ops(%xw: tensor<4x16x24xf32>, %w: tensor<24x8xf32>, %b: tensor<24xf32>,
                   %h0: tensor<4x8xf32>, %dh: tensor<4x17x8xf32>) {
  // CHECK: %[[H:.*]], %[[G:.*]], %[[N:.*]] = mdl.gru_scan %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x16x24xf32>, tensor<24x8xf32>, tensor<24xf32>, tensor<4x8xf32>) -> (tensor<4x17x8xf32>, tensor<4x16x24xf32>, tensor<4x16x8xf32>)
  %h, %g, %n = mdl.gru_scan %xw, %w, %b, %h0 : (tensor<4x16x24xf32>, tensor<24x8xf32>, tensor<24xf32>, tensor<4x8xf32>) -> (tensor<4x17x8xf32>, tensor<4x16x24xf32>, tensor<4x16x8xf32>)
  // CHECK: mdl.gru_scan_grad %{{.*}}, %[[G]], %[[N]], %[[H]], %{{.*}} : (tensor<4x17x8xf32>, tensor<4x16x24xf32>, tensor<4x16x8xf32>, tensor<4x17x8xf32>, tensor<24x8xf32>) -> (tensor<4x16x24xf32>, tensor<4x16x24xf32>, tensor<4x8xf32>)
  %dx, %dhw, %dh0 = mdl.gru_scan_grad %dh, %g, %n, %h, %w : (tensor<4x17x8xf32>, tensor<4x16x24xf32>, tensor<4x16x8xf32>, tensor<4x17x8xf32>, tensor<24x8xf32>) -> (tensor<4x16x24xf32>, tensor<4x16x24xf32>, tensor<4x8xf32>)
  return
}

// CHECK-LABEL: func.func @update_buffer(
func.func @update_buffer(%s: tensor<4xf32>) {
  // CHECK: mdl.update_buffer %{{.*}}, %{{.*}} : tensor<4xf32>
  mdl.update_buffer %s, %s : tensor<4xf32>
  return
}
