// --mdl-lower-to-gpu, all-parallel work: one thread per point of the
// iteration space, the linear id blockIdx.x * block + threadIdx.x striding by
// gridDim.x * block, delinearised with the innermost loop fastest; a scalar
// store in thread 0 of one warp; the scalars a kernel derives from its
// buffers recomputed in every thread.
// RUN: modelc-opt %s --split-input-file --mdl-lower-to-gpu --cse | FileCheck %s

// A bias broadcast over rows: 512 points, 256 threads a block, 2 blocks.
// The kernel takes its buffers (x, b, y) as arguments; the program function
// keeps only its step list: the launch with the arena offsets of the views
// it passes (0, 2048, 4096) and the bytes the kernel writes (y: 2048 bytes
// at 4096, y's place in the arena).
// CHECK-LABEL: func.func @T.fwd_bwd(
// CHECK-SAME: mdl.gpu_steps = [{args = array<i64: 0, 2048, 4096>, launch = @modelc_kernels::@T_fwd_bwd_k0, writes = [{bytes = 2048 : i64, offset = 4096 : i64, type = f32}]}]
// CHECK-NEXT: return
// CHECK-LABEL: gpu.module @modelc_kernels
// CHECK: gpu.func @T_fwd_bwd_k0(%[[X:.*]]: memref<16x32xf32>, %[[B:.*]]: memref<32xf32>, %[[Y:.*]]: memref<16x32xf32>) kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>, mdl.block = 256 : i64, mdl.grid = 2 : i64
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[START:.*]] = arith.muli %[[BID]], %[[C256]]
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.addi %[[START]], %[[TID]]
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// CHECK: %[[STRIDE:.*]] = arith.muli %[[GRID]], %[[C256]]
// CHECK: %[[C512:.*]] = arith.constant 512 : index
// CHECK: scf.for %[[I:.*]] = %[[FIRST]] to %[[C512]] step %[[STRIDE]] {
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[COL:.*]] = arith.remui %[[I]], %[[C32]]
// CHECK: %[[ROW:.*]] = arith.divui %[[I]], %[[C32]]
// CHECK: %[[IN:.*]] = memref.load %[[X]][%[[ROW]], %[[COL]]]
// CHECK: %[[BIAS:.*]] = memref.load %[[B]][%[[COL]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[IN]], %[[BIAS]]
// CHECK: memref.store %[[SUM]], %[[Y]][%[[ROW]], %[[COL]]]
// CHECK: }
// CHECK: gpu.return

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
module {
  func.func private @"T.fwd_bwd_k0"(%x: memref<16x32xf32>, %b: memref<32xf32>, %y: memref<16x32xf32>) attributes {mdl.kernel = 0 : i64} {
    linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %b : memref<16x32xf32>, memref<32xf32>) outs(%y : memref<16x32xf32>) {
    ^bb0(%in: f32, %bias: f32, %out: f32):
      %sum = arith.addf %in, %bias : f32
      linalg.yield %sum : f32
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c2048 = arith.constant 2048 : index
    %c4096 = arith.constant 4096 : index
    %x = memref.view %arena[%c0][] : memref<8192xi8> to memref<16x32xf32>
    %b = memref.view %arena[%c2048][] : memref<8192xi8> to memref<32xf32>
    %y = memref.view %arena[%c4096][] : memref<8192xi8> to memref<16x32xf32>
    call @"T.fwd_bwd_k0"(%x, %b, %y) : (memref<16x32xf32>, memref<32xf32>, memref<16x32xf32>) -> ()
    return
  }
}

// -----

// memref.copy of a strided column block: 32 points, one warp; each thread
// reads through the subview's layout.
// CHECK-LABEL: gpu.func @T_fwd_bwd_k1(
// CHECK-SAME: mdl.block = 32 : i64, mdl.grid = 1 : i64
// CHECK: %[[COLS:.*]] = memref.subview
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[COL:.*]] = arith.remui %[[I]], %[[C4]]
// CHECK: %[[ROW:.*]] = arith.divui %[[I]], %[[C4]]
// CHECK: %[[E:.*]] = memref.load %[[COLS]][%[[ROW]], %[[COL]]] : memref<8x4xf32, strided<[16, 1], offset: 4>>
// CHECK: memref.store %[[E]], %{{.*}}[%[[ROW]], %[[COL]]] : memref<8x4xf32>

module {
  func.func private @"T.fwd_bwd_k1"(%arena: memref<8192xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c4096 = arith.constant 4096 : index
    %x = memref.view %arena[%c0][] : memref<8192xi8> to memref<8x16xf32>
    %y = memref.view %arena[%c4096][] : memref<8192xi8> to memref<8x4xf32>
    %cols = memref.subview %x[0, 4] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: 4>>
    memref.copy %cols, %y : memref<8x4xf32, strided<[16, 1], offset: 4>> to memref<8x4xf32>
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    call @"T.fwd_bwd_k1"(%arena) : (memref<8192xi8>) -> ()
    return
  }
}

// -----

// A scalar store: thread 0 of one warp; the load it stores is in every
// thread.
// CHECK-LABEL: gpu.func @T_update_k2(
// CHECK-SAME: mdl.block = 32 : i64, mdl.grid = 1 : i64
// CHECK: %[[HYPER:.*]] = memref.load %{{.*}}[] : memref<f64>
// CHECK: %[[LR:.*]] = arith.truncf %[[HYPER]]
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// CHECK: scf.if %[[ZERO]] {
// CHECK-NEXT: memref.store %[[LR]], %{{.*}}[] : memref<f32>
// CHECK-NEXT: }

module {
  func.func private @"T.update_k2"(%arena: memref<1024xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %hyper = memref.view %arena[%c0][] : memref<1024xi8> to memref<f64>
    %out = memref.view %arena[%c64][] : memref<1024xi8> to memref<f32>
    %lr64 = memref.load %hyper[] : memref<f64>
    %lr = arith.truncf %lr64 : f64 to f32
    memref.store %lr, %out[] : memref<f32>
    return
  }
  func.func @"T.update"(%arena: memref<1024xi8>) attributes {mdl.entry = "T", mdl.function = "update"} {
    call @"T.update_k2"(%arena) : (memref<1024xi8>) -> ()
    return
  }
}

// -----

// A learning rate derived from a hyperparameter in the arena: the kernel
// loads and computes it in every thread, then uses it per point.
// CHECK-LABEL: gpu.func @T_update_k3(
// CHECK-SAME: mdl.block = 64 : i64, mdl.grid = 1 : i64
// CHECK: %[[STEP:.*]] = memref.load %{{.*}}[] : memref<f64>
// CHECK: %[[DECAY:.*]] = arith.divf %{{.*}}, %[[STEP]] : f64
// CHECK: %[[LR:.*]] = arith.truncf %[[DECAY]] : f64 to f32
// CHECK: scf.for %[[I:.*]] =
// CHECK: %[[G:.*]] = memref.load %{{.*}}[%[[I]]]
// CHECK: %[[W:.*]] = memref.load %{{.*}}[%[[I]]]
// CHECK: %[[SCALED:.*]] = arith.mulf %[[LR]], %[[G]]
// CHECK: %[[NEW:.*]] = arith.subf %[[W]], %[[SCALED]]
// CHECK: memref.store %[[NEW]], %{{.*}}[%[[I]]]

#id1 = affine_map<(d0) -> (d0)>
module {
  func.func private @"T.update_k3"(%arena: memref<1024xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %c512 = arith.constant 512 : index
    %cst = arith.constant 1.000000e+00 : f64
    %hyper = memref.view %arena[%c0][] : memref<1024xi8> to memref<f64>
    %g = memref.view %arena[%c128][] : memref<1024xi8> to memref<64xf32>
    %w = memref.view %arena[%c512][] : memref<1024xi8> to memref<64xf32>
    %step = memref.load %hyper[] : memref<f64>
    %decay = arith.divf %cst, %step : f64
    %lr = arith.truncf %decay : f64 to f32
    linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%g : memref<64xf32>) outs(%w : memref<64xf32>) {
    ^bb0(%grad: f32, %weight: f32):
      %scaled = arith.mulf %lr, %grad : f32
      %new = arith.subf %weight, %scaled : f32
      linalg.yield %new : f32
    }
    return
  }
  func.func @"T.update"(%arena: memref<1024xi8>) attributes {mdl.entry = "T", mdl.function = "update"} {
    call @"T.update_k3"(%arena) : (memref<1024xi8>) -> ()
    return
  }
}
