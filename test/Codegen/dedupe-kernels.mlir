// --mdl-dedupe-kernels: kernels with the same signature and bodies equal op
// for op become the first of them, across functions; the calls of the
// others call it with their own arguments; the kernels left are numbered
// 0..n-1 in their old order and their names follow. Equality is
// structural: a constant, a shape, an attribute or the order in which a
// body uses its arguments keeps kernels apart; names and locations do not.
// RUN: modelc-opt %s --mdl-dedupe-kernels --split-input-file | FileCheck %s

// CHECK-LABEL: func.func private @T.fwd_bwd_k0
// CHECK-SAME: attributes {mdl.kernel = 0 : i64}
// CHECK: arith.mulf
// CHECK-LABEL: func.func private @T.fwd_bwd_k1
// CHECK-SAME: attributes {mdl.kernel = 1 : i64}
// CHECK: arith.constant 3.000000e+00
// CHECK-LABEL: func.func @T.fwd_bwd
// CHECK: call @T.fwd_bwd_k0(%[[A:.*]], %[[B:.*]]) :
// CHECK-NEXT: call @T.fwd_bwd_k0(%[[B]], %[[A]]) :
// CHECK-NEXT: call @T.fwd_bwd_k1(%[[A]], %[[B]]) :
// CHECK-NEXT: return
// The next function's kernels: k3 is k0 again (another location), k4 uses
// its arguments the other way round, k5 is f64.
// CHECK-LABEL: func.func private @T.update_k2
// CHECK-SAME: attributes {mdl.kernel = 2 : i64}
// CHECK: outs(%arg0
// CHECK-LABEL: func.func private @T.update_k3
// CHECK-SAME: (%{{.*}}: memref<4xf64>, %{{.*}}: memref<4xf64>) attributes {mdl.kernel = 3 : i64}
// CHECK-LABEL: func.func @T.update
// CHECK: call @T.fwd_bwd_k0(%[[A:.*]], %[[B:.*]]) :
// CHECK-NEXT: call @T.update_k2(%[[A]], %[[B]]) :
// CHECK-NEXT: call @T.update_k3(
// CHECK-NEXT: return
// CHECK-NOT: func.func private
#map = affine_map<(i) -> (i)>
module {
  func.func private @T.fwd_bwd_k0(%x: memref<4xf32>, %y: memref<4xf32>) attributes {mdl.kernel = 0 : i64} {
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.mulf %in, %in : f32
      linalg.yield %r : f32
    }
    return
  }
  // The same work on other buffers.
  func.func private @T.fwd_bwd_k1(%a: memref<4xf32>, %b: memref<4xf32>) attributes {mdl.kernel = 1 : i64} {
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
    ^bb0(%i: f32, %o: f32):
      %s = arith.mulf %i, %i : f32
      linalg.yield %s : f32
    }
    return
  }
  // Another constant.
  func.func private @T.fwd_bwd_k2(%x: memref<4xf32>, %y: memref<4xf32>) attributes {mdl.kernel = 2 : i64} {
    %c = arith.constant 3.0 : f32
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.mulf %in, %c : f32
      linalg.yield %r : f32
    }
    return
  }
  func.func @T.fwd_bwd(%arena: memref<64xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %a = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
    %b = memref.view %arena[%c16][] : memref<64xi8> to memref<4xf32>
    call @T.fwd_bwd_k0(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
    call @T.fwd_bwd_k1(%b, %a) : (memref<4xf32>, memref<4xf32>) -> ()
    call @T.fwd_bwd_k2(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
    return
  }
  func.func private @T.update_k3(%x: memref<4xf32>, %y: memref<4xf32>) attributes {mdl.kernel = 3 : i64} {
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.mulf %in, %in : f32 loc("elsewhere.mdl":3:4)
      linalg.yield %r : f32
    }
    return
  }
  // The arguments the other way round: another kernel.
  func.func private @T.update_k4(%x: memref<4xf32>, %y: memref<4xf32>) attributes {mdl.kernel = 4 : i64} {
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%y : memref<4xf32>) outs(%x : memref<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.mulf %in, %in : f32
      linalg.yield %r : f32
    }
    return
  }
  // Another element type.
  func.func private @T.update_k5(%x: memref<4xf64>, %y: memref<4xf64>) attributes {mdl.kernel = 5 : i64} {
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : memref<4xf64>) outs(%y : memref<4xf64>) {
    ^bb0(%in: f64, %out: f64):
      %r = arith.mulf %in, %in : f64
      linalg.yield %r : f64
    }
    return
  }
  func.func @T.update(%arena: memref<64xi8>) attributes {mdl.entry = "T", mdl.function = "update"} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %a = memref.view %arena[%c0][] : memref<64xi8> to memref<4xf32>
    %b = memref.view %arena[%c16][] : memref<64xi8> to memref<4xf32>
    %d = memref.view %arena[%c32][] : memref<64xi8> to memref<4xf64>
    call @T.update_k3(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
    call @T.update_k4(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
    call @T.update_k5(%d, %d) : (memref<4xf64>, memref<4xf64>) -> ()
    return
  }
}

// -----

// Launch constants are arguments: two dropout sites with other salts are
// one kernel once outlined; the pipeline's two passes show it.
// RUN: modelc-opt %s --split-input-file --mdl-outline-kernels --mdl-dedupe-kernels \
// RUN:   | FileCheck %s --check-prefix=SITES
// SITES: // -----
// SITES: func.func private @T.fwd_bwd_k0(%{{.*}}: memref<8xf32>, %{{.*}}: i64) attributes {mdl.kernel = 0 : i64}
// SITES-NOT: func.func private
// SITES: func.func @T.fwd_bwd
// SITES: %[[S1:.*]] = mdlrt.launch_constant 111
// SITES: call @T.fwd_bwd_k0(%{{.*}}, %[[S1]])
// SITES: %[[S2:.*]] = mdlrt.launch_constant 222
// SITES: call @T.fwd_bwd_k0(%{{.*}}, %[[S2]])
#map1 = affine_map<(i) -> (i)>
module attributes {mdl.arena_bytes = 128 : i64, mdl.persistent_bytes = 128 : i64} {
  func.func @"T.fwd_bwd"(%arena: memref<128xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %first = memref.view %arena[%c0][] : memref<128xi8> to memref<8xf32>
    %second = memref.view %arena[%c64][] : memref<128xi8> to memref<8xf32>
    %s1 = mdlrt.launch_constant 111
    linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%first : memref<8xf32>) {
    ^bb0(%out: f32):
      %f = arith.uitofp %s1 : i64 to f32
      linalg.yield %f : f32
    }
    %s2 = mdlrt.launch_constant 222
    linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%second : memref<8xf32>) {
    ^bb0(%out: f32):
      %f = arith.uitofp %s2 : i64 to f32
      linalg.yield %f : f32
    }
    return
  }
}
