// --mdl-autodiff: the vector-Jacobian products of the neural-network ops
// and losses (NNVJP.cpp): convolution, pooling, layer_norm, embedding,
// cross_entropy, mse_loss, lstm_scan, gru_scan, attention_forward. G is the
// op result's adjoint.
// RUN: modelc-opt %s --mdl-autodiff | FileCheck %s

mdl.param @w : tensor<4x1x2x2xf32> = zeros()
mdl.param @aq : tensor<1x2x3x4xf32> = zeros()
mdl.param @ak : tensor<1x2x5x4xf32> = zeros()
mdl.buffer @amask : tensor<1x1x1x5xi1> {entry = "t", key = "amask", phase = "train", role = "input"}
mdl.param @bias : tensor<4xf32> = zeros()
mdl.param @img : tensor<1x2x5x5xf32> = zeros()
mdl.param @h : tensor<2x3x4xf32> = zeros()
mdl.param @gamma : tensor<4xf32> = zeros()
mdl.param @beta : tensor<4xf32> = zeros()
mdl.param @table : tensor<5x3xf32> = zeros()
mdl.param @logits : tensor<2x3x5xf32> = zeros()
mdl.param @pred : tensor<2x3xf32> = zeros()
mdl.param @target : tensor<2x3xf32> = zeros()
mdl.param @w_hh : tensor<8x2xf32> = zeros()
mdl.param @gru_w_hh : tensor<6x2xf32> = zeros()
mdl.param @gru_b_hh : tensor<6xf32> = zeros()
mdl.buffer @ids : tensor<2x4xi32> {entry = "t", key = "ids", phase = "train", role = "input"}
mdl.buffer @labels : tensor<2x3xi64> {entry = "t", key = "labels", phase = "train", role = "input"}
mdl.buffer @xw : tensor<3x4x8xf32> {entry = "t", key = "xw", phase = "train", role = "input"}
mdl.buffer @h0 : tensor<3x2xf32> {entry = "t", key = "h0", phase = "train", role = "input"}
mdl.buffer @gru_xw : tensor<3x4x6xf32> {entry = "t", key = "gru_xw", phase = "train", role = "input"}
mdl.buffer @loss : tensor<f32> {entry = "t", key = "loss", phase = "train", role = "output"}

// conv2d: the input gets conv2d_grad_input (with the weight), the weight
// conv2d_grad_weight (with the input), both with the forward attributes; the
// bias gets G summed over N, H and W.
// CHECK-LABEL: func.func @conv2d()
// CHECK:      %[[X:.*]] = mdl.param_ref @img
// CHECK-NEXT: %[[W:.*]] = mdl.param_ref @w
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} -> tensor<1x4x3x3xf32>
// CHECK-NEXT: %[[DX:.*]] = mdl.conv2d_grad_input %[[G]], %[[W]] stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<1x4x3x3xf32>, tensor<4x1x2x2xf32> -> tensor<1x2x5x5xf32>
// CHECK-NEXT: %[[DW:.*]] = mdl.conv2d_grad_weight %[[X]], %[[G]] stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<1x2x5x5xf32>, tensor<1x4x3x3xf32> -> tensor<4x1x2x2xf32>
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[G]] axes = [0, 2, 3] : tensor<1x4x3x3xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[OLDB:.*]] = mdl.load @"grad:bias"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DB]]
// CHECK:      %[[OLDW:.*]] = mdl.load @"grad:w"
// CHECK-NEXT: mdl.add %[[OLDW]], %[[DW]]
// CHECK:      %[[OLDX:.*]] = mdl.load @"grad:img"
// CHECK-NEXT: mdl.add %[[OLDX]], %[[DX]]
func.func @conv2d() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @img : tensor<1x2x5x5xf32>
  %w = mdl.param_ref @w : tensor<4x1x2x2xf32>
  %b = mdl.param_ref @bias : tensor<4xf32>
  %y = mdl.conv2d %x, %w, %b stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : tensor<1x2x5x5xf32>, tensor<4x1x2x2xf32>, tensor<4xf32> -> tensor<1x4x3x3xf32>
  %l = mdl.sum %y axes = [0, 1, 2, 3] : tensor<1x4x3x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// conv2d without a bias: two adjoints.
// CHECK-LABEL: func.func @conv2d_no_bias()
// CHECK:      mdl.conv2d_grad_input
// CHECK-NEXT: mdl.conv2d_grad_weight
// CHECK-NEXT: mdl.load @"grad:w"
func.func @conv2d_no_bias() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @img : tensor<1x2x5x5xf32>
  %w = mdl.param_ref @w : tensor<4x1x2x2xf32>
  %y = mdl.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : tensor<1x2x5x5xf32>, tensor<4x1x2x2xf32> -> tensor<1x4x4x4xf32>
  %l = mdl.sum %y axes = [0, 1, 2, 3] : tensor<1x4x4x4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// Pooling: max_pool2d_grad routes G to each window's first maximum of the
// input; avg_pool2d_grad spreads it over the window.
// CHECK-LABEL: func.func @pools()
// CHECK:      %[[X:.*]] = mdl.param_ref @img
// CHECK:      mdl.broadcast_to %{{.*}} -> tensor<1x2x3x3xf32>
// CHECK-NEXT: %[[GM:.*]] = mdl.mul %{{.*}}, %{{.*}} : tensor<1x2x3x3xf32>
// CHECK-NEXT: %[[GA:.*]] = mdl.mul
// CHECK-NEXT: %[[DA:.*]] = mdl.avg_pool2d_grad %[[GA]] kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<1x2x3x3xf32> -> tensor<1x2x5x5xf32>
// CHECK-NEXT: %[[DM:.*]] = mdl.max_pool2d_grad %[[X]], %[[GM]] kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x5x5xf32>
// CHECK-NEXT: %[[DX:.*]] = mdl.add %[[DA]], %[[DM]]
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:img"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DX]]
func.func @pools() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @img : tensor<1x2x5x5xf32>
  %m = mdl.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  %a = mdl.avg_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  %p = mdl.mul %m, %a : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  %l = mdl.sum %p axes = [0, 1, 2, 3] : tensor<1x2x3x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// layer_norm: one mdl.layer_norm_grad of the input, gamma and G, whose
// results are the adjoints of the input, gamma and beta (it recomputes the
// statistics: docs/passes/autodiff.md).
// CHECK-LABEL: func.func @layer_norm()
// CHECK:      %[[X:.*]] = mdl.param_ref @h
// CHECK-NEXT: %[[GAMMA:.*]] = mdl.param_ref @gamma
// CHECK:      %[[G:.*]] = mdl.add %{{.*}}, %{{.*}} : tensor<2x3x4xf32>
// CHECK-NEXT: %[[DX:.*]], %[[DGAMMA:.*]], %[[DBETA:.*]] = mdl.layer_norm_grad %[[X]], %[[GAMMA]], %[[G]] eps = 1.000000e-05 : tensor<2x3x4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[OLDB:.*]] = mdl.load @"grad:beta"
// CHECK-NEXT: mdl.add %[[OLDB]], %[[DBETA]]
// CHECK:      %[[OLDG:.*]] = mdl.load @"grad:gamma"
// CHECK-NEXT: mdl.add %[[OLDG]], %[[DGAMMA]]
// CHECK:      %[[OLDX:.*]] = mdl.load @"grad:h"
// CHECK-NEXT: mdl.add %[[OLDX]], %[[DX]]
func.func @layer_norm() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %x = mdl.param_ref @h : tensor<2x3x4xf32>
  %g = mdl.param_ref @gamma : tensor<4xf32>
  %b = mdl.param_ref @beta : tensor<4xf32>
  %y = mdl.layer_norm %x, %g, %b eps = 1.000000e-05 : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
  %s = mdl.mul %y, %y : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %l = mdl.sum %s axes = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// embedding: embedding_grad scatter-adds G into the table's rows; the
// ids get nothing.
// CHECK-LABEL: func.func @embedding()
// CHECK:      %[[IDS:.*]] = mdl.load @ids
// CHECK:      %[[G:.*]] = mdl.add %{{.*}}, %{{.*}} : tensor<2x4x3xf32>
// CHECK-NEXT: %[[DT:.*]] = mdl.embedding_grad %[[IDS]], %[[G]] : tensor<2x4xi32>, tensor<2x4x3xf32> -> tensor<5x3xf32>
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:table"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DT]]
func.func @embedding() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %t = mdl.param_ref @table : tensor<5x3xf32>
  %ids = mdl.load @ids : tensor<2x4xi32>
  %e = mdl.embedding %ids, %t : tensor<2x4xi32>, tensor<5x3xf32> -> tensor<2x4x3xf32>
  %s = mdl.mul %e, %e : tensor<2x4x3xf32>, tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  %l = mdl.sum %s axes = [0, 1, 2] : tensor<2x4x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// cross_entropy: cross_entropy_grad of the logits with the 0-d adjoint
// (here the seed, the scale) and the ignore index; the labels get nothing.
// CHECK-LABEL: func.func @cross_entropy()
// CHECK:      %[[Z:.*]] = mdl.param_ref @logits
// CHECK-NEXT: %[[LABELS:.*]] = mdl.load @labels
// CHECK:      %[[SEED:.*]] = mdl.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT: %[[DZ:.*]] = mdl.cross_entropy_grad %[[Z]], %[[LABELS]], %[[SEED]] ignore_index = 2 : tensor<2x3x5xf32>, tensor<2x3xi64>, tensor<f32> -> tensor<2x3x5xf32>
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:logits"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DZ]]
func.func @cross_entropy() attributes {mdl.autodiff = {loss = @loss, scale = 2.500000e-01 : f64}} {
  %z = mdl.param_ref @logits : tensor<2x3x5xf32>
  %labels = mdl.load @labels : tensor<2x3xi64>
  %l = mdl.cross_entropy %z, %labels ignore_index = 2 : tensor<2x3x5xf32>, tensor<2x3xi64> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// mse_loss: the input gets 2 / n * (input - target) * G, the target its
// negation.
// CHECK-LABEL: func.func @mse_loss()
// CHECK:      %[[P:.*]] = mdl.param_ref @pred
// CHECK-NEXT: %[[T:.*]] = mdl.param_ref @target
// CHECK:      %[[G:.*]] = mdl.constant dense<1.000000e+00>
// CHECK-NEXT: %[[NORM:.*]] = mdl.constant dense<0.333333343> : tensor<f32>
// CHECK-NEXT: %[[S:.*]] = mdl.mul %[[G]], %[[NORM]]
// CHECK-NEXT: %[[DIFF:.*]] = mdl.sub %[[P]], %[[T]]
// CHECK-NEXT: %[[DP:.*]] = mdl.mul %[[DIFF]], %[[S]]
// CHECK-NEXT: %[[DT:.*]] = mdl.neg %[[DP]]
// CHECK-NEXT: %[[OLDT:.*]] = mdl.load @"grad:target"
// CHECK-NEXT: mdl.add %[[OLDT]], %[[DT]]
// CHECK:      %[[OLDP:.*]] = mdl.load @"grad:pred"
// CHECK-NEXT: mdl.add %[[OLDP]], %[[DP]]
func.func @mse_loss() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %p = mdl.param_ref @pred : tensor<2x3xf32>
  %t = mdl.param_ref @target : tensor<2x3xf32>
  %l = mdl.mse_loss %p, %t : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// lstm_scan: lstm_scan_grad from the adjoints of hidden (here G) and cell
// (none: zeros) with the saved gates and cells; weight_hh gets the sum over
// the steps of dpre^T h, one matrix product of the input gradient [b t, 4h]
// transposed and the states the steps read, hidden[:, 0:t].
// CHECK-LABEL: func.func @lstm()
// CHECK:      %[[W:.*]] = mdl.param_ref @w_hh
// CHECK:      %{{.*}}, %[[C:.*]], %[[GATES:.*]] = mdl.lstm_scan
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1x1xf32> -> tensor<3x5x2xf32>
// CHECK-NEXT: %[[Z:.*]] = mdl.constant dense<0.000000e+00> : tensor<3x5x2xf32>
// CHECK-NEXT: %[[DX:.*]], %{{.*}}, %{{.*}} = mdl.lstm_scan_grad %[[G]], %[[Z]], %[[GATES]], %[[C]], %[[W]]
// CHECK-NEXT: %[[READ:.*]] = mdl.slice %{{.*}} starts = [0, 0, 0] limits = [3, 4, 2] strides = [1, 1, 1] : tensor<3x5x2xf32> -> tensor<3x4x2xf32>
// CHECK-NEXT: %[[R:.*]] = mdl.reshape %[[READ]] : tensor<3x4x2xf32> -> tensor<12x2xf32>
// CHECK-NEXT: %[[D:.*]] = mdl.reshape %[[DX]] : tensor<3x4x8xf32> -> tensor<12x8xf32>
// CHECK-NEXT: %[[DT:.*]] = mdl.transpose %[[D]] perm = [1, 0] : tensor<12x8xf32> -> tensor<8x12xf32>
// CHECK-NEXT: %[[DW:.*]] = mdl.matmul %[[DT]], %[[R]] : tensor<8x12xf32>, tensor<12x2xf32> -> tensor<8x2xf32>
// CHECK-NEXT: %[[OLD:.*]] = mdl.load @"grad:w_hh"
// CHECK-NEXT: mdl.add %[[OLD]], %[[DW]]
func.func @lstm() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @w_hh : tensor<8x2xf32>
  %x = mdl.load @xw : tensor<3x4x8xf32>
  %h0 = mdl.load @h0 : tensor<3x2xf32>
  %h, %c, %g = mdl.lstm_scan %x, %w, %h0, %h0 : (tensor<3x4x8xf32>, tensor<8x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> (tensor<3x5x2xf32>, tensor<3x5x2xf32>, tensor<3x4x8xf32>)
  %l = mdl.sum %h axes = [0, 1, 2] : tensor<3x5x2xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// gru_scan: gru_scan_grad gives the input's and the recurrent
// pre-activation's gradients; weight_hh gets dhw^T hidden[:, 0:t] (one
// matmul), bias_hh the sum of dhw over the batch and the steps.
// CHECK-LABEL: func.func @gru()
// CHECK:      %[[W:.*]] = mdl.param_ref @gru_w_hh
// CHECK:      %[[H:.*]], %[[GATES:.*]], %[[N:.*]] = mdl.gru_scan
// CHECK:      %[[G:.*]] = mdl.broadcast_to %{{.*}} : tensor<1x1x1xf32> -> tensor<3x5x2xf32>
// CHECK-NEXT: %{{.*}}, %[[DHW:.*]], %{{.*}} = mdl.gru_scan_grad %[[G]], %[[GATES]], %[[N]], %[[H]], %[[W]]
// CHECK-NEXT: %[[READ:.*]] = mdl.slice %[[H]] starts = [0, 0, 0] limits = [3, 4, 2] strides = [1, 1, 1] : tensor<3x5x2xf32> -> tensor<3x4x2xf32>
// CHECK-NEXT: %[[D:.*]] = mdl.reshape %[[DHW]] : tensor<3x4x6xf32> -> tensor<12x6xf32>
// CHECK-NEXT: %[[R:.*]] = mdl.reshape %[[READ]] : tensor<3x4x2xf32> -> tensor<12x2xf32>
// CHECK-NEXT: %[[DT:.*]] = mdl.transpose %[[D]] perm = [1, 0] : tensor<12x6xf32> -> tensor<6x12xf32>
// CHECK-NEXT: %[[DW:.*]] = mdl.matmul %[[DT]], %[[R]] : tensor<6x12xf32>, tensor<12x2xf32> -> tensor<6x2xf32>
// CHECK-NEXT: %[[DB:.*]] = mdl.sum %[[D]] axes = [0] : tensor<12x6xf32> -> tensor<6xf32>
// CHECK:      mdl.add %{{.*}}, %[[DB]]
// CHECK:      mdl.add %{{.*}}, %[[DW]]
func.func @gru() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %w = mdl.param_ref @gru_w_hh : tensor<6x2xf32>
  %b = mdl.param_ref @gru_b_hh : tensor<6xf32>
  %x = mdl.load @gru_xw : tensor<3x4x6xf32>
  %h0 = mdl.load @h0 : tensor<3x2xf32>
  %h, %g, %n = mdl.gru_scan %x, %w, %b, %h0 : (tensor<3x4x6xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<3x2xf32>) -> (tensor<3x5x2xf32>, tensor<3x4x6xf32>, tensor<3x4x2xf32>)
  %l = mdl.sum %h axes = [0, 1, 2] : tensor<3x5x2xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}

// attention_forward: one attention_backward from the operands, the result,
// its adjoint and the saved log-sum-exp, with the forward's mask, causal
// flag, scale and dropout; the mask gets no adjoint. Key and value are the
// same parameter: both adjoints add into its gradient.
// CHECK-LABEL: func.func @attention()
// CHECK:      %[[Q:.*]] = mdl.param_ref @aq
// CHECK-NEXT: %[[K:.*]] = mdl.param_ref @ak
// CHECK-NEXT: %[[M:.*]] = mdl.load @amask
// CHECK-NEXT: %[[O:.*]], %[[L:.*]] = mdl.attention_forward %[[Q]], %[[K]], %[[K]] mask %[[M]]
// CHECK:      %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = mdl.attention_backward %[[Q]], %[[K]], %[[K]], %[[O]], %{{.*}}, %[[L]] mask %[[M]] : tensor<1x1x1x5xi1> causal scale = 5.000000e-01 : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32> -> tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>
// CHECK-DAG:  mdl.add %[[DK]], %[[DV]]
// CHECK-DAG:  mdl.load @"grad:aq"
func.func @attention() attributes {mdl.autodiff = {loss = @loss, scale = 1.000000e+00 : f64}} {
  %q = mdl.param_ref @aq : tensor<1x2x3x4xf32>
  %k = mdl.param_ref @ak : tensor<1x2x5x4xf32>
  %m = mdl.load @amask : tensor<1x1x1x5xi1>
  %o, %lse = mdl.attention_forward %q, %k, %k mask %m : tensor<1x1x1x5xi1> causal scale = 0.5 : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x3x4xf32>, tensor<1x2x3xf32>
  %l = mdl.sum %o axes = [0, 1, 2, 3] : tensor<1x2x3x4xf32> -> tensor<f32>
  mdl.store %l, @loss : tensor<f32>
  return
}
