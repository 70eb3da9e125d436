// --mdl-plan-memory: parameters then buffers at 64-byte aligned offsets in
// declaration order; temporaries first fit in the scratch region after
// them, reusing space whose liveness (through views) has ended; every
// program function takes the arena.
// RUN: modelc-opt %s --mdl-plan-memory --split-input-file --verify-diagnostics --allow-unregistered-dialect | FileCheck %s

// Persistent region: @w [0, 60), @b [64, 84), @"grad:w" [128, 188),
// @"T:hyper:lr" [192, 200); 256 bytes aligned. Scratch: fwd_bwd needs 512,
// update 4096, so the arena is 256 + 4096. mdl.scratch_peak names the
// function with the most scratch and the bytes live at its fullest point,
// by element type (for `describe`).
// CHECK-LABEL: module attributes {mdl.arena_bytes = 4352 : i64, mdl.persistent_bytes = 256 : i64, mdl.scratch_peak = {by_type = {{\[\[}}f32, 4016]], function = "T.update", live_bytes = 4016 : i64}}
// CHECK: mdl.param @w {{.*}} {offset = 0 : i64}
// CHECK: mdl.param @b {{.*}} {offset = 64 : i64}
// CHECK: mdl.buffer @"grad:w" {{.*}}offset = 128 : i64
// CHECK: mdl.buffer @"T:hyper:lr" {{.*}}offset = 192 : i64
module {
  mdl.param @w : tensor<3x5xf32> = zeros()
  mdl.param @b : tensor<5xf32> = zeros()
  mdl.buffer @"grad:w" : tensor<3x5xf32> {entry = "", key = "w", phase = "shared", role = "grad"}
  mdl.buffer @"T:hyper:lr" : tensor<f64> {entry = "T", key = "lr", phase = "train", role = "hyper"}
  memref.global "private" constant @cst : memref<2xf32> = dense<[1.0, 2.0]>

  // %t0 [0, 400) stays live through its collapsed view, so %t2 cannot take
  // offset 0, but takes %t1's place once %t1 is dead; %t3 comes after all
  // of them and reuses offset 0. Views are at 256 + the scratch offset.
  // CHECK-LABEL: func.func @T.fwd_bwd
  // CHECK-SAME: (%[[ARENA:.*]]: memref<4352xi8>)
  // CHECK-SAME: mdl.scratch_bytes = 512 : i64
  // CHECK: %[[O0:.*]] = arith.constant 0 : index
  // CHECK: memref.view %[[ARENA]][%[[O0]]][] : memref<4352xi8> to memref<3x5xf32>
  // CHECK: %[[O1:.*]] = arith.constant 256 : index
  // CHECK: %[[T0:.*]] = memref.view %[[ARENA]][%[[O1]]][] : memref<4352xi8> to memref<2x50xf32>
  // CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[T0]]
  // CHECK: %[[O2:.*]] = arith.constant 704 : index
  // CHECK: %[[T1:.*]] = memref.view %[[ARENA]][%[[O2]]][] : memref<4352xi8> to memref<10xf32>
  // CHECK: %[[O3:.*]] = arith.constant 704 : index
  // CHECK: %[[T2:.*]] = memref.view %[[ARENA]][%[[O3]]][] : memref<4352xi8> to memref<16xf32>
  // CHECK: %[[O4:.*]] = arith.constant 256 : index
  // CHECK: %[[T3:.*]] = memref.view %[[ARENA]][%[[O4]]][] : memref<4352xi8> to memref<8xf64>
  // CHECK-NOT: memref.alloc
  // CHECK-NOT: memref.dealloc
  // CHECK: return
  func.func @"T.fwd_bwd"() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %zero = arith.constant 0.0 : f32
    %zero64 = arith.constant 0.0 : f64
    %w = mdlrt.buffer @w : memref<3x5xf32>
    linalg.fill ins(%zero : f32) outs(%w : memref<3x5xf32>)
    %t0 = memref.alloc() : memref<2x50xf32>
    %flat = memref.collapse_shape %t0 [[0, 1]] : memref<2x50xf32> into memref<100xf32>
    %t1 = memref.alloc() : memref<10xf32>
    linalg.fill ins(%zero : f32) outs(%t1 : memref<10xf32>)
    %t2 = memref.alloc() : memref<16xf32>
    linalg.fill ins(%zero : f32) outs(%flat : memref<100xf32>)
    linalg.fill ins(%zero : f32) outs(%t2 : memref<16xf32>)
    %t3 = memref.alloc() : memref<8xf64>
    linalg.fill ins(%zero64 : f64) outs(%t3 : memref<8xf64>)
    memref.dealloc %t3 : memref<8xf64>
    return
  }

  // Both temporaries are live together: [0, 4000) and [4032, 4048). A
  // buffer has the same offset as in every other function; a constant
  // stays a global.
  // CHECK-LABEL: func.func @T.update
  // CHECK-SAME: (%[[ARENA:.*]]: memref<4352xi8>)
  // CHECK-SAME: mdl.scratch_bytes = 4096 : i64
  // CHECK: memref.get_global @cst
  // CHECK: %[[G:.*]] = arith.constant 128 : index
  // CHECK: memref.view %[[ARENA]][%[[G]]][] : memref<4352xi8> to memref<3x5xf32>
  // CHECK: %[[A:.*]] = arith.constant 256 : index
  // CHECK: memref.view %[[ARENA]][%[[A]]][] : memref<4352xi8> to memref<1000xf32>
  // CHECK: %[[S:.*]] = arith.constant 4288 : index
  // CHECK: memref.view %[[ARENA]][%[[S]]][] : memref<4352xi8> to memref<4xf32>
  func.func @"T.update"() attributes {mdl.entry = "T", mdl.function = "update"} {
    %zero = arith.constant 0.0 : f32
    %cst = memref.get_global @cst : memref<2xf32>
    %g = mdlrt.buffer @"grad:w" : memref<3x5xf32>
    linalg.fill ins(%zero : f32) outs(%g : memref<3x5xf32>)
    %big = memref.alloc() : memref<1000xf32>
    %small = memref.alloca() : memref<4xf32>
    linalg.fill ins(%zero : f32) outs(%small : memref<4xf32>)
    linalg.fill ins(%zero : f32) outs(%big : memref<1000xf32>)
    return
  }

  // A temporary inside a loop body has one place for all iterations, live
  // for the whole loop and not beyond: %before (used in the loop) and %tmp
  // are live together, and after the loop %after takes the lowest place.
  // CHECK-LABEL: func.func @T.eval
  // CHECK-SAME: mdl.scratch_bytes = 128 : i64
  // CHECK: %[[BEFORE:.*]] = arith.constant 256 : index
  // CHECK: memref.view %{{.*}}[%[[BEFORE]]][] : memref<4352xi8> to memref<4xf32>
  // CHECK: scf.for
  // CHECK: %[[IN:.*]] = arith.constant 320 : index
  // CHECK: memref.view %{{.*}}[%[[IN]]][] : memref<4352xi8> to memref<4xf32>
  // CHECK: %[[AFTER:.*]] = arith.constant 256 : index
  // CHECK: memref.view %{{.*}}[%[[AFTER]]][] : memref<4352xi8> to memref<4xf32>
  func.func @"T.eval"() attributes {mdl.entry = "T", mdl.function = "eval"} {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %before = memref.alloc() : memref<4xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %tmp = memref.alloc() : memref<4xf32>
      memref.copy %before, %tmp : memref<4xf32> to memref<4xf32>
    }
    %after = memref.alloc() : memref<4xf32>
    linalg.fill ins(%zero : f32) outs(%after : memref<4xf32>)
    return
  }

  // Functions that are not program functions keep their signature.
  // CHECK-LABEL: func.func private @helper()
  func.func private @helper() {
    return
  }
}

// -----

// A module with buffers but no functions: only the persistent region.
// CHECK-LABEL: module attributes {mdl.arena_bytes = 128 : i64, mdl.persistent_bytes = 128 : i64}
// CHECK: mdl.buffer @"I:in:x" {{.*}}offset = 0 : i64
// CHECK: mdl.buffer @"I:out:y" {{.*}}offset = 64 : i64
module {
  mdl.buffer @"I:in:x" : tensor<2x3xui8> {entry = "I", key = "x", phase = "infer", role = "input"}
  mdl.buffer @"I:out:y" : tensor<2xi64> {entry = "I", key = "y", phase = "infer", role = "output"}
}

// -----

// The fullest point counts every temporary live there, by element type:
// %a (bf16, 128 bytes) and %b (f32, 256) overlap; %c (f32, 512) comes
// after %a is dead but while %b lives, so the peak is %b + %c (768), less
// than the 896 bytes first fit needs (%c does not fit in %a's 128).
// CHECK-LABEL: module attributes {mdl.arena_bytes = 896 : i64, mdl.persistent_bytes = 0 : i64, mdl.scratch_peak = {by_type = {{\[\[}}f32, 768]], function = "T.fwd_bwd", live_bytes = 768 : i64}}
// CHECK-LABEL: module attributes {{.*}}mdl.scratch_peak = {by_type = {{\[\[}}bf16, 128], [f32, 256]], function = "T.eval", live_bytes = 384 : i64}}
module {
  func.func @T.fwd_bwd() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %a = memref.alloc() : memref<64xbf16>
    %b = memref.alloc() : memref<64xf32>
    "test.use"(%a, %b) : (memref<64xbf16>, memref<64xf32>) -> ()
    %c = memref.alloc() : memref<128xf32>
    "test.use"(%b, %c) : (memref<64xf32>, memref<128xf32>) -> ()
    return
  }
}

// -----

module {
  func.func @T.eval() attributes {mdl.entry = "T", mdl.function = "eval"} {
    %a = memref.alloc() : memref<64xbf16>
    %b = memref.alloc() : memref<64xf32>
    "test.use"(%a, %b) : (memref<64xbf16>, memref<64xf32>) -> ()
    return
  }
}

// -----

func.func @dynamic() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
  %n = arith.constant 4 : index
  // expected-error @+1 {{the memory plan needs a static shape with the identity layout in the default memory space, got 'memref<?xf32>'}}
  %t = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

func.func @unknown_buffer() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
  // expected-error @+1 {{no mdl.param, mdl.buffer or mdl.flat_view named @nope}}
  %b = mdlrt.buffer @nope : memref<4xf32>
  return
}

// -----

mdl.param @w : tensor<3x5xf32> = zeros()
func.func @wrong_type() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
  // expected-error @+1 {{the memref type 'memref<5x3xf32>' does not match @w : 'tensor<3x5xf32>'}}
  %b = mdlrt.buffer @w : memref<5x3xf32>
  return
}

// -----

func.func @carried_across_iterations() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %init = memref.alloc() : memref<4xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%prev = %init) -> (memref<4xf32>) {
    // expected-error @+1 {{the memory plan cannot place a temporary carried from one loop iteration to the next; the loop should update its tensor in place}}
    %next = memref.alloc() : memref<4xf32>
    memref.copy %prev, %next : memref<4xf32> to memref<4xf32>
    scf.yield %next : memref<4xf32>
  }
  return
}

// -----

// expected-error @+1 {{a program function takes no arguments and returns nothing before the memory plan}}
func.func @with_argument(%x: memref<4xf32>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
  return
}

// -----

func.func @not_a_program_function() {
  // expected-error @+1 {{mdlrt.buffer outside a program function (one marked mdl.function)}}
  %b = mdlrt.buffer @x : memref<4xf32>
  return
}
mdl.buffer @x : tensor<4xf32> {entry = "", key = "x", phase = "shared", role = "grad"}

// -----

// A flat view's members are placed together where the first of them would
// be, each from a 64-byte boundary (@a [0, 20), @c [64, 68): the view
// [0, 68), 17 f32), whatever their declaration order; @b, in no view, comes
// after. The gradient view is laid out the same way. A function loading the
// view reads the whole range.
// CHECK-LABEL: module attributes {mdl.arena_bytes = 320 : i64, mdl.persistent_bytes = 320 : i64
// CHECK: mdl.param @a {{.*}} {offset = 0 : i64}
// CHECK: mdl.param @b {{.*}} {offset = 128 : i64}
// CHECK: mdl.param @c {{.*}} {offset = 64 : i64}
// CHECK: mdl.buffer @"grad:c" {{.*}}offset = 256 : i64
// CHECK: mdl.buffer @"grad:a" {{.*}}offset = 192 : i64
// CHECK: mdl.flat_view @params {{.*}} {offset = 0 : i64}
// CHECK: mdl.flat_view @grads {{.*}} {offset = 192 : i64}
// CHECK-LABEL: func.func @T.update
// CHECK: %[[AT:.*]] = arith.constant 0 : index
// CHECK: memref.view %{{.*}}[%[[AT]]][] : memref<320xi8> to memref<17xf32>
module {
  mdl.param @a : tensor<5xf32> = zeros()
  mdl.param @b : tensor<3xf32> = zeros()
  mdl.param @c : tensor<f32> = zeros()
  mdl.buffer @"grad:c" : tensor<f32> {entry = "", key = "c", phase = "shared", role = "grad"}
  mdl.buffer @"grad:a" : tensor<5xf32> {entry = "", key = "a", phase = "shared", role = "grad"}
  mdl.flat_view @params : tensor<17xf32> of [@a, @c]
  mdl.flat_view @grads : tensor<17xf32> of [@"grad:a", @"grad:c"]
  func.func @T.update() attributes {mdl.entry = "T", mdl.function = "update"} {
    %p = mdlrt.buffer @params : memref<17xf32>
    "test.use"(%p) : (memref<17xf32>) -> ()
    return
  }
}

// -----

mdl.param @a : tensor<5xf32> = zeros()
mdl.param @c : tensor<f32> = zeros()
mdl.flat_view @one : tensor<1xf32> of [@c]
// expected-error @+1 {{@c is already a member of @one}}
mdl.flat_view @two : tensor<17xf32> of [@a, @c]

// -----

mdl.param @a : tensor<5xf32> = zeros()
mdl.param @c : tensor<f32> = zeros()
mdl.flat_view @params : tensor<17xf32> of [@a, @c]
// expected-error @+1 {{uses both the flat view @params and its member @a}}
func.func @T.update() attributes {mdl.entry = "T", mdl.function = "update"} {
  %p = mdlrt.buffer @params : memref<17xf32>
  %a = mdlrt.buffer @a : memref<5xf32>
  "test.use"(%p, %a) : (memref<17xf32>, memref<5xf32>) -> ()
  return
}
