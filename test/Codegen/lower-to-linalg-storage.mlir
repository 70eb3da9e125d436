// --mdl-lower-to-linalg, storage family: loads and parameter reads become
// mdlrt.buffer + bufferization.to_tensor restrict, stores
// materialize_in_destination; one buffer and one read per symbol and
// function; a read still used after a store to its symbol is copied first.
// dropout_mask is the documented SplitMix64 hash. The lowered functions go
// through one-shot bufferization with default options (second RUN).
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file | FileCheck %s
// RUN: modelc-opt %s --mdl-lower-to-linalg --one-shot-bufferize --split-input-file | FileCheck %s --check-prefix=BUF

// Buffers at the top of the function in first-use order; a store that is
// the function's only access to its symbol keeps `restrict`. Bufferized,
// the reads are the buffers themselves and the store a copy into one.
// CHECK-LABEL: func.func @forward
// CHECK: %[[X:.*]] = mdlrt.buffer @x : memref<4x8xf32>
// CHECK: %[[W:.*]] = mdlrt.buffer @w : memref<4x8xf32>
// CHECK: %[[Y:.*]] = mdlrt.buffer @y : memref<4x8xf32>
// CHECK: %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict : memref<4x8xf32>
// CHECK: %[[WT:.*]] = bufferization.to_tensor %[[W]] restrict : memref<4x8xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[XT]], %[[WT]] :
// CHECK: bufferization.materialize_in_destination %[[SUM]] in restrict writable %[[Y]] : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK-NOT: mdl.
// CHECK: return
// BUF-LABEL: func.func @forward
// BUF-NOT: tensor
// BUF: %[[X:.*]] = mdlrt.buffer @x : memref<4x8xf32>
// BUF: %[[W:.*]] = mdlrt.buffer @w : memref<4x8xf32>
// BUF: %[[Y:.*]] = mdlrt.buffer @y : memref<4x8xf32>
// BUF: %[[T:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// BUF: linalg.generic {{.*}} ins(%[[X]], %[[W]] : memref<4x8xf32>, memref<4x8xf32>) outs(%[[T]] : memref<4x8xf32>)
// BUF: memref.copy %[[T]], %[[Y]]
// BUF-NOT: tensor
// BUF: return
mdl.param @w : tensor<4x8xf32> = zeros()
mdl.buffer @x : tensor<4x8xf32> {entry = "T", key = "x", phase = "train", role = "input"}
mdl.buffer @y : tensor<4x8xf32> {entry = "T", key = "y", phase = "train", role = "output"}
func.func @forward() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
  %x = mdl.load @x : tensor<4x8xf32>
  %w = mdl.param_ref @w : tensor<4x8xf32>
  %y = mdl.add %x, %w : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  mdl.store %y, @y : tensor<4x8xf32>
  return
}

// -----

// Two loads of one symbol share one buffer and one read; the gradient is
// read, then stored, so the store loses `restrict` but needs no copy (every
// read of the old value comes before it).
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[G:.*]] = mdlrt.buffer @"grad:w" : memref<8xf32>
// CHECK-NEXT: %[[X:.*]] = mdlrt.buffer @x : memref<8xf32>
// CHECK-NOT: mdlrt.buffer
// CHECK: %[[GT:.*]] = bufferization.to_tensor %[[G]] restrict : memref<8xf32>
// CHECK-NOT: linalg.copy
// CHECK: %[[TWICE:.*]] = linalg.generic {{.*}} ins(%[[GT]], %[[GT]] :
// CHECK: %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict : memref<8xf32>
// CHECK-NOT: bufferization.to_tensor
// CHECK-NOT: linalg.copy
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[TWICE]], %[[XT]] :
// CHECK: bufferization.materialize_in_destination %[[NEW]] in writable %[[G]]
// BUF-LABEL: func.func @accumulate
// BUF: %[[G:.*]] = mdlrt.buffer @"grad:w" : memref<8xf32>
// BUF: linalg.generic {{.*}} ins(%[[G]], %[[G]] : memref<8xf32>, memref<8xf32>)
// BUF: linalg.generic {{.*}} outs(%[[T:.*]] : memref<8xf32>)
// BUF: memref.copy %[[T]], %[[G]]
mdl.buffer @"grad:w" : tensor<8xf32> {entry = "", key = "w", phase = "shared", role = "grad"}
mdl.buffer @x : tensor<8xf32> {entry = "T", key = "x", phase = "train", role = "input"}
func.func @accumulate() {
  %a = mdl.load @"grad:w" : tensor<8xf32>
  %b = mdl.load @"grad:w" : tensor<8xf32>
  %s = mdl.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %x = mdl.load @x : tensor<8xf32>
  %t = mdl.add %s, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  mdl.store %t, @"grad:w" : tensor<8xf32>
  return
}

// -----

// The gradient is zeroed before its old value (and a view of it) is used:
// the read is copied before the store, and everything uses the copy. The
// stored splat fills the buffer directly (no temporary, no copy).
// CHECK-LABEL: func.func @read_after_store
// CHECK: %[[G:.*]] = mdlrt.buffer @"grad:w" : memref<2x4xf32>
// CHECK: %[[GT:.*]] = bufferization.to_tensor %[[G]] restrict : memref<2x4xf32>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[SNAP:.*]] = linalg.copy ins(%[[GT]] : tensor<2x4xf32>) outs(%[[INIT]] : tensor<2x4xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[SNAP]]
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: tensor.empty
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%[[G]] : memref<2x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[FLAT]], %[[FLAT]] :
// BUF-LABEL: func.func @read_after_store
// BUF: %[[G:.*]] = mdlrt.buffer @"grad:w" : memref<2x4xf32>
// BUF: %[[SNAP:.*]] = memref.alloc() {{.*}} : memref<2x4xf32>
// BUF: linalg.copy ins(%[[G]] : memref<2x4xf32>) outs(%[[SNAP]] : memref<2x4xf32>)
// BUF: %[[FLAT:.*]] = memref.collapse_shape %[[SNAP]]
// BUF: linalg.fill ins(%{{.*}} : f32) outs(%[[G]] : memref<2x4xf32>)
// BUF: linalg.generic {{.*}} ins(%[[FLAT]], %[[FLAT]] :
mdl.buffer @"grad:w" : tensor<2x4xf32> {entry = "", key = "w", phase = "shared", role = "grad"}
mdl.buffer @out : tensor<8xf32> {entry = "T", key = "out", phase = "train", role = "output"}
func.func @read_after_store() {
  %g = mdl.load @"grad:w" : tensor<2x4xf32>
  %flat = mdl.reshape %g : tensor<2x4xf32> -> tensor<8xf32>
  %zero = mdl.constant dense<0.000000e+00> : tensor<2x4xf32>
  mdl.store %zero, @"grad:w" : tensor<2x4xf32>
  %twice = mdl.add %flat, %flat : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  mdl.store %twice, @out : tensor<8xf32>
  return
}

// -----

// Storing what was loaded is no write; an unused load is no read.
// CHECK-LABEL: func.func @no_op_accesses
// CHECK-NEXT: return
// BUF-LABEL: func.func @no_op_accesses
// BUF-NEXT: return
mdl.buffer @s : tensor<4xf32> {entry = "T", key = "s", phase = "train", role = "state"}
mdl.buffer @t : tensor<4xf32> {entry = "T", key = "t", phase = "train", role = "state"}
func.func @no_op_accesses() {
  %s = mdl.load @s : tensor<4xf32>
  %t = mdl.load @t : tensor<4xf32>
  mdl.store %s, @s : tensor<4xf32>
  return
}

// -----

// dropout_mask: key = mix64(mix64(seed ^ id * 0x9E3779B97F4A7C15) ^ counter)
// once per op (id 3: the salt is 3 * 0x9E37... mod 2^64), then per element
// mix64(key ^ linear index); u = (h >> 11) * 2^-53; 0 if u < p else
// 1 / (1 - p), u < p compared as (h >> 11) < ceil(p * 2^53) (for p = 0.1,
// 900719925474100). SplitMix64's multipliers 0xBF58476D1CE4E5B9 and
// 0x94D049BB133111EB print as signed i64.
// CHECK-LABEL: func.func @dropout_mask
// CHECK: %[[SEEDT:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<f64>
// CHECK: %[[CTRT:.*]] = bufferization.to_tensor %{{.*}} restrict : memref<f64>
// CHECK: %[[SEEDF:.*]] = tensor.extract %[[SEEDT]][] : tensor<f64>
// CHECK: %[[SEED:.*]] = arith.fptoui %[[SEEDF]] : f64 to i64
// CHECK: %[[CTRF:.*]] = tensor.extract %[[CTRT]][] : tensor<f64>
// CHECK: %[[CTR:.*]] = arith.fptoui %[[CTRF]] : f64 to i64
// CHECK: %[[SALT:.*]] = mdlrt.launch_constant -2691343689449507777
// CHECK: %[[K0:.*]] = arith.xori %[[SEED]], %[[SALT]] : i64
// CHECK: %[[S30:.*]] = arith.constant 30 : i64
// CHECK: %[[SH30:.*]] = arith.shrui %[[K0]], %[[S30]] : i64
// CHECK: %[[X30:.*]] = arith.xori %[[K0]], %[[SH30]] : i64
// CHECK: %[[M1:.*]] = arith.constant -4658895280553007687 : i64
// CHECK: %[[P1:.*]] = arith.muli %[[X30]], %[[M1]] : i64
// CHECK: arith.constant 27 : i64
// CHECK: arith.constant -7723592293110705685 : i64
// CHECK: arith.constant 31 : i64
// CHECK: %[[MIXED:.*]] = arith.xori
// CHECK: %[[K1:.*]] = arith.xori %[[MIXED]], %[[CTR]] : i64
// CHECK: arith.constant 31 : i64
// CHECK-NEXT: arith.shrui
// CHECK-NEXT: %[[KEY:.*]] = arith.xori
// CHECK-NEXT: %[[INIT:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK: linalg.generic {{.*}} outs(%[[INIT]] : tensor<2x8xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[I0:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[I1:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[ROW:.*]] = arith.muli %[[I0]], %[[C8]] : index
// CHECK-NEXT: %[[LIN:.*]] = arith.addi %[[ROW]], %[[I1]] : index
// CHECK-NEXT: %[[LIN64:.*]] = arith.index_castui %[[LIN]] : index to i64
// CHECK-NEXT: %[[H0:.*]] = arith.xori %[[KEY]], %[[LIN64]] : i64
// CHECK: %[[C11:.*]] = arith.constant 11 : i64
// CHECK-NEXT: %[[TOP:.*]] = arith.shrui %{{.*}}, %[[C11]] : i64
// CHECK-NEXT: %[[P:.*]] = arith.constant 900719925474100 : i64
// CHECK-NEXT: %[[DROP:.*]] = arith.cmpi ult, %[[TOP]], %[[P]] : i64
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[SCALE:.*]] = arith.constant 1.11111116 : f32
// CHECK-NEXT: %[[M:.*]] = arith.select %[[DROP]], %[[ZERO]], %[[SCALE]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// BUF-LABEL: func.func @dropout_mask
// BUF-NOT: tensor
// BUF: memref.load %{{.*}}[] : memref<f64>
// BUF-NOT: tensor
// BUF: return
mdl.buffer @"T:hyper:seed" : tensor<f64> {entry = "T", key = "seed", phase = "train", role = "hyper"}
mdl.buffer @"T:hyper:rng_counter" : tensor<f64> {entry = "T", key = "rng_counter", phase = "train", role = "hyper"}
mdl.buffer @mask : tensor<2x8xf32> {entry = "T", key = "mask", phase = "train", role = "output"}
func.func @dropout_mask() {
  %seed = mdl.load @"T:hyper:seed" : tensor<f64>
  %counter = mdl.load @"T:hyper:rng_counter" : tensor<f64>
  %m = mdl.dropout_mask %seed, %counter p = 1.000000e-01 id = 3 : tensor<f64>, tensor<f64> -> tensor<2x8xf32>
  mdl.store %m, @mask : tensor<2x8xf32>
  return
}

// -----

// The declarations stay; only function bodies are lowered. A ui8 input
// is an i8 memref, widened with uitofp.
// CHECK-LABEL: mdl.buffer @"T:in:image" : tensor<2x4xui8>
// CHECK-LABEL: func.func @unsigned_input
// CHECK: %[[IMG:.*]] = mdlrt.buffer @"T:in:image" : memref<2x4xi8>
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// BUF-LABEL: func.func @unsigned_input
// BUF: %[[IMG:.*]] = mdlrt.buffer @"T:in:image" : memref<2x4xi8>
// BUF: linalg.generic {{.*}} ins(%[[IMG]] : memref<2x4xi8>)
mdl.buffer @"T:in:image" : tensor<2x4xui8> {entry = "T", key = "image", phase = "train", role = "input"}
mdl.buffer @"T:out:pixels" : tensor<2x4xf32> {entry = "T", key = "pixels", phase = "train", role = "output"}
func.func @unsigned_input() {
  %image = mdl.load @"T:in:image" : tensor<2x4xui8>
  %f = mdl.cast %image : tensor<2x4xui8> -> tensor<2x4xf32>
  mdl.store %f, @"T:out:pixels" : tensor<2x4xf32>
  return
}
