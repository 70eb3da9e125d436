// --mdl-elide-copies: an elementwise generic whose fresh output is only
// copied into another memref writes that memref instead, when the generic
// reads it (if at all) element for element where it writes and nothing
// between the generic and the copy touches it. Distinct mdlrt.buffer symbols
// never share memory (function arguments might).
// RUN: modelc-opt %s --mdl-elide-copies --split-input-file --allow-unregistered-dialect | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// A gradient accumulated in place: g = g + d writes g; no allocation, no
// copy.
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[G:.*]] = mdlrt.buffer @g
// CHECK: %[[D:.*]] = mdlrt.buffer @d
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[G]], %[[D]] : memref<8xf32>, memref<8xf32>) outs(%[[G]] : memref<8xf32>)
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
func.func @accumulate() {
  %g = mdlrt.buffer @g : memref<8xf32>
  %d = mdlrt.buffer @d : memref<8xf32>
  %t = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%g, %d : memref<8xf32>, memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  memref.copy %t, %g : memref<8xf32> to memref<8xf32>
  memref.dealloc %t : memref<8xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// The target read at another element (a reversal): each element would be
// overwritten before another point reads it, so the copy stays.
// CHECK-LABEL: func.func @reversed
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @reversed() {
  %g = mdlrt.buffer @g : memref<8xf32>
  %t = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (7 - d0)>, #id], iterator_types = ["parallel"]}
      ins(%g : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  }
  memref.copy %t, %g : memref<8xf32> to memref<8xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Something between the generic and the copy reads the target's old value:
// the copy stays.
// CHECK-LABEL: func.func @read_between
// CHECK: memref.alloc
// CHECK: "test.use"
// CHECK: memref.copy
func.func @read_between() {
  %g = mdlrt.buffer @g : memref<8xf32>
  %d = mdlrt.buffer @d : memref<8xf32>
  %t = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%d : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%b: f32, %out: f32):
    %s = arith.negf %b : f32
    linalg.yield %s : f32
  }
  "test.use"(%g) : (memref<8xf32>) -> ()
  memref.copy %t, %g : memref<8xf32> to memref<8xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// The temporary has another reader: the copy stays.
// CHECK-LABEL: func.func @temporary_read
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @temporary_read() {
  %g = mdlrt.buffer @g : memref<8xf32>
  %d = mdlrt.buffer @d : memref<8xf32>
  %t = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%d : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%b: f32, %out: f32):
    linalg.yield %b : f32
  }
  "test.use"(%t) : (memref<8xf32>) -> ()
  memref.copy %t, %g : memref<8xf32> to memref<8xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// A reduction's output is read before it is written: not elementwise, the
// copy stays.
// CHECK-LABEL: func.func @reduction
// CHECK: memref.copy
func.func @reduction() {
  %g = mdlrt.buffer @g : memref<4xf32>
  %d = mdlrt.buffer @d : memref<4x8xf32>
  %t = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%d : memref<4x8xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%b: f32, %out: f32):
    %s = arith.addf %out, %b : f32
    linalg.yield %s : f32
  }
  memref.copy %t, %g : memref<4xf32> to memref<4xf32>
  return
}
