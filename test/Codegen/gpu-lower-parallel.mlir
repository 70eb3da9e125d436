// --mdl-lower-to-gpu, a parallel loop as a kernel's work (a fused kernel's
// rows, e.g. attention's): one thread per point of its iteration space, the
// linear id delinearised with the last loop fastest, grid-stride; the body
// runs serially in its thread (here a loop over 5 keys carrying a vector).
// The loop's own mdl.reduction is the kernel's.
// RUN: modelc-opt %s --mdl-lower-to-gpu --cse | FileCheck %s

// CHECK: mdl.gpu_kernels = [{block = 32 : i64, grid = 1 : i64, name = "T_fwd_bwd_k0", param_bytes = array<i64: 384, 96>, params = ["buffer", "buffer"], part = 0 : i64, reduction = 20 : i64}]
// CHECK-LABEL: gpu.func @T_fwd_bwd_k0(
// CHECK-SAME: %[[IN:.*]]: memref<2x3x4x4xf32>, %[[OUT:.*]]: memref<2x3x4xf32>
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>, mdl.block = 32 : i64, mdl.grid = 1 : i64, mdl.reduction = 20 : i64
// CHECK: scf.for %[[ID:.*]] = %{{.*}} to %c24 step %{{.*}} {
// CHECK: %[[I:.*]] = arith.remui %[[ID]], %c4
// CHECK: %[[BH:.*]] = arith.divui %[[ID]], %c4
// CHECK: %[[H:.*]] = arith.remui %[[BH]], %c3
// CHECK: %[[B:.*]] = arith.divui %[[BH]], %c3
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c5 step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<4xf32>) {
// CHECK: vector.load %[[IN]][%[[B]], %[[H]], %[[I]], %{{.*}}] : memref<2x3x4x4xf32>, vector<4xf32>
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %[[I]]] : memref<2x3x4xf32>
// CHECK: gpu.return

module {
  func.func private @"T.fwd_bwd_k0"(%in: memref<2x3x4x4xf32>, %out: memref<2x3x4xf32>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %zero = arith.constant dense<0.0> : vector<4xf32>
    scf.parallel (%b, %h, %i) = (%c0, %c0, %c0) to (%c2, %c3, %c4) step (%c1, %c1, %c1) {
      %sum = scf.for %j = %c0 to %c5 step %c1 iter_args(%acc = %zero) -> (vector<4xf32>) {
        %row = vector.load %in[%b, %h, %i, %c0] : memref<2x3x4x4xf32>, vector<4xf32>
        %next = arith.addf %acc, %row : vector<4xf32>
        scf.yield %next : vector<4xf32>
      }
      %total = vector.extract %sum[0] : f32 from vector<4xf32>
      memref.store %total, %out[%b, %h, %i] : memref<2x3x4xf32>
      scf.reduce
    } {mdl.reduction = 20 : i64}
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<1024xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c512 = arith.constant 512 : index
    %in = memref.view %arena[%c0][] : memref<1024xi8> to memref<2x3x4x4xf32>
    %out = memref.view %arena[%c512][] : memref<1024xi8> to memref<2x3x4xf32>
    call @"T.fwd_bwd_k0"(%in, %out) : (memref<2x3x4x4xf32>, memref<2x3x4xf32>) -> ()
    return
  }
}
