// --mdl-decompose expands the composite ops (attention, rms_norm, nll_loss,
// bce_with_logits, batch_norm, conv_transpose2d), dropout and the buffer
// updates in the program functions.
// RUN: modelc-opt %s --split-input-file --mdl-decompose --verify-diagnostics | FileCheck %s

// attention becomes the fused mdl.attention_forward (its log-sum-exp in
// f32 for f32 and 16-bit inputs), with its scale, causal flag, d != dv and
// t != s; nothing of shape [t, s] appears.

// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<2x3x4x8xf32>, %[[K:[^:]*]]: tensor<2x3x5x8xf32>, %[[V:[^:]*]]: tensor<2x3x5x6xf32>
// CHECK-NEXT: %[[O:.*]], %{{.*}} = mdl.attention_forward %[[Q]], %[[K]], %[[V]] scale = 2.500000e-01 : tensor<2x3x4x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x6xf32> -> tensor<2x3x4x6xf32>, tensor<2x3x4xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: mdl.attention %
func.func @plain(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x5x8xf32>, %v: tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %o = mdl.attention %q, %k, %v scale = 0.25 : tensor<2x3x4x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x6xf32> -> tensor<2x3x4x6xf32>
  return %o : tensor<2x3x4x6xf32>
}

// -----

// CHECK-LABEL: func.func @causal(
// CHECK-NEXT: %[[O:.*]], %{{.*}} = mdl.attention_forward %{{.*}}, %{{.*}}, %{{.*}} causal scale = 0.35355339059327373 : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>, tensor<1x2x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @causal(%q: tensor<1x2x4x8xbf16>, %k: tensor<1x2x4x8xbf16>, %v: tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xbf16> {
  %o = mdl.attention %q, %k, %v causal scale = 0.35355339059327373 : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16> -> tensor<1x2x4x8xbf16>
  return %o : tensor<1x2x4x8xbf16>
}

// -----

// Dropout in a fwd_bwd function: input * mask, the seed and counter loaded
// once at the top, one id per dropout; p = 0 is the input itself.
// Elsewhere (eval, infer) every dropout is its input. Inside the entry
// declarations nothing changes.

mdl.buffer @"t:hyper:seed" : tensor<f64> {entry = "t", key = "seed", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:rng_counter" : tensor<f64> {entry = "t", key = "rng_counter", phase = "train", role = "hyper"}
mdl.buffer @"t:in:x" : tensor<2x4xf32> {entry = "t", key = "x", phase = "train", role = "input"}
mdl.buffer @"t:out:loss" : tensor<2x4xf32> {entry = "t", key = "loss", phase = "train", role = "output"}
mdl.buffer @"u:hyper:seed" : tensor<f64> {entry = "u", key = "seed", phase = "train", role = "hyper"}
mdl.buffer @"u:hyper:rng_counter" : tensor<f64> {entry = "u", key = "rng_counter", phase = "train", role = "hyper"}

// CHECK-LABEL: func.func @t.fwd_bwd()
// CHECK-NEXT: %[[SEED:.*]] = mdl.load @"t:hyper:seed" : tensor<f64>
// CHECK-NEXT: %[[COUNTER:.*]] = mdl.load @"t:hyper:rng_counter" : tensor<f64>
// CHECK-NEXT: %[[X:.*]] = mdl.load @"t:in:x"
// CHECK-NEXT: %[[M0:.*]] = mdl.dropout_mask %[[SEED]], %[[COUNTER]] p = 1.000000e-01 id = 0 : tensor<f64>, tensor<f64> -> tensor<2x4xf32>
// CHECK-NEXT: %[[D0:.*]] = mdl.mul %[[X]], %[[M0]] : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[M1:.*]] = mdl.dropout_mask %[[SEED]], %[[COUNTER]] p = 5.000000e-01 id = 1
// CHECK-NEXT: %[[D1:.*]] = mdl.mul %[[D0]], %[[M1]]
// CHECK-NEXT: %[[E:.*]] = mdl.exp %[[D1]]
// CHECK-NEXT: mdl.store %[[E]], @"t:out:loss"
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %x = mdl.load @"t:in:x" : tensor<2x4xf32>
  %a = mdl.dropout %x p = 0.1 : tensor<2x4xf32>
  %b = mdl.dropout %a p = 0.5 : tensor<2x4xf32>
  %c = mdl.dropout %b p = 0.0 : tensor<2x4xf32>
  %e = mdl.exp %c : tensor<2x4xf32>
  mdl.store %e, @"t:out:loss" : tensor<2x4xf32>
  return
}

// CHECK-LABEL: func.func @t.eval()
// CHECK-NEXT: %[[X:.*]] = mdl.load @"t:in:x"
// CHECK-NEXT: %[[E:.*]] = mdl.exp %[[X]]
// CHECK-NEXT: mdl.store %[[E]], @"t:out:loss"
func.func @t.eval() attributes {mdl.entry = "t", mdl.function = "eval"} {
  %x = mdl.load @"t:in:x" : tensor<2x4xf32>
  %a = mdl.dropout %x p = 0.1 : tensor<2x4xf32>
  %e = mdl.exp %a : tensor<2x4xf32>
  mdl.store %e, @"t:out:loss" : tensor<2x4xf32>
  return
}

// CHECK-LABEL: func.func @i.infer()
// CHECK-NOT: mdl.dropout
// CHECK: return
func.func @i.infer() attributes {mdl.entry = "i", mdl.function = "infer"} {
  %x = mdl.load @"t:in:x" : tensor<2x4xf32>
  %a = mdl.dropout %x p = 0.1 : tensor<2x4xf32>
  mdl.store %a, @"t:out:loss" : tensor<2x4xf32>
  return
}

// A second fwd_bwd continues the ids and reads its own entry's hypers.
// CHECK-LABEL: func.func @u.fwd_bwd()
// CHECK-NEXT: %[[SEED:.*]] = mdl.load @"u:hyper:seed"
// CHECK-NEXT: %[[COUNTER:.*]] = mdl.load @"u:hyper:rng_counter"
// CHECK: mdl.dropout_mask %[[SEED]], %[[COUNTER]] p = 2.000000e-01 id = 2
func.func @u.fwd_bwd() attributes {mdl.entry = "u", mdl.function = "fwd_bwd"} {
  %x = mdl.load @"t:in:x" : tensor<2x4xf32>
  %a = mdl.dropout %x p = 0.2 : tensor<2x4xf32>
  mdl.store %a, @"t:out:loss" : tensor<2x4xf32>
  return
}

// CHECK-LABEL: mdl.infer @decl
// CHECK-NEXT: ^bb0
// CHECK-NEXT: mdl.dropout
// CHECK-NEXT: mdl.attention
mdl.infer @decl inputs ["x"] outputs ["y"] {
^bb0(%x: tensor<1x1x2x2xf32>):
  %a = mdl.dropout %x p = 0.1 : tensor<1x1x2x2xf32>
  %o = mdl.attention %a, %a, %a scale = 1.0 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x1x2x2xf32>
  mdl.yield %o : tensor<1x1x2x2xf32>
}

// -----

// A fwd_bwd without p = 0 dropouts needs no hypers; with one, it needs them.

mdl.buffer @"t:in:x" : tensor<2xf32> {entry = "t", key = "x", phase = "train", role = "input"}
// expected-error @below {{dropout needs the hyper buffer @"t:hyper:seed"}}
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %x = mdl.load @"t:in:x" : tensor<2xf32>
  %a = mdl.dropout %x p = 0.1 : tensor<2xf32>
  mdl.store %a, @"t:in:x" : tensor<2xf32>
  return
}

// -----

// rms_norm over the last axis as ATen's composite: x * rsqrt(mean(x^2) + eps)
// * weight, in the input's type when it is f32.

// CHECK-LABEL: func.func @rms_norm(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x3x8xf32>, %[[W:[^:]*]]: tensor<8xf32>
// CHECK-NEXT: %[[TWO:.*]] = mdl.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[SQ:.*]] = mdl.pow %[[X]], %[[TWO]] : tensor<2x3x8xf32>, tensor<f32> -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[MS:.*]] = mdl.mean %[[SQ]] axes = [2] keepdim : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT: %[[EPS:.*]] = mdl.constant dense<9.99999974E-6> : tensor<f32>
// CHECK-NEXT: %[[SUM:.*]] = mdl.add %[[MS]], %[[EPS]]
// CHECK-NEXT: %[[INV:.*]] = mdl.rsqrt %[[SUM]] : tensor<2x3x1xf32>
// CHECK-NEXT: %[[N:.*]] = mdl.mul %[[X]], %[[INV]] : tensor<2x3x8xf32>, tensor<2x3x1xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT: %[[Y:.*]] = mdl.mul %[[N]], %[[W]] : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %y = mdl.rms_norm %x, %w eps = 1.0e-5 : tensor<2x3x8xf32>, tensor<8xf32> -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// A bf16 input is extended to f32 (opmath) and the normalised value rounded
// back before the weight; eps is rounded to bf16 first, as ATen's scalar_t.

// CHECK-LABEL: func.func @rms_norm_bf16(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xbf16>, %[[W:[^:]*]]: tensor<8xbf16>
// CHECK-NEXT: %[[X32:.*]] = mdl.cast %[[X]] : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK-NEXT: mdl.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[SQ:.*]] = mdl.pow %[[X32]]
// CHECK-NEXT: %[[MS:.*]] = mdl.mean %[[SQ]] axes = [1] keepdim
// CHECK-NEXT: %[[EPS:.*]] = mdl.constant dense<1.00135803E-5> : tensor<f32>
// CHECK-NEXT: %[[SUM:.*]] = mdl.add %[[MS]], %[[EPS]]
// CHECK-NEXT: %[[INV:.*]] = mdl.rsqrt %[[SUM]]
// CHECK-NEXT: %[[N:.*]] = mdl.mul %[[X32]], %[[INV]]
// CHECK-NEXT: %[[N16:.*]] = mdl.cast %[[N]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT: %[[Y:.*]] = mdl.mul %[[N16]], %[[W]] : tensor<4x8xbf16>, tensor<8xbf16> -> tensor<4x8xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm_bf16(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>) -> tensor<4x8xbf16> {
  %y = mdl.rms_norm %x, %w eps = 1.0e-5 : tensor<4x8xbf16>, tensor<8xbf16> -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// Without a weight, the normalised value is the result.

// CHECK-LABEL: func.func @rms_norm_plain(
// CHECK: %[[N:.*]] = mdl.mul
// CHECK-NEXT: return %[[N]]
// CHECK-NOT: mdl.rms_norm
func.func @rms_norm_plain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = mdl.rms_norm %x eps = 0.0 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// nll_loss: the label picks its class through a one-hot mask (labels as
// i64 against arange), the mean over the labels that are not ignore_index.

// CHECK-LABEL: func.func @nll_loss(
// CHECK-SAME: %[[LP:[^:]*]]: tensor<4x5xf32>, %[[Y:[^:]*]]: tensor<4xi32>
// CHECK-NEXT: %[[Y64:.*]] = mdl.cast %[[Y]] : tensor<4xi32> -> tensor<4xi64>
// CHECK-NEXT: %[[C:.*]] = mdl.arange : tensor<5xi64>
// CHECK-NEXT: %[[COL:.*]] = mdl.reshape %[[Y64]] : tensor<4xi64> -> tensor<4x1xi64>
// CHECK-NEXT: %[[HOT:.*]] = mdl.compare eq, %[[COL]], %[[C]] : tensor<4x1xi64>, tensor<5xi64> -> tensor<4x5xi1>
// CHECK-NEXT: %[[ZERO:.*]] = mdl.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[SEL:.*]] = mdl.where %[[HOT]], %[[LP]], %[[ZERO]]
// CHECK-NEXT: %[[PICK:.*]] = mdl.sum %[[SEL]] axes = [1] : tensor<4x5xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[IGN:.*]] = mdl.constant dense<-100> : tensor<i64>
// CHECK-NEXT: %[[KEPT:.*]] = mdl.compare ne, %[[Y64]], %[[IGN]] : tensor<4xi64>, tensor<i64> -> tensor<4xi1>
// CHECK-NEXT: %[[KF:.*]] = mdl.cast %[[KEPT]] : tensor<4xi1> -> tensor<4xf32>
// CHECK-NEXT: %[[COUNT:.*]] = mdl.sum %[[KF]] axes = [0]
// CHECK-NEXT: %[[KP:.*]] = mdl.where %[[KEPT]], %[[PICK]], %[[ZERO]]
// CHECK-NEXT: %[[TOTAL:.*]] = mdl.sum %[[KP]] axes = [0]
// CHECK-NEXT: %[[NEG:.*]] = mdl.neg %[[TOTAL]]
// CHECK-NEXT: %[[L:.*]] = mdl.div %[[NEG]], %[[COUNT]]
// CHECK-NEXT: return %[[L]]
func.func @nll_loss(%lp: tensor<4x5xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %l = mdl.nll_loss %lp, %y ignore_index = -100 label_smoothing = 0.0 : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// With label smoothing e (cross_entropy's): (1 - e) * nll + e / C * the
// mean of -sum(lp, -1) over the kept rows; bf16 log-probabilities in f32.

// CHECK-LABEL: func.func @nll_loss_smoothed(
// CHECK: %[[LP32:.*]] = mdl.cast %{{.*}} : tensor<4x5xbf16> -> tensor<4x5xf32>
// CHECK: %[[NLL:.*]] = mdl.div
// CHECK-NEXT: %[[ROW:.*]] = mdl.sum %[[LP32]] axes = [1] : tensor<4x5xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[NROW:.*]] = mdl.neg %[[ROW]]
// CHECK-NEXT: %[[KR:.*]] = mdl.where %{{.*}}, %[[NROW]], %{{.*}}
// CHECK-NEXT: %[[S:.*]] = mdl.sum %[[KR]] axes = [0]
// CHECK-NEXT: %[[SMOOTH:.*]] = mdl.div %[[S]], %{{.*}}
// CHECK-NEXT: %[[A:.*]] = mdl.constant dense<0.899999976> : tensor<f32>
// CHECK-NEXT: %[[MA:.*]] = mdl.mul %[[NLL]], %[[A]]
// CHECK-NEXT: %[[B:.*]] = mdl.constant dense<2.000000e-02> : tensor<f32>
// CHECK-NEXT: %[[MB:.*]] = mdl.mul %[[SMOOTH]], %[[B]]
// CHECK-NEXT: %[[L:.*]] = mdl.add %[[MA]], %[[MB]]
// CHECK-NEXT: return %[[L]]
func.func @nll_loss_smoothed(%lp: tensor<4x5xbf16>, %y: tensor<4xi64>) -> tensor<f32> {
  %l = mdl.nll_loss %lp, %y ignore_index = -1 label_smoothing = 0.1 : tensor<4x5xbf16>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// binary_cross_entropy_with_logits: (1 - t) * x - w * log_sigmoid(x),
// log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)) with log1p written out,
// w = (pos_weight - 1) * t + 1; the mean over all elements.

// CHECK-LABEL: func.func @bce_with_logits(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32>, %[[T:[^:]*]]: tensor<4x3xf32>, %[[PW:[^:]*]]: tensor<3xf32>
// CHECK: %[[NEG:.*]] = mdl.compare lt, %[[X]]
// CHECK-NEXT: %[[MIN:.*]] = mdl.where %[[NEG]], %[[X]]
// CHECK-NEXT: %[[ABS:.*]] = mdl.abs %[[X]]
// CHECK-NEXT: %[[NABS:.*]] = mdl.neg %[[ABS]]
// CHECK-NEXT: %[[U:.*]] = mdl.exp %[[NABS]]
// CHECK-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[W:.*]] = mdl.add %[[ONE]], %[[U]]
// CHECK-NEXT: %[[EXACT:.*]] = mdl.compare eq, %[[W]], %[[ONE]]
// CHECK-NEXT: %[[WM1:.*]] = mdl.sub %[[W]], %[[ONE]]
// CHECK-NEXT: %[[DIV:.*]] = mdl.where %[[EXACT]], %[[ONE]], %[[WM1]]
// CHECK-NEXT: %[[LOGW:.*]] = mdl.log %[[W]]
// CHECK-NEXT: %[[P:.*]] = mdl.mul %[[LOGW]], %[[U]]
// CHECK-NEXT: %[[Q:.*]] = mdl.div %[[P]], %[[DIV]]
// CHECK-NEXT: %[[LOG1P:.*]] = mdl.where %[[EXACT]], %[[U]], %[[Q]]
// CHECK-NEXT: %[[LS:.*]] = mdl.sub %[[MIN]], %[[LOG1P]]
// CHECK: %[[PWM1:.*]] = mdl.sub %[[PW]]
// CHECK-NEXT: %[[PT:.*]] = mdl.mul %[[PWM1]], %[[T]]
// CHECK-NEXT: %[[LW:.*]] = mdl.add %[[PT]]
// CHECK-NEXT: %[[WLS:.*]] = mdl.mul %[[LS]], %[[LW]]
// CHECK: %[[OMT:.*]] = mdl.sub %{{.*}}, %[[T]]
// CHECK-NEXT: %[[OMTX:.*]] = mdl.mul %[[OMT]], %[[X]]
// CHECK-NEXT: %[[E:.*]] = mdl.sub %[[OMTX]], %[[WLS]]
// CHECK-NEXT: %[[L:.*]] = mdl.mean %[[E]] axes = [0, 1] : tensor<4x3xf32> -> tensor<f32>
// CHECK-NEXT: return %[[L]]
// CHECK-NOT: mdl.bce_with_logits
func.func @bce_with_logits(%x: tensor<4x3xf32>, %t: tensor<4x3xf32>, %pw: tensor<3xf32>) -> tensor<f32> {
  %l = mdl.bce_with_logits %x, %t, %pw : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The mask stays an operand of the fused op; attention dropout draws from
// the seed and counter in a fwd_bwd function, with an id of its own after
// the dropouts' (as a dropout mask would), and is dropped elsewhere.

mdl.buffer @"t:hyper:seed" : tensor<f64> {entry = "t", key = "seed", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:rng_counter" : tensor<f64> {entry = "t", key = "rng_counter", phase = "train", role = "hyper"}
mdl.buffer @"t:in:q" : tensor<2x1x3x4xf32> {entry = "t", key = "q", phase = "train", role = "input"}
mdl.buffer @"t:in:m" : tensor<2x1x1x3xi1> {entry = "t", key = "m", phase = "train", role = "input"}
mdl.buffer @"t:out:loss" : tensor<2x1x3x4xf32> {entry = "t", key = "loss", phase = "train", role = "output"}

// CHECK-LABEL: func.func @t.fwd_bwd()
// CHECK-NEXT: %[[SEED:.*]] = mdl.load @"t:hyper:seed"
// CHECK-NEXT: %[[COUNTER:.*]] = mdl.load @"t:hyper:rng_counter"
// CHECK-NEXT: %[[Q:.*]] = mdl.load @"t:in:q"
// CHECK-NEXT: %[[M:.*]] = mdl.load @"t:in:m"
// CHECK-NEXT: %[[O:.*]], %{{.*}} = mdl.attention_forward %[[Q]], %[[Q]], %[[Q]] mask %[[M]] : tensor<2x1x1x3xi1> rng(%[[SEED]], %[[COUNTER]] : tensor<f64>, tensor<f64>) causal scale = 5.000000e-01 dropout = 2.500000e-01 : tensor<2x1x3x4xf32>, tensor<2x1x3x4xf32>, tensor<2x1x3x4xf32> -> tensor<2x1x3x4xf32>, tensor<2x1x3xf32>
// CHECK-NEXT: mdl.store %[[O]]
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %q = mdl.load @"t:in:q" : tensor<2x1x3x4xf32>
  %m = mdl.load @"t:in:m" : tensor<2x1x1x3xi1>
  %o = mdl.attention %q, %q, %q mask %m causal scale = 0.5 dropout = 0.25 : tensor<2x1x3x4xf32>, tensor<2x1x3x4xf32>, tensor<2x1x3x4xf32>, tensor<2x1x1x3xi1> -> tensor<2x1x3x4xf32>
  mdl.store %o, @"t:out:loss" : tensor<2x1x3x4xf32>
  return
}

// CHECK-LABEL: func.func @t.eval()
// CHECK: mdl.attention_forward %{{.*}}, %{{.*}}, %{{.*}} scale = 5.000000e-01 :
// CHECK-NOT: dropout
func.func @t.eval() attributes {mdl.entry = "t", mdl.function = "eval"} {
  %q = mdl.load @"t:in:q" : tensor<2x1x3x4xf32>
  %o = mdl.attention %q, %q, %q scale = 0.5 dropout = 0.25 : tensor<2x1x3x4xf32>, tensor<2x1x3x4xf32>, tensor<2x1x3x4xf32> -> tensor<2x1x3x4xf32>
  mdl.store %o, @"t:out:loss" : tensor<2x1x3x4xf32>
  return
}

// -----

// Dropout ids follow program order, whichever kind each site is: a dropout,
// an attention that drops, another dropout.
mdl.buffer @"t:hyper:seed" : tensor<f64> {entry = "t", key = "seed", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:rng_counter" : tensor<f64> {entry = "t", key = "rng_counter", phase = "train", role = "hyper"}
mdl.buffer @"t:in:q" : tensor<1x1x3x4xf32> {entry = "t", key = "q", phase = "train", role = "input"}
mdl.buffer @"t:out:loss" : tensor<1x1x3x4xf32> {entry = "t", key = "loss", phase = "train", role = "output"}

// CHECK-LABEL: func.func @t.fwd_bwd()
// CHECK: mdl.dropout_mask {{.*}} p = 1.000000e-01 id = 0
// CHECK: mdl.attention_forward {{.*}} dropout = 2.000000e-01 id = 1
// CHECK: mdl.dropout_mask {{.*}} p = 3.000000e-01 id = 2
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %q = mdl.load @"t:in:q" : tensor<1x1x3x4xf32>
  %a = mdl.dropout %q p = 0.1 : tensor<1x1x3x4xf32>
  %o = mdl.attention %a, %a, %a scale = 0.5 dropout = 0.2 : tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32> -> tensor<1x1x3x4xf32>
  %b = mdl.dropout %o p = 0.3 : tensor<1x1x3x4xf32>
  mdl.store %b, @"t:out:loss" : tensor<1x1x3x4xf32>
  return
}

// -----

// batch_norm in training (fwd_bwd): the batch mean and biased variance over
// every axis but 1 normalise; the running statistics (buffers) become
// momentum * batch + (1 - momentum) * running, with the unbiased variance
// (the sum of squares over n - 1 = 2 * 3 - 1), and num_batches_tracked + 1.

// CHECK-LABEL: func.func @t.fwd_bwd()
// CHECK: %[[X:.*]] = mdl.load @x
// CHECK: %[[RM:.*]] = mdl.load @bn.running_mean
// CHECK: %[[RV:.*]] = mdl.load @bn.running_var
// CHECK: %[[N:.*]] = mdl.load @bn.num_batches_tracked
// Constants are f64 cast to x's type (exact under --widen-f64).
// CHECK-NEXT: %[[EPS64:.*]] = mdl.constant dense<1.000000e-05> : tensor<f64>
// CHECK-NEXT: %[[EPS:.*]] = mdl.cast %[[EPS64]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: %[[MEAN:.*]] = mdl.mean %[[X]] axes = [0, 2] : tensor<2x4x3xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[MEAN3:.*]] = mdl.reshape %[[MEAN]] : tensor<4xf32> -> tensor<1x4x1xf32>
// CHECK-NEXT: %[[C:.*]] = mdl.sub %[[X]], %[[MEAN3]]
// CHECK-NEXT: %[[SQ:.*]] = mdl.mul %[[C]], %[[C]]
// CHECK-NEXT: %[[SS:.*]] = mdl.sum %[[SQ]] axes = [0, 2] : tensor<2x4x3xf32> -> tensor<4xf32>
// CHECK-NEXT: mdl.constant dense<6.000000e+00> : tensor<f64>
// CHECK-NEXT: %[[SIX:.*]] = mdl.cast
// CHECK-NEXT: %[[VAR:.*]] = mdl.div %[[SS]], %[[SIX]]
// CHECK-NEXT: %[[VE:.*]] = mdl.add %[[VAR]], %[[EPS]]
// CHECK-NEXT: %[[INV:.*]] = mdl.rsqrt %[[VE]]
// CHECK-NEXT: mdl.constant dense<1.000000e-01> : tensor<f64>
// CHECK-NEXT: %[[M:.*]] = mdl.cast
// CHECK-NEXT: %[[FRESH:.*]] = mdl.mul %[[M]], %[[MEAN]]
// CHECK-NEXT: mdl.constant dense<9.000000e-01> : tensor<f64>
// CHECK-NEXT: %[[KEEP:.*]] = mdl.cast
// CHECK-NEXT: %[[KEPT:.*]] = mdl.mul %[[KEEP]], %[[RM]]
// CHECK-NEXT: %[[NEWRM:.*]] = mdl.add %[[FRESH]], %[[KEPT]]
// CHECK-NEXT: mdl.constant dense<5.000000e+00> : tensor<f64>
// CHECK-NEXT: %[[FIVE:.*]] = mdl.cast
// CHECK-NEXT: %[[UNB:.*]] = mdl.div %[[SS]], %[[FIVE]]
// CHECK: %[[FRESHV:.*]] = mdl.mul %{{.*}}, %[[UNB]]
// CHECK: %[[KEPTV:.*]] = mdl.mul %{{.*}}, %[[RV]]
// CHECK-NEXT: %[[NEWRV:.*]] = mdl.add %[[FRESHV]], %[[KEPTV]]
// CHECK-NEXT: %[[ONE:.*]] = mdl.constant dense<1> : tensor<i64>
// CHECK-NEXT: %[[N1:.*]] = mdl.add %[[N]], %[[ONE]]
// CHECK-NEXT: mdl.store %[[NEWRM]], @bn.running_mean : tensor<4xf32>
// CHECK-NEXT: mdl.store %[[NEWRV]], @bn.running_var : tensor<4xf32>
// CHECK-NEXT: mdl.store %[[N1]], @bn.num_batches_tracked : tensor<i64>
// CHECK-NEXT: %[[INV3:.*]] = mdl.reshape %[[INV]]
// CHECK-NEXT: %[[NORM:.*]] = mdl.mul %[[C]], %[[INV3]]
// CHECK-NEXT: %[[W3:.*]] = mdl.reshape %{{.*}} : tensor<4xf32> -> tensor<1x4x1xf32>
// CHECK-NEXT: %[[SC:.*]] = mdl.mul %[[NORM]], %[[W3]]
// CHECK-NEXT: %[[B3:.*]] = mdl.reshape %{{.*}} : tensor<4xf32> -> tensor<1x4x1xf32>
// CHECK-NEXT: %[[Y:.*]] = mdl.add %[[SC]], %[[B3]]
// CHECK-NEXT: mdl.store %[[Y]], @y
// CHECK-NOT: mdl.batch_norm

// In eval, the running statistics normalise and nothing is stored.
// CHECK-LABEL: func.func @t.eval()
// CHECK: %[[X:.*]] = mdl.load @x
// CHECK: %[[RM:.*]] = mdl.load @bn.running_mean
// CHECK: %[[RV:.*]] = mdl.load @bn.running_var
// CHECK: %[[RM3:.*]] = mdl.reshape %[[RM]] : tensor<4xf32> -> tensor<1x4x1xf32>
// CHECK-NEXT: %[[C:.*]] = mdl.sub %[[X]], %[[RM3]]
// CHECK-NEXT: %[[VE:.*]] = mdl.add %[[RV]], %{{.*}}
// CHECK-NEXT: mdl.rsqrt %[[VE]]
// CHECK-NOT: mdl.store %{{.*}}, @bn.
// CHECK: return
mdl.param @"bn.weight" : tensor<4xf32> = ones()
mdl.param @"bn.bias" : tensor<4xf32> = zeros()
mdl.param buffer @"bn.running_mean" : tensor<4xf32> = zeros()
mdl.param buffer @"bn.running_var" : tensor<4xf32> = ones()
mdl.param buffer @"bn.num_batches_tracked" : tensor<i64> = zeros()
mdl.buffer @x : tensor<2x4x3xf32> {entry = "t", key = "x", phase = "train", role = "input"}
mdl.buffer @y : tensor<2x4x3xf32> {entry = "t", key = "y", phase = "train", role = "output"}
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %x = mdl.load @x : tensor<2x4x3xf32>
  %w = mdl.param_ref @"bn.weight" : tensor<4xf32>
  %b = mdl.param_ref @"bn.bias" : tensor<4xf32>
  %rm = mdl.load @"bn.running_mean" : tensor<4xf32>
  %rv = mdl.load @"bn.running_var" : tensor<4xf32>
  %n = mdl.load @"bn.num_batches_tracked" : tensor<i64>
  %y = mdl.batch_norm %x, %w, %b running %rm, %rv tracked %n momentum = 0.1 eps = 1.0e-5 : tensor<2x4x3xf32>, tensor<4xf32>, tensor<i64> -> tensor<2x4x3xf32>
  mdl.store %y, @y : tensor<2x4x3xf32>
  return
}
func.func @t.eval() attributes {mdl.entry = "t", mdl.function = "eval"} {
  %x = mdl.load @x : tensor<2x4x3xf32>
  %w = mdl.param_ref @"bn.weight" : tensor<4xf32>
  %b = mdl.param_ref @"bn.bias" : tensor<4xf32>
  %rm = mdl.load @"bn.running_mean" : tensor<4xf32>
  %rv = mdl.load @"bn.running_var" : tensor<4xf32>
  %y = mdl.batch_norm %x, %w, %b running %rm, %rv momentum = 0.1 eps = 1.0e-5 : tensor<2x4x3xf32>, tensor<4xf32> -> tensor<2x4x3xf32>
  mdl.store %y, @y : tensor<2x4x3xf32>
  return
}

// -----

// Training stores the running statistics into buffers: a parameter (or any
// other value) there is refused.
mdl.param @w : tensor<4xf32> = ones()
mdl.param @rm : tensor<4xf32> = zeros()
mdl.buffer @x : tensor<2x4xf32> {entry = "t", key = "x", phase = "train", role = "input"}
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %x = mdl.load @x : tensor<2x4xf32>
  %w = mdl.param_ref @w : tensor<4xf32>
  %rm = mdl.param_ref @rm : tensor<4xf32>
  // expected-error @+1 {{running_mean must be read from a buffer}}
  %y = mdl.batch_norm %x, %w, %w running %rm, %w momentum = 0.1 eps = 1.0e-5 : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  mdl.store %y, @x : tensor<2x4xf32>
  return
}

// -----

// One value per channel cannot be normalised in training (as PyTorch).
mdl.param @w : tensor<4xf32> = ones()
mdl.param buffer @rm : tensor<4xf32> = zeros()
mdl.buffer @x : tensor<1x4xf32> {entry = "t", key = "x", phase = "train", role = "input"}
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %x = mdl.load @x : tensor<1x4xf32>
  %w = mdl.param_ref @w : tensor<4xf32>
  %rm = mdl.load @rm : tensor<4xf32>
  // expected-error @+1 {{needs more than one value per channel in training}}
  %y = mdl.batch_norm %x, %w, %w running %rm, %rm momentum = 0.1 eps = 1.0e-5 : tensor<1x4xf32>, tensor<4xf32> -> tensor<1x4xf32>
  mdl.store %y, @x : tensor<1x4xf32>
  return
}

// -----

// Two batch norms on one set of buffers in one step are refused.
mdl.param @w : tensor<4xf32> = ones()
mdl.param buffer @rm : tensor<4xf32> = zeros()
mdl.param buffer @rv : tensor<4xf32> = ones()
mdl.buffer @x : tensor<2x4xf32> {entry = "t", key = "x", phase = "train", role = "input"}
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %x = mdl.load @x : tensor<2x4xf32>
  %w = mdl.param_ref @w : tensor<4xf32>
  %rm = mdl.load @rm : tensor<4xf32>
  %rv = mdl.load @rv : tensor<4xf32>
  %y = mdl.batch_norm %x, %w, %w running %rm, %rv momentum = 0.1 eps = 1.0e-5 : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  // expected-error @+1 {{updates the buffer @rm a second time in one step}}
  %z = mdl.batch_norm %y, %w, %w running %rm, %rv momentum = 0.1 eps = 1.0e-5 : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  mdl.store %z, @x : tensor<2x4xf32>
  return
}

// -----

// update_buffer: a store to the buffer its first operand loads in training
// (fwd_bwd); nothing elsewhere (eval, infer).
// CHECK-LABEL: func.func @t.fwd_bwd()
// CHECK-NEXT: %[[S:.*]] = mdl.load @state : tensor<4xf32>
// CHECK-NEXT: %[[N:.*]] = mdl.add %[[S]], %[[S]]
// CHECK-NEXT: mdl.store %[[N]], @state : tensor<4xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @t.eval()
// CHECK-NEXT: %[[S:.*]] = mdl.load @state : tensor<4xf32>
// CHECK-NEXT: mdl.add
// CHECK-NEXT: return
mdl.param buffer @state : tensor<4xf32> = zeros()
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %s = mdl.load @state : tensor<4xf32>
  %n = mdl.add %s, %s : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  mdl.update_buffer %s, %n : tensor<4xf32>
  return
}
func.func @t.eval() attributes {mdl.entry = "t", mdl.function = "eval"} {
  %s = mdl.load @state : tensor<4xf32>
  %n = mdl.add %s, %s : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  mdl.update_buffer %s, %n : tensor<4xf32>
  return
}

// -----

// update_buffer of a parameter (not a buffer) is refused.
mdl.param @w : tensor<4xf32> = ones()
func.func @t.fwd_bwd() attributes {mdl.entry = "t", mdl.function = "fwd_bwd"} {
  %w = mdl.load @w : tensor<4xf32>
  // expected-error @+1 {{the buffer operand must be read from a buffer}}
  mdl.update_buffer %w, %w : tensor<4xf32>
  return
}

// -----

// conv_transpose2d is conv2d_grad_input (its result type carries the output
// padding) plus the bias over the channel axis.

// CHECK-LABEL: func.func @conv_transpose2d(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4x5x5xf32>, %[[W:[^:]*]]: tensor<4x3x3x3xf32>, %[[B:[^:]*]]: tensor<6xf32>
// CHECK-NEXT: %[[Y:.*]] = mdl.conv2d_grad_input %[[X]], %[[W]] stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 2 : tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<2x6x10x10xf32>
// CHECK-NEXT: %[[B4:.*]] = mdl.reshape %[[B]] : tensor<6xf32> -> tensor<1x6x1x1xf32>
// CHECK-NEXT: %[[R:.*]] = mdl.add %[[Y]], %[[B4]]
// CHECK-NEXT: return %[[R]]
func.func @conv_transpose2d(%x: tensor<2x4x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x10x10xf32> {
  %y = mdl.conv_transpose2d %x, %w, %b stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 2 : tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32> -> tensor<2x6x10x10xf32>
  return %y : tensor<2x6x10x10xf32>
}
