// --mdl-lower-to-linalg of mdl.lstm_scan, mdl.gru_scan and their gradients
// (codegen/linalg/NNToLinalgRecurrent.cpp): one scf.for over time each,
// carrying whole tensors written through extract_slice -> linalg.generic ->
// insert_slice at the step's offsets. The recurrent products are generics
// (a reduction loop), not named matmuls, so that they stay in the loop's
// kernel. After --mdl-fuse-elementwise (which leaves loop bodies alone) and
// one-shot bufferization, nothing is allocated inside either loop.
// RUN: modelc-opt %s --mdl-lower-to-linalg | FileCheck %s
// RUN: modelc-opt %s --mdl-lower-to-linalg --mdl-fuse-elementwise --one-shot-bufferize | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @T.fwd_bwd
// Forward: hidden and cell [b, t + 1, h] start with h0 and c0 at step 0.
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [2, 1, 2] [1, 1, 1] : tensor<2x2xf32> into tensor<2x4x2xf32>
// CHECK: scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (tensor<2x4x2xf32>, tensor<2x4x2xf32>, tensor<2x3x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x8xf32>)
// CHECK: %[[NEXT:.*]] = arith.addi %[[S]], %{{.*}} : index
// pre = input[:, s]; pre += h W_hh^T; the gates; c and h.
// CHECK: tensor.extract_slice %{{.*}}[0, %[[S]], 0] [2, 1, 8] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x8xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: math.tanh
// CHECK: arith.select
// CHECK: tensor.insert_slice %{{.*}}[0, %[[S]], 0] [2, 1, 8]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: tensor.insert_slice %{{.*}}[0, %[[NEXT]], 0] [2, 1, 2]
// CHECK: tensor.insert_slice %{{.*}}[0, %[[NEXT]], 0] [2, 1, 2]
// CHECK: scf.yield
// Backward: steps t - 1 down to 0; the per-unit values, the [b, 4h] gate
// gradients, then dh = dpre W_hh (a reduction generic after a zero fill).
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (tensor<2x3x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK: %[[STEP:.*]] = arith.subi %{{.*}}, %[[R]] : index
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.index 1
// CHECK: tensor.insert_slice %{{.*}}[0, %[[STEP]], 0] [2, 1, 8]
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: scf.yield
// The initial state's adjoints: step 0's plus what the loop carried.
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [2, 1, 2] [1, 1, 1] : tensor<2x4x2xf32> to tensor<2x2xf32>
// CHECK: linalg.generic

// BUF-LABEL: func.func @T.fwd_bwd
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF: scf.yield
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF: scf.yield
mdl.buffer @"T:in:xw" : tensor<2x3x8xf32> {entry = "T", key = "xw", phase = "train", role = "input"}
mdl.buffer @w : tensor<8x2xf32> {entry = "T", key = "w", phase = "train", role = "input"}
mdl.buffer @h0 : tensor<2x2xf32> {entry = "T", key = "h0", phase = "train", role = "input"}
mdl.buffer @"T:out:h" : tensor<2x4x2xf32> {entry = "T", key = "h", phase = "train", role = "output"}
mdl.buffer @"T:out:dx" : tensor<2x3x8xf32> {entry = "T", key = "dx", phase = "train", role = "output"}
mdl.buffer @"T:out:dh0" : tensor<2x2xf32> {entry = "T", key = "dh0", phase = "train", role = "output"}
func.func @"T.fwd_bwd"() {
  %x = mdl.load @"T:in:xw" : tensor<2x3x8xf32>
  %w = mdl.load @w : tensor<8x2xf32>
  %h0 = mdl.load @h0 : tensor<2x2xf32>
  %h, %c, %g = mdl.lstm_scan %x, %w, %h0, %h0 : (tensor<2x3x8xf32>, tensor<8x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x4x2xf32>, tensor<2x4x2xf32>, tensor<2x3x8xf32>)
  %dx, %dh0, %dc0 = mdl.lstm_scan_grad %h, %c, %g, %c, %w : (tensor<2x4x2xf32>, tensor<2x4x2xf32>, tensor<2x3x8xf32>, tensor<2x4x2xf32>, tensor<8x2xf32>) -> (tensor<2x3x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  mdl.store %h, @"T:out:h" : tensor<2x4x2xf32>
  mdl.store %dx, @"T:out:dx" : tensor<2x3x8xf32>
  mdl.store %dh0, @"T:out:dh0" : tensor<2x2xf32>
  return
}

// GRU: the recurrent pre-activation hw = b_hh; hw += h W_hh^T; the gates
// over [b, 3h] (each column reading its unit's values); then h, step s + 1
// and hw_n. Backwards: both [b, 3h] gradients of step s from one generic,
// then dh = dh z, dh += dhw W_hh.
// CHECK-LABEL: func.func @G.fwd_bwd
// CHECK: scf.for %[[GS:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (tensor<2x4x2xf32>, tensor<2x3x6xf32>, tensor<2x3x2xf32>, tensor<2x2xf32>, tensor<2x6xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<6xf32>) outs(%{{.*}} : tensor<2x6xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: tensor.insert_slice %{{.*}}[0, %[[GS]], 0] [2, 1, 6]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: scf.yield
// CHECK: scf.for {{.*}} -> (tensor<2x3x6xf32>, tensor<2x3x6xf32>, tensor<2x2xf32>)
// CHECK: %{{.*}}:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: scf.yield

// BUF-LABEL: func.func @G.fwd_bwd
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF: scf.yield
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF: scf.yield
mdl.buffer @"G:in:xw" : tensor<2x3x6xf32> {entry = "G", key = "xw", phase = "train", role = "input"}
mdl.buffer @gw : tensor<6x2xf32> {entry = "G", key = "gw", phase = "train", role = "input"}
mdl.buffer @gb : tensor<6xf32> {entry = "G", key = "gb", phase = "train", role = "input"}
mdl.buffer @gh0 : tensor<2x2xf32> {entry = "G", key = "gh0", phase = "train", role = "input"}
mdl.buffer @"G:out:h" : tensor<2x4x2xf32> {entry = "G", key = "h", phase = "train", role = "output"}
mdl.buffer @"G:out:dx" : tensor<2x3x6xf32> {entry = "G", key = "dx", phase = "train", role = "output"}
mdl.buffer @"G:out:dhw" : tensor<2x3x6xf32> {entry = "G", key = "dhw", phase = "train", role = "output"}
mdl.buffer @"G:out:dh0" : tensor<2x2xf32> {entry = "G", key = "dh0", phase = "train", role = "output"}
func.func @"G.fwd_bwd"() {
  %x = mdl.load @"G:in:xw" : tensor<2x3x6xf32>
  %w = mdl.load @gw : tensor<6x2xf32>
  %b = mdl.load @gb : tensor<6xf32>
  %h0 = mdl.load @gh0 : tensor<2x2xf32>
  %h, %g, %n = mdl.gru_scan %x, %w, %b, %h0 : (tensor<2x3x6xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<2x2xf32>) -> (tensor<2x4x2xf32>, tensor<2x3x6xf32>, tensor<2x3x2xf32>)
  %dx, %dhw, %dh0 = mdl.gru_scan_grad %h, %g, %n, %h, %w : (tensor<2x4x2xf32>, tensor<2x3x6xf32>, tensor<2x3x2xf32>, tensor<2x4x2xf32>, tensor<6x2xf32>) -> (tensor<2x3x6xf32>, tensor<2x3x6xf32>, tensor<2x2xf32>)
  mdl.store %h, @"G:out:h" : tensor<2x4x2xf32>
  mdl.store %dx, @"G:out:dx" : tensor<2x3x6xf32>
  mdl.store %dhw, @"G:out:dhw" : tensor<2x3x6xf32>
  mdl.store %dh0, @"G:out:dh0" : tensor<2x2xf32>
  return
}
