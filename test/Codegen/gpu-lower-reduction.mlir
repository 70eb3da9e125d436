// --mdl-lower-to-gpu, reductions. Innermost loop a reduction and the body
// out = combine(out, f(ins)): one warp per output, the lanes striding over
// the reduction from the combiner's identity, a butterfly of gpu.shuffle
// xor, and lane 0 storing combine(out, total). Any other reduction: a thread
// per output, the reduction loops serial in the CPU's order. Each kernel
// says how many terms one output sums (mdl.reduction, for kernelcheck).
// RUN: modelc-opt %s --split-input-file --mdl-lower-to-gpu --cse | FileCheck %s

// A sum of squares per row: 16 rows, 8 warps a block, 2 blocks; addf's
// identity is -0 (so that a sum of -0s stays -0).
// CHECK-LABEL: gpu.func @T_fwd_bwd_k0(
// CHECK-SAME: mdl.block = 256 : i64, mdl.grid = 2 : i64, mdl.reduction = 32 : i64
// CHECK-DAG: %[[X:.*]] = memref.view {{.*}} to memref<16x32xf32>
// CHECK-DAG: %[[SUM:.*]] = memref.view {{.*}} to memref<16xf32>
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %[[C32]]
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %[[C32]]
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[BID:.*]] = gpu.block_id x
// CHECK: %[[START:.*]] = arith.muli %[[BID]], %[[C8]]
// CHECK: %[[FIRST:.*]] = arith.addi %[[START]], %[[WARP]]
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// CHECK: %[[STRIDE:.*]] = arith.muli %[[GRID]], %[[C8]]
// CHECK: scf.for %[[ROW:.*]] = %[[FIRST]] to %{{.*}} step %[[STRIDE]] {
// CHECK: %[[ID:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[PART:.*]] = scf.for %[[J:.*]] = %[[LANE]] to %[[C32]] step %[[C32]] iter_args(%[[ACC:.*]] = %[[ID]]) -> (f32) {
// CHECK: %[[E:.*]] = memref.load %[[X]][%[[ROW]], %[[J]]]
// CHECK: %[[SQ:.*]] = arith.mulf %[[E]], %[[E]]
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]]
// CHECK: scf.yield %[[NEXT]]
// CHECK: %[[S16:.*]], %{{.*}} = gpu.shuffle xor %[[PART]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[T16:.*]] = arith.addf %[[PART]], %[[S16]]
// CHECK: gpu.shuffle xor %[[T16]]
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle xor
// CHECK: %[[TOTAL:.*]] = arith.addf %{{.*}}, %[[S1]]
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[LANE]], %{{.*}}
// CHECK: scf.if %[[IS0]] {
// CHECK: %[[OLD:.*]] = memref.load %[[SUM]][%[[ROW]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]]
// CHECK: memref.store %[[NEW]], %[[SUM]][%[[ROW]]]

#id = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
module {
  func.func private @"T.fwd_bwd_k0"(%arena: memref<8192xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c4096 = arith.constant 4096 : index
    %x = memref.view %arena[%c0][] : memref<8192xi8> to memref<16x32xf32>
    %sum = memref.view %arena[%c4096][] : memref<8192xi8> to memref<16xf32>
    linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<16x32xf32>) outs(%sum : memref<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %sq = arith.mulf %in, %in : f32
      %acc = arith.addf %out, %sq : f32
      linalg.yield %acc : f32
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    call @"T.fwd_bwd_k0"(%arena) : (memref<8192xi8>) -> ()
    return
  }
}

// -----

// A max over the innermost of three loops, the output read as the
// combiner's second operand: the identity is -inf, and lane 0 stores
// maximumf(total, out) with the old value from the output.
// CHECK-LABEL: gpu.func @T_fwd_bwd_k1(
// CHECK-SAME: mdl.block = 256 : i64, mdl.grid = 50 : i64, mdl.reduction = 20 : i64
// CHECK-DAG: %[[MAX:.*]] = memref.view {{.*}} to memref<4x100xf32>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[I1:.*]] = arith.remui %[[ROW]], %{{.*}}
// CHECK: %[[I0:.*]] = arith.divui %[[ROW]], %{{.*}}
// CHECK: %[[ID:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[C20:.*]] = arith.constant 20 : index
// CHECK: %[[PART:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[C20]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[ID]]) -> (f32) {
// CHECK: %[[E:.*]] = memref.load %{{.*}}[%[[I0]], %[[I1]], %[[K]]]
// CHECK: arith.maximumf %[[E]], %[[ACC]]
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: %[[TOTAL:.*]] = arith.maximumf
// CHECK: scf.if
// CHECK: %[[OLD:.*]] = memref.load %[[MAX]][%[[I0]], %[[I1]]]
// CHECK: %[[NEW:.*]] = arith.maximumf %[[TOTAL]], %[[OLD]]
// CHECK: memref.store %[[NEW]], %[[MAX]][%[[I0]], %[[I1]]]

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d1)>
module {
  func.func private @"T.fwd_bwd_k1"(%arena: memref<65536xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c32768 = arith.constant 32768 : index
    %x = memref.view %arena[%c0][] : memref<65536xi8> to memref<4x100x20xf32>
    %max = memref.view %arena[%c32768][] : memref<65536xi8> to memref<4x100xf32>
    linalg.generic {indexing_maps = [#id3, #out3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : memref<4x100x20xf32>) outs(%max : memref<4x100xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %in, %out : f32
      linalg.yield %m : f32
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<65536xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    call @"T.fwd_bwd_k1"(%arena) : (memref<65536xi8>) -> ()
    return
  }
}

// -----

// f64: the shuffles move 32 bits, so each step moves the two halves; four
// rows take four warps.
// CHECK-LABEL: gpu.func @T_fwd_bwd_k2(
// CHECK-SAME: mdl.block = 128 : i64, mdl.grid = 1 : i64, mdl.reduction = 8 : i64
// CHECK: %[[PART:.*]] = scf.for {{.*}} -> (f64)
// CHECK: %[[BITS:.*]] = arith.bitcast %[[PART]] : f64 to i64
// CHECK: %[[LO:.*]] = arith.trunci %[[BITS]] : i64 to i32
// CHECK: %[[SLO:.*]], %{{.*}} = gpu.shuffle xor %[[LO]], %{{.*}}, %{{.*}} : i32
// CHECK: %[[HI64:.*]] = arith.shrui %[[BITS]], %{{.*}} : i64
// CHECK: %[[HI:.*]] = arith.trunci %[[HI64]] : i64 to i32
// CHECK: %[[SHI:.*]], %{{.*}} = gpu.shuffle xor %[[HI]], %{{.*}}, %{{.*}} : i32
// CHECK: %[[LOW:.*]] = arith.extui %[[SLO]] : i32 to i64
// CHECK: %[[HIGH:.*]] = arith.extui %[[SHI]] : i32 to i64
// CHECK: %[[UP:.*]] = arith.shli %[[HIGH]], %{{.*}} : i64
// CHECK: %[[JOIN:.*]] = arith.ori %[[UP]], %[[LOW]] : i64
// CHECK: %[[OTHER:.*]] = arith.bitcast %[[JOIN]] : i64 to f64
// CHECK: arith.addf %[[PART]], %[[OTHER]] : f64
// CHECK-COUNT-8: gpu.shuffle xor

#id = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
module {
  func.func private @"T.fwd_bwd_k2"(%arena: memref<8192xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c4096 = arith.constant 4096 : index
    %x = memref.view %arena[%c0][] : memref<8192xi8> to memref<4x8xf64>
    %sum = memref.view %arena[%c4096][] : memref<8192xi8> to memref<4xf64>
    linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<4x8xf64>) outs(%sum : memref<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %acc = arith.addf %out, %in : f64
      linalg.yield %acc : f64
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    call @"T.fwd_bwd_k2"(%arena) : (memref<8192xi8>) -> ()
    return
  }
}

// -----

// A column sum (the reduction is the outer loop): a thread per column, the
// rows serial in the thread, each step the CPU's load-add-store.
// CHECK-LABEL: gpu.func @T_fwd_bwd_k3(
// CHECK-SAME: mdl.block = 32 : i64, mdl.grid = 1 : i64, mdl.reduction = 16 : i64
// CHECK-NOT: gpu.shuffle
// CHECK: scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %[[C16]] step
// CHECK: %[[E:.*]] = memref.load %{{.*}}[%[[ROW]], %[[COL]]] : memref<16x32xf32>
// CHECK: %[[OLD:.*]] = memref.load %[[OUT:.*]][%[[COL]]] : memref<32xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[E]]
// CHECK: memref.store %[[NEW]], %[[OUT]][%[[COL]]]

#id = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>
module {
  func.func private @"T.fwd_bwd_k3"(%arena: memref<8192xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c4096 = arith.constant 4096 : index
    %x = memref.view %arena[%c0][] : memref<8192xi8> to memref<16x32xf32>
    %sum = memref.view %arena[%c4096][] : memref<8192xi8> to memref<32xf32>
    linalg.generic {indexing_maps = [#id, #cols], iterator_types = ["reduction", "parallel"]}
        ins(%x : memref<16x32xf32>) outs(%sum : memref<32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %acc = arith.addf %out, %in : f32
      linalg.yield %acc : f32
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    call @"T.fwd_bwd_k3"(%arena) : (memref<8192xi8>) -> ()
    return
  }
}

// -----

// An argmax (two outputs, a body with no single combiner): a thread per
// row, the row serial; linalg.index is the loop's coordinate.
// CHECK-LABEL: gpu.func @T_fwd_bwd_k4(
// CHECK-SAME: mdl.block = 32 : i64, mdl.grid = 1 : i64, mdl.reduction = 32 : i64
// CHECK-NOT: gpu.shuffle
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[JI:.*]] = arith.index_cast %[[J]] : index to i32
// CHECK: arith.select %{{.*}}, %[[JI]], %{{.*}} : i32
// CHECK-COUNT-2: memref.store

#id = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
module {
  func.func private @"T.fwd_bwd_k4"(%arena: memref<8192xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c4096 = arith.constant 4096 : index
    %c6144 = arith.constant 6144 : index
    %x = memref.view %arena[%c0][] : memref<8192xi8> to memref<16x32xf32>
    %best = memref.view %arena[%c4096][] : memref<8192xi8> to memref<16xf32>
    %arg = memref.view %arena[%c6144][] : memref<8192xi8> to memref<16xi32>
    linalg.generic {indexing_maps = [#id, #rows, #rows], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<16x32xf32>) outs(%best, %arg : memref<16xf32>, memref<16xi32>) {
    ^bb0(%in: f32, %b: f32, %a: i32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i32
      %gt = arith.cmpf ogt, %in, %b : f32
      %nb = arith.select %gt, %in, %b : f32
      %na = arith.select %gt, %ji, %a : i32
      linalg.yield %nb, %na : f32, i32
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    call @"T.fwd_bwd_k4"(%arena) : (memref<8192xi8>) -> ()
    return
  }
}

// -----

// A sum whose fill was folded into it (--mdl-fuse-elementwise): the row form
// starts lane 0 from the fill's value, 1.5, and never reads the output; the
// select of the first iteration is not in the lanes' loop.
// CHECK-LABEL: gpu.func @T_fwd_bwd_k5(
// CHECK-SAME: mdl.block = 256 : i64, mdl.grid = 2 : i64, mdl.reduction = 32 : i64
// CHECK-DAG: %[[START:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-DAG: %[[SUM:.*]] = memref.view {{.*}} to memref<16xf32>
// CHECK: scf.for
// CHECK-NOT: arith.select
// CHECK: gpu.shuffle xor
// CHECK: scf.if
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %[[START]], %{{.*}} : f32
// CHECK-NEXT: memref.store %[[NEW]], %[[SUM]]

#id = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
module {
  func.func private @"T.fwd_bwd_k5"(%arena: memref<8192xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c4096 = arith.constant 4096 : index
    %start = arith.constant 1.5 : f32
    %x = memref.view %arena[%c0][] : memref<8192xi8> to memref<16x32xf32>
    %sum = memref.view %arena[%c4096][] : memref<8192xi8> to memref<16xf32>
    linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<16x32xf32>) outs(%sum : memref<16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %j = linalg.index 1 : index
      %first = arith.cmpi eq, %j, %c0 : index
      %acc = arith.select %first, %start, %out : f32
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<8192xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    call @"T.fwd_bwd_k5"(%arena) : (memref<8192xi8>) -> ()
    return
  }
}
