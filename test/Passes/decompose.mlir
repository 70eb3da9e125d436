// --mdl-decompose expands attention, rms_norm and dropout in the program functions.
// RUN: modelc-opt %s --split-input-file --mdl-decompose --verify-diagnostics | FileCheck %s

// Non-causal attention: softmax(q @ k^T * scale, -1) @ v, as
// scaled_dot_product_attention, with d != dv and t != s.

// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<2x3x4x8xf32>, %[[K:[^:]*]]: tensor<2x3x5x8xf32>, %[[V:[^:]*]]: tensor<2x3x5x6xf32>
// CHECK-NEXT: %[[KT:.*]] = mdl.transpose %[[K]] perm = [0, 1, 3, 2] : tensor<2x3x5x8xf32> -> tensor<2x3x8x5xf32>
// CHECK-NEXT: %[[S:.*]] = mdl.matmul %[[Q]], %[[KT]] : tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32> -> tensor<2x3x4x5xf32>
// CHECK-NEXT: %[[SCALE:.*]] = mdl.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT: %[[SS:.*]] = mdl.mul %[[S]], %[[SCALE]] : tensor<2x3x4x5xf32>, tensor<f32> -> tensor<2x3x4x5xf32>
// CHECK-NEXT: %[[P:.*]] = mdl.softmax %[[SS]] axis = 3 {mdl.attention_softmax} : tensor<2x3x4x5xf32>
// CHECK-NEXT: %[[O:.*]] = mdl.matmul %[[P]], %[[V]] : tensor<2x3x4x5xf32>, tensor<2x3x5x6xf32> -> tensor<2x3x4x6xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: mdl.attention %
func.func @plain(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x5x8xf32>, %v: tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %o = mdl.attention %q, %k, %v scale = 0.25 : tensor<2x3x4x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x6xf32> -> tensor<2x3x4x6xf32>
  return %o : tensor<2x3x4x6xf32>
}

// -----

// Causal attention: key j is visible to query i when j <= i; the [t, s]
// mask broadcasts over batch and heads, hidden scores become -inf.

// CHECK-LABEL: func.func @causal(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x4x8xbf16>, %[[K:[^:]*]]: tensor<1x2x4x8xbf16>, %[[V:[^:]*]]: tensor<1x2x4x8xbf16>
// CHECK: %[[SS:.*]] = mdl.mul %{{.*}}, %{{.*}} : tensor<1x2x4x4xbf16>, tensor<bf16> -> tensor<1x2x4x4xbf16>
// CHECK-NEXT: %[[I:.*]] = mdl.arange : tensor<4xi32>
// CHECK-NEXT: %[[ROWS:.*]] = mdl.reshape %[[I]] : tensor<4xi32> -> tensor<4x1xi32>
// CHECK-NEXT: %[[J:.*]] = mdl.arange : tensor<4xi32>
// CHECK-NEXT: %[[COLS:.*]] = mdl.reshape %[[J]] : tensor<4xi32> -> tensor<1x4xi32>
// CHECK-NEXT: %[[MASK:.*]] = mdl.compare le, %[[COLS]], %[[ROWS]] : tensor<1x4xi32>, tensor<4x1xi32> -> tensor<4x4xi1>
// CHECK-NEXT: %[[NEGINF:.*]] = mdl.constant dense<0xFF80> : tensor<bf16>
// CHECK-NEXT: %[[MASKED:.*]] = mdl.where %[[MASK]], %[[SS]], %[[NEGINF]] : tensor<4x4xi1>, tensor<1x2x4x4xbf16>, tensor<bf16> -> tensor<1x2x4x4xbf16>
// CHECK-NEXT: %[[P:.*]] = mdl.softmax %[[MASKED]] axis = 3 {mdl.attention_softmax}
// CHECK-NEXT: %[[O:.*]] = mdl.matmul %[[P]], %[[V]]
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
