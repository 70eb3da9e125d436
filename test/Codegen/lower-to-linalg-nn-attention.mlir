// mdl.attention_forward and mdl.attention_backward lower to FlashAttention-2's
// loops (docs/codegen/attention.md): one scf.parallel per pass over
// (batch, head, row), each marked with the terms its longest sum adds; the
// operands read through read-only bufferization.to_memref, the results
// written to fresh buffers; nothing of shape [t, s] exists. After one-shot
// bufferization no tensor is left and the only buffers are the [b, h, t, d]
// results, the [b, h, t] log-sum-exp and D.
// RUN: modelc-opt %s --mdl-lower-to-linalg --canonicalize | FileCheck %s
// RUN: modelc-opt %s --mdl-lower-to-linalg --one-shot-bufferize --canonicalize | FileCheck %s --check-prefix=BUF

mdl.buffer @"t:hyper:seed" : tensor<f64> {entry = "t", key = "seed", phase = "train", role = "hyper"}
mdl.buffer @"t:hyper:rng_counter" : tensor<f64> {entry = "t", key = "rng_counter", phase = "train", role = "hyper"}
mdl.buffer @"t:in:q" : tensor<2x3x4x8xf32> {entry = "t", key = "q", phase = "train", role = "input"}
mdl.buffer @"t:in:v" : tensor<2x3x5x6xf32> {entry = "t", key = "v", phase = "train", role = "input"}
mdl.buffer @"t:in:k" : tensor<2x3x5x8xf32> {entry = "t", key = "k", phase = "train", role = "input"}
mdl.buffer @"t:in:m" : tensor<2x1x1x5xi1> {entry = "t", key = "m", phase = "train", role = "input"}
mdl.buffer @"t:in:do" : tensor<2x3x4x6xf32> {entry = "t", key = "do", phase = "train", role = "input"}
mdl.buffer @"t:out:dq" : tensor<2x3x4x8xf32> {entry = "t", key = "dq", phase = "train", role = "output"}
mdl.buffer @"t:out:dk" : tensor<2x3x5x8xf32> {entry = "t", key = "dk", phase = "train", role = "output"}
mdl.buffer @"t:out:dv" : tensor<2x3x5x6xf32> {entry = "t", key = "dv", phase = "train", role = "output"}

// The forward, per query row: its row of q in a vector, the keys up to
// min(i + 1, s) (causal) in blocks of 16 with the running maximum, sum and
// output row as loop-carried values, the dropout key salted by id 2
// (2 * 0x9E3779B97F4A7C15), then O = o / l and L = m + log(l).
// CHECK-LABEL: func.func @f()
// CHECK: %[[SALT:.*]] = mdlrt.launch_constant 4354685564936845354
// CHECK: %[[O:.*]] = memref.alloc() : memref<2x3x4x6xf32>
// CHECK: %[[L:.*]] = memref.alloc() : memref<2x3x4xf32>
// CHECK: scf.parallel (%[[B:.*]], %[[H:.*]], %[[I:.*]]) = ({{.*}}) to (%c2, %c3, %c4)
// CHECK: vector.load %{{.*}}[%[[B]], %[[H]], %[[I]], %c0] : memref<2x3x4x8xf32>, vector<8xf32>
// CHECK: %[[NEXT:.*]] = arith.addi %[[I]], %c1
// CHECK: %[[END:.*]] = arith.minui %[[NEXT]], %c5
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[END]] step %c16 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32, vector<6xf32>)
// CHECK: math.exp
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, vector<6xf32>
// CHECK: vector.store %{{.*}}, %[[O]][%[[B]], %[[H]], %[[I]], %{{.*}}] : memref<2x3x4x6xf32>, vector<6xf32>
// CHECK: math.log
// CHECK: memref.store %{{.*}}, %[[L]][%[[B]], %[[H]], %[[I]]] : memref<2x3x4xf32>
// CHECK: } {mdl.reduction = 40 : i64}
// CHECK: bufferization.to_tensor %[[O]] restrict writable

// The backward: D = rowsum(dO * O) as a linalg reduction, then dQ per query
// (its keys up to the diagonal) and dK, dV per key (the queries from the
// diagonal on).
// CHECK: %[[D:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: %[[DQ:.*]] = memref.alloc() : memref<2x3x4x8xf32>
// CHECK: %[[DK:.*]] = memref.alloc() : memref<2x3x5x8xf32>
// CHECK: %[[DV:.*]] = memref.alloc() : memref<2x3x5x6xf32>
// CHECK: scf.parallel ({{.*}}) to (%c2, %c3, %c4)
// CHECK: scf.for {{.*}} -> (vector<8xf32>)
// CHECK: memref.load %[[L]]
// CHECK: } {mdl.reduction = 40 : i64}
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %[[J:.*]]) = ({{.*}}) to (%c2, %c3, %c5)
// CHECK: scf.for %{{.*}} = %[[J]] to %c4 step %c1 iter_args({{.*}}) -> (vector<8xf32>, vector<6xf32>)
// CHECK: } {mdl.reduction = 32 : i64}

// BUF-LABEL: func.func @f()
// BUF-NOT: tensor<
// BUF-NOT: memref.alloc() : memref<{{.*}}x4x5x
// BUF-NOT: memref.alloc() : memref<{{.*}}x5x4x
// BUF: return
func.func @f() {
  %seed = mdl.load @"t:hyper:seed" : tensor<f64>
  %counter = mdl.load @"t:hyper:rng_counter" : tensor<f64>
  %q = mdl.load @"t:in:q" : tensor<2x3x4x8xf32>
  %k = mdl.load @"t:in:k" : tensor<2x3x5x8xf32>
  %v = mdl.load @"t:in:v" : tensor<2x3x5x6xf32>
  %m = mdl.load @"t:in:m" : tensor<2x1x1x5xi1>
  %do = mdl.load @"t:in:do" : tensor<2x3x4x6xf32>
  %o, %lse = mdl.attention_forward %q, %k, %v mask %m : tensor<2x1x1x5xi1> rng(%seed, %counter : tensor<f64>, tensor<f64>) causal scale = 0.5 dropout = 0.25 id = 2 : tensor<2x3x4x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x6xf32> -> tensor<2x3x4x6xf32>, tensor<2x3x4xf32>
  %dq, %dk, %dv = mdl.attention_backward %q, %k, %v, %o, %do, %lse mask %m : tensor<2x1x1x5xi1> rng(%seed, %counter : tensor<f64>, tensor<f64>) causal scale = 0.5 dropout = 0.25 id = 2 : tensor<2x3x4x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x6xf32>, tensor<2x3x4x6xf32>, tensor<2x3x4x6xf32>, tensor<2x3x4xf32> -> tensor<2x3x4x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x6xf32>
  mdl.store %dq, @"t:out:dq" : tensor<2x3x4x8xf32>
  mdl.store %dk, @"t:out:dk" : tensor<2x3x5x8xf32>
  mdl.store %dv, @"t:out:dv" : tensor<2x3x5x6xf32>
  return
}
