// --mdl-shard-data-parallel: in each fwd_bwd function the gradient buffers
// are grouped into buckets of at most bucket-mb MB in the order the
// backward finishes them (their last stores), and one mdl.all_reduce per
// bucket follows the store that finishes it. Other functions, and stores
// to buffers that are not gradients, are left alone. An entry's
// `parallel { bucket_mb }` setting wins over the option.
// RUN: modelc-opt %s --split-input-file --verify-diagnostics --mdl-shard-data-parallel | FileCheck %s
// RUN: modelc-opt %s --split-input-file --verify-diagnostics --mdl-shard-data-parallel=bucket-mb=0.0001 | FileCheck %s --check-prefix=SMALL

// Default 25 MB: everything in one bucket, after the last gradient store
// (@"grad:w1", finished last since the backward reaches layer 1 last).
// CHECK-LABEL: func.func @T.fwd_bwd
// CHECK: mdl.store %{{.*}}, @"T:out:loss"
// CHECK: mdl.store %{{.*}}, @"grad:b2"
// CHECK-NOT: mdl.all_reduce
// CHECK: mdl.store %{{.*}}, @"grad:w1"
// CHECK-NEXT: mdl.all_reduce [@"grad:b2", @"grad:w2", @"grad:w1"] bucket 0
// CHECK-NEXT: return
// CHECK-LABEL: func.func @T.update
// CHECK-NOT: mdl.all_reduce

// 100 bytes: b2 (16 B) and w2 (64 B) share a bucket, w1 (400 B, more than
// the cap) is one of its own. Each bucket follows the store finishing it.
// SMALL-LABEL: func.func @T.fwd_bwd
// SMALL: mdl.store %{{.*}}, @"grad:b2"
// SMALL-NOT: mdl.all_reduce
// SMALL: mdl.store %{{.*}}, @"grad:w2"
// SMALL-NEXT: mdl.store %{{.*}}, @"grad:w2"
// SMALL-NEXT: mdl.all_reduce [@"grad:b2", @"grad:w2"] bucket 0
// SMALL: mdl.store %{{.*}}, @"grad:w1"
// SMALL-NEXT: mdl.all_reduce [@"grad:w1"] bucket 1
module {
  mdl.buffer @"grad:w1" : tensor<10x10xf32> {entry = "", key = "w1", phase = "shared", role = "grad"}
  mdl.buffer @"grad:w2" : tensor<4x4xf32> {entry = "", key = "w2", phase = "shared", role = "grad"}
  mdl.buffer @"grad:b2" : tensor<4xf32> {entry = "", key = "b2", phase = "shared", role = "grad"}
  mdl.buffer @"T:out:loss" : tensor<f32> {entry = "T", key = "loss", phase = "train", role = "output"}
  func.func @T.fwd_bwd() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %l = mdl.load @"T:out:loss" : tensor<f32>
    mdl.store %l, @"T:out:loss" : tensor<f32>
    %b = mdl.load @"grad:b2" : tensor<4xf32>
    mdl.store %b, @"grad:b2" : tensor<4xf32>
    %w2 = mdl.load @"grad:w2" : tensor<4x4xf32>
    // A first store of w2, then the one that finishes it.
    mdl.store %w2, @"grad:w2" : tensor<4x4xf32>
    mdl.store %w2, @"grad:w2" : tensor<4x4xf32>
    %w1 = mdl.load @"grad:w1" : tensor<10x10xf32>
    mdl.store %w1, @"grad:w1" : tensor<10x10xf32>
    return
  }
  func.func @T.update() attributes {mdl.entry = "T", mdl.function = "update"} {
    %w1 = mdl.load @"grad:w1" : tensor<10x10xf32>
    mdl.store %w1, @"grad:w1" : tensor<10x10xf32>
    return
  }
}

// -----

// Gradients of two element types (an f64 parameter among f32 ones) go in
// buckets of their own type, each issued after its last gradient.
// CHECK-LABEL: func.func @M.fwd_bwd
// CHECK: mdl.store %{{.*}}, @"grad:a"
// CHECK-NEXT: mdl.store %{{.*}}, @"grad:d"
// CHECK-NEXT: mdl.all_reduce [@"grad:d"] bucket 0
// CHECK-NEXT: mdl.store %{{.*}}, @"grad:c"
// CHECK-NEXT: mdl.all_reduce [@"grad:a", @"grad:c"] bucket 1
// CHECK-NEXT: return
module {
  mdl.buffer @"grad:a" : tensor<4xf32> {entry = "", key = "a", phase = "shared", role = "grad"}
  mdl.buffer @"grad:c" : tensor<4xf32> {entry = "", key = "c", phase = "shared", role = "grad"}
  mdl.buffer @"grad:d" : tensor<4xf64> {entry = "", key = "d", phase = "shared", role = "grad"}
  func.func @M.fwd_bwd() attributes {mdl.entry = "M", mdl.function = "fwd_bwd"} {
    %a = mdl.load @"grad:a" : tensor<4xf32>
    %d = mdl.load @"grad:d" : tensor<4xf64>
    mdl.store %a, @"grad:a" : tensor<4xf32>
    mdl.store %d, @"grad:d" : tensor<4xf64>
    mdl.store %a, @"grad:c" : tensor<4xf32>
    return
  }
}

// -----

// The op's verifier: grad buffers of one element type, f32 or f64.
mdl.buffer @"grad:h" : tensor<4xbf16> {entry = "", key = "h", phase = "shared", role = "grad"}
func.func @half() {
  // expected-error @+1 {{@"grad:h" holds 'bf16', not f32 or f64}}
  mdl.all_reduce [@"grad:h"] bucket 0
  return
}

// -----

// The op's verifier: grad buffers of one float type.
mdl.buffer @"grad:a" : tensor<4xf32> {entry = "", key = "a", phase = "shared", role = "grad"}
mdl.buffer @"grad:d" : tensor<4xf64> {entry = "", key = "d", phase = "shared", role = "grad"}
mdl.buffer @"T:out:loss" : tensor<f32> {entry = "T", key = "loss", phase = "train", role = "output"}
func.func @mixed() {
  // expected-error @+1 {{the buffers of a bucket have one element type; @"grad:d" holds 'f64', not 'f32'}}
  mdl.all_reduce [@"grad:a", @"grad:d"] bucket 0
  return
}

// -----

mdl.buffer @"T:out:loss" : tensor<f32> {entry = "T", key = "loss", phase = "train", role = "output"}
func.func @not_a_gradient() {
  // expected-error @+1 {{@"T:out:loss" does not name a grad mdl.buffer}}
  mdl.all_reduce [@"T:out:loss"] bucket 0
  return
}

// -----

func.func @empty() {
  // expected-error @+1 {{needs at least one buffer}}
  mdl.all_reduce [] bucket 0
  return
}

// -----

// The entry's `parallel { bucket_mb }` (its mdl.train settings) wins over
// the option: 0.0001 MB = 100 bytes splits w1 (400 B) from b2 (16 B) under
// either RUN line, each bucket right after its store.
// CHECK-LABEL: func.func @E.fwd_bwd
// CHECK: mdl.store %{{.*}}, @"grad:b2"
// CHECK-NEXT: mdl.all_reduce [@"grad:b2"] bucket 0
// CHECK: mdl.store %{{.*}}, @"grad:w1"
// CHECK-NEXT: mdl.all_reduce [@"grad:w1"] bucket 1
// SMALL-LABEL: func.func @E.fwd_bwd
// SMALL: mdl.all_reduce [@"grad:b2"] bucket 0
// SMALL: mdl.all_reduce [@"grad:w1"] bucket 1
mdl.data @d {
  mdl.field "x" : tensor<f32> = npy "x.npy"
}
mdl.train @E data @d outputs ["loss"] settings {batch = 2 : i64, optimizer = {kind = "sgd"}, parallel = {bucket_mb = 1.0e-04 : f64, data = "gpus", zero = 0 : i64}} {
^bb0(%x: tensor<2xf32>):
  %s = mdl.sum %x axes = [0] : tensor<2xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}
mdl.buffer @"grad:w1" : tensor<10x10xf32> {entry = "", key = "w1", phase = "shared", role = "grad"}
mdl.buffer @"grad:b2" : tensor<4xf32> {entry = "", key = "b2", phase = "shared", role = "grad"}
func.func @E.fwd_bwd() attributes {mdl.entry = "E", mdl.function = "fwd_bwd"} {
  %b = mdl.load @"grad:b2" : tensor<4xf32>
  mdl.store %b, @"grad:b2" : tensor<4xf32>
  %w = mdl.load @"grad:w1" : tensor<10x10xf32>
  mdl.store %w, @"grad:w1" : tensor<10x10xf32>
  return
}
