// --mdl-outline-kernels: each piece of work of a planned program function
// (an op with regions, memref.copy, a scalar memref.store) becomes a kernel
// that takes the buffers it touches as arguments (views of the arena, in
// the order the work first uses them) and recomputes the constants and
// scalars it uses; mdlrt.gemm stays; kernels are numbered across the module
// in function order and calls pass the views. The second RUN shows that
// the pass leaves its own output as it is.
// RUN: modelc-opt %s --mdl-outline-kernels --split-input-file --verify-diagnostics \
// RUN:   | FileCheck %s
// RUN: modelc-opt %s --mdl-outline-kernels --mdl-outline-kernels --split-input-file \
// RUN:   --verify-diagnostics | FileCheck %s

// Kernel 0: the dropout-like linalg op, with the seed hash recomputed from
// the hyper buffers at 192 and 256 (the GEMM before it writes [384, 416)).
// CHECK-LABEL: func.func private @T.fwd_bwd_k0
// CHECK-SAME: (%[[T:.*]]: memref<2x4xf32>, %[[Y:.*]]: memref<2x4xf32>, %[[SEEDBUF:.*]]: memref<f64>, %[[CTRBUF:.*]]: memref<f64>) attributes {mdl.kernel = 0 : i64} {
// CHECK-NOT: memref.view
// CHECK: %[[SEED:.*]] = memref.load %[[SEEDBUF]][] : memref<f64>
// CHECK: %[[SEEDI:.*]] = arith.fptoui %[[SEED]] : f64 to i64
// CHECK: %[[CTR:.*]] = memref.load %[[CTRBUF]][] : memref<f64>
// CHECK: %[[CTRI:.*]] = arith.fptoui %[[CTR]] : f64 to i64
// CHECK: %[[HASH:.*]] = arith.xori %[[SEEDI]], %[[CTRI]] : i64
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[T]] : memref<2x4xf32>) outs(%[[Y]] : memref<2x4xf32>)
// CHECK: arith.trunci %[[HASH]] : i64 to i32
// CHECK: return
// CHECK-NEXT: }

// Kernel 1: the loop (an embedding-gradient-like scatter), whole, on the
// index, input and table buffers.
// CHECK-LABEL: func.func private @T.fwd_bwd_k1
// CHECK-SAME: (%{{.*}}: memref<2xindex>, %{{.*}}: memref<2x8xf32>, %{{.*}}: memref<4x8xf32>) attributes {mdl.kernel = 1 : i64} {
// CHECK-NOT: memref.load
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK: return

// Kernel 2: the copy.
// CHECK-LABEL: func.func private @T.fwd_bwd_k2
// CHECK-SAME: (%[[FROM:.*]]: memref<2x4xf32>, %[[TO:.*]]: memref<2x4xf32>) attributes {mdl.kernel = 2 : i64} {
// CHECK-NEXT: memref.copy %[[FROM]], %[[TO]]
// CHECK-NEXT: return

// Kernel 3: the same hash, cloned again.
// CHECK-LABEL: func.func private @T.fwd_bwd_k3
// CHECK-SAME: attributes {mdl.kernel = 3 : i64} {
// CHECK: memref.load
// CHECK: memref.load
// CHECK: arith.xori
// CHECK: linalg.generic
// CHECK: return

// The program function: the GEMM and the calls, in the original order,
// each passing its views; the loads and the hash only kernels used are
// gone.
// CHECK-LABEL: func.func @T.fwd_bwd
// CHECK-SAME: (%[[ARENA:.*]]: memref<1024xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
// CHECK-DAG: %[[C192:.*]] = arith.constant 192 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C320:.*]] = arith.constant 320 : index
// CHECK-DAG: %[[C384:.*]] = arith.constant 384 : index
// CHECK-DAG: %[[SEEDBUF:.*]] = memref.view %[[ARENA]][%[[C192]]][] : memref<1024xi8> to memref<f64>
// CHECK-DAG: %[[CTRBUF:.*]] = memref.view %[[ARENA]][%[[C256]]][] : memref<1024xi8> to memref<f64>
// CHECK-DAG: %[[Y:.*]] = memref.view %[[ARENA]][%[[C320]]][] : memref<1024xi8> to memref<2x4xf32>
// CHECK-DAG: %[[T:.*]] = memref.view %[[ARENA]][%[[C384]]][] : memref<1024xi8> to memref<2x4xf32>
// CHECK-NOT: memref.load
// CHECK-NOT: arith.xori
// CHECK: mdlrt.gemm
// CHECK-NEXT: call @T.fwd_bwd_k0(%[[T]], %[[Y]], %[[SEEDBUF]], %[[CTRBUF]]) : (memref<2x4xf32>, memref<2x4xf32>, memref<f64>, memref<f64>) -> ()
// CHECK: call @T.fwd_bwd_k1(
// CHECK: call @T.fwd_bwd_k2(%[[Y]], %{{.*}}) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
// CHECK-NEXT: call @T.fwd_bwd_k3(%[[Y]], %[[T]], %[[SEEDBUF]], %[[CTRBUF]])
// CHECK-NEXT: return

// The next function's kernels continue the numbering. Kernel 4 recomputes
// the learning rate; kernel 5 is the scalar store, whose value comes from
// a loop that only computes a scalar (cloned with it).
// CHECK-LABEL: func.func private @T.update_k4
// CHECK-SAME: attributes {mdl.kernel = 4 : i64} {
// CHECK: memref.load
// CHECK: %[[LR:.*]] = arith.truncf
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.*}}, %[[LR]] : f32
// CHECK: return
// CHECK-LABEL: func.func private @T.update_k5
// CHECK-SAME: (%[[OUT:.*]]: memref<f64>, %[[LRBUF:.*]]: memref<f64>) attributes {mdl.kernel = 5 : i64} {
// CHECK: %[[LR:.*]] = memref.load %[[LRBUF]]
// CHECK: %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[LR]]) -> (f64)
// CHECK: memref.store %[[SUM]], %[[OUT]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @T.update
// CHECK: call @T.update_k4
// CHECK-NEXT: call @T.update_k5
// CHECK-NEXT: return
module attributes {mdl.arena_bytes = 1024 : i64, mdl.persistent_bytes = 1024 : i64} {
  func.func @"T.fwd_bwd"(%arena: memref<1024xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %c192 = arith.constant 192 : index
    %c256 = arith.constant 256 : index
    %c320 = arith.constant 320 : index
    %c384 = arith.constant 384 : index
    %c448 = arith.constant 448 : index
    %c512 = arith.constant 512 : index
    %c640 = arith.constant 640 : index
    %w = memref.view %arena[%c0][] : memref<1024xi8> to memref<4x8xf32>
    %x = memref.view %arena[%c128][] : memref<1024xi8> to memref<2x8xf32>
    %seed_buf = memref.view %arena[%c192][] : memref<1024xi8> to memref<f64>
    %counter_buf = memref.view %arena[%c256][] : memref<1024xi8> to memref<f64>
    %y = memref.view %arena[%c320][] : memref<1024xi8> to memref<2x4xf32>
    %t = memref.view %arena[%c384][] : memref<1024xi8> to memref<2x4xf32>
    %seed = memref.load %seed_buf[] : memref<f64>
    %seed_i = arith.fptoui %seed : f64 to i64
    %counter = memref.load %counter_buf[] : memref<f64>
    %counter_i = arith.fptoui %counter : f64 to i64
    %hash = arith.xori %seed_i, %counter_i : i64
    mdlrt.gemm %x, %w, %t alpha = 1.0 beta = 0.0 transpose_b : memref<2x8xf32>, memref<4x8xf32>, memref<2x4xf32>
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%t : memref<2x4xf32>) outs(%y : memref<2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %bits = arith.trunci %hash : i64 to i32
      %scale = arith.uitofp %bits : i32 to f32
      %r = arith.mulf %in, %scale : f32
      linalg.yield %r : f32
    }
    %idx = memref.view %arena[%c448][] : memref<1024xi8> to memref<2xindex>
    %table = memref.view %arena[%c512][] : memref<1024xi8> to memref<4x8xf32>
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      %row = memref.load %idx[%i] : memref<2xindex>
      %v = memref.load %x[%i, %c0] : memref<2x8xf32>
      memref.store %v, %table[%row, %c0] : memref<4x8xf32>
    }
    %y_copy = memref.view %arena[%c640][] : memref<1024xi8> to memref<2x4xf32>
    memref.copy %y, %y_copy : memref<2x4xf32> to memref<2x4xf32>
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%y : memref<2x4xf32>) outs(%t : memref<2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %bits = arith.trunci %hash : i64 to i32
      %scale = arith.uitofp %bits : i32 to f32
      %r = arith.mulf %in, %scale : f32
      linalg.yield %r : f32
    }
    return
  }
  func.func @"T.update"(%arena: memref<1024xi8>) attributes {mdl.entry = "T", mdl.function = "update"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c512 = arith.constant 512 : index
    %c704 = arith.constant 704 : index
    %c768 = arith.constant 768 : index
    %w = memref.view %arena[%c0][] : memref<1024xi8> to memref<4x8xf32>
    %g = memref.view %arena[%c512][] : memref<1024xi8> to memref<4x8xf32>
    %lr_buf = memref.view %arena[%c704][] : memref<1024xi8> to memref<f64>
    %lr_out = memref.view %arena[%c768][] : memref<1024xi8> to memref<f64>
    %lr = memref.load %lr_buf[] : memref<f64>
    %lr_f32 = arith.truncf %lr : f64 to f32
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%g : memref<4x8xf32>) outs(%w : memref<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %step = arith.mulf %in, %lr_f32 : f32
      %r = arith.subf %out, %step : f32
      linalg.yield %r : f32
    }
    %sum = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %lr) -> (f64) {
      %next = arith.addf %acc, %lr : f64
      scf.yield %next : f64
    }
    memref.store %sum, %lr_out[] : memref<f64>
    return
  }
}

// -----

// A contiguous operand cut from a larger buffer is a buffer of its own (a
// view at its first byte, 64 + 2 * 16), so that the kernel does not depend
// on where it lies; a strided one stays a subview of its whole buffer in
// the kernel. A launch constant is an i64 argument.
// CHECK-LABEL: func.func private @T.fwd_bwd_k0
// CHECK-SAME: (%[[ROW:.*]]: memref<4xf32>, %[[SALT:.*]]: i64) attributes {mdl.kernel = 0 : i64} {
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[ROW]] : memref<4xf32>)
// CHECK: arith.uitofp %[[SALT]]
// CHECK-LABEL: func.func private @T.fwd_bwd_k1
// CHECK-SAME: (%[[WHOLE:.*]]: memref<4x4xf32>) attributes {mdl.kernel = 1 : i64} {
// CHECK: %[[COLUMN:.*]] = memref.subview %[[WHOLE]][0, 1] [4, 1] [1, 1]
// CHECK: linalg.fill {{.*}} outs(%[[COLUMN]]
// CHECK-LABEL: func.func @T.fwd_bwd
// CHECK-SAME: (%[[ARENA:.*]]: memref<256xi8>)
// CHECK-DAG: %[[C96:.*]] = arith.constant 96 : index
// CHECK-DAG: %[[OWN:.*]] = memref.view %[[ARENA]][%[[C96]]][] : memref<256xi8> to memref<4xf32>
// CHECK-DAG: %[[SALTV:.*]] = mdlrt.launch_constant 12345
// CHECK: call @T.fwd_bwd_k0(%[[OWN]], %[[SALTV]]) : (memref<4xf32>, i64) -> ()
// CHECK: call @T.fwd_bwd_k1(%{{.*}}) : (memref<4x4xf32>) -> ()
module attributes {mdl.arena_bytes = 256 : i64, mdl.persistent_bytes = 256 : i64} {
  func.func @"T.fwd_bwd"(%arena: memref<256xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %m = memref.view %arena[%c64][] : memref<256xi8> to memref<4x4xf32>
    %row = memref.subview %m[2, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[1], offset: 8>>
    %salt = mdlrt.launch_constant 12345
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        outs(%row : memref<4xf32, strided<[1], offset: 8>>) {
    ^bb0(%out: f32):
      %f = arith.uitofp %salt : i64 to f32
      linalg.yield %f : f32
    }
    %column = memref.subview %m[0, 1] [4, 1] [1, 1] : memref<4x4xf32> to memref<4x1xf32, strided<[4, 1], offset: 1>>
    linalg.fill ins(%zero : f32) outs(%column : memref<4x1xf32, strided<[4, 1], offset: 1>>)
    return
  }
}

// -----

// A contiguous operand at an offset computed at run time (a row chosen by a
// loaded index) is no buffer of its own: its bytes are not known, so the
// whole buffer is the argument and the subview stays in the kernel.
// CHECK-LABEL: func.func private @T.fwd_bwd_k0
// CHECK-SAME: (%[[WHOLE:.*]]: memref<4x4xf32>, %[[ROWBUF:.*]]: memref<index>) attributes {mdl.kernel = 0 : i64} {
// CHECK: %[[ROW:.*]] = memref.load %[[ROWBUF]][]
// CHECK: memref.subview %[[WHOLE]][%[[ROW]], 0] [1, 4] [1, 1]
// CHECK: linalg.fill
module attributes {mdl.arena_bytes = 256 : i64, mdl.persistent_bytes = 256 : i64} {
  func.func @"T.fwd_bwd"(%arena: memref<256xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %m = memref.view %arena[%c64][] : memref<256xi8> to memref<4x4xf32>
    %rowbuf = memref.view %arena[%c0][] : memref<256xi8> to memref<index>
    %r = memref.load %rowbuf[] : memref<index>
    %row = memref.subview %m[%r, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%row : memref<4xf32, strided<[1], offset: ?>>)
    return
  }
}

// -----

// A kernel between the load and its recomputation writes [0, 16), which
// holds the loaded scalar at [8, 16): the kernel would see the new value.
module attributes {mdl.arena_bytes = 128 : i64, mdl.persistent_bytes = 128 : i64} {
  func.func @"T.update"(%arena: memref<128xi8>) attributes {mdl.entry = "T", mdl.function = "update"} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f64
    %h = memref.view %arena[%c8][] : memref<128xi8> to memref<f64>
    // expected-error @+1 {{cannot recompute this scalar inside kernel 1: linalg.fill may write the bytes it loads before the kernel}}
    %s = memref.load %h[] : memref<f64>
    %both = memref.view %arena[%c0][] : memref<128xi8> to memref<2xf64>
    // expected-note @+1 {{written here}}
    linalg.fill ins(%zero : f64) outs(%both : memref<2xf64>)
    %o = memref.view %arena[%c64][] : memref<128xi8> to memref<4xf64>
    // expected-note @+1 {{kernel 1}}
    linalg.fill ins(%s : f64) outs(%o : memref<4xf64>)
    return
  }
}

// -----

// A GEMM in between whose C, [0, 16), covers the loaded scalar at [8, 12).
module attributes {mdl.arena_bytes = 256 : i64, mdl.persistent_bytes = 256 : i64} {
  func.func @"T.fwd_bwd"(%arena: memref<256xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %cv = memref.view %arena[%c0][] : memref<256xi8> to memref<2x2xf32>
    %av = memref.view %arena[%c64][] : memref<256xi8> to memref<2x2xf32>
    %bv = memref.view %arena[%c128][] : memref<256xi8> to memref<2x2xf32>
    %h = memref.view %arena[%c8][] : memref<256xi8> to memref<f32>
    // expected-error @+1 {{cannot recompute this scalar inside kernel 0: mdlrt.gemm may write the bytes it loads before the kernel}}
    %s = memref.load %h[] : memref<f32>
    // expected-note @+1 {{written here}}
    mdlrt.gemm %av, %bv, %cv alpha = 1.0 beta = 0.0 : memref<2x2xf32>, memref<2x2xf32>, memref<2x2xf32>
    %o = memref.view %arena[%c32][] : memref<256xi8> to memref<4xf32>
    // expected-note @+1 {{kernel 0}}
    linalg.fill ins(%s : f32) outs(%o : memref<4xf32>)
    return
  }
}

// -----

// A kernel in between writes through a view at an offset computed at run
// time: it may write anywhere, so no load is recomputed across it.
module attributes {mdl.arena_bytes = 128 : i64, mdl.persistent_bytes = 128 : i64} {
  func.func @"T.fwd_bwd"(%arena: memref<128xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %h = memref.view %arena[%c0][] : memref<128xi8> to memref<i64>
    // expected-error @+1 {{cannot recompute this scalar inside kernel 1: linalg.fill may write anywhere in the arena before the kernel}}
    %n64 = memref.load %h[] : memref<i64>
    %n = arith.index_cast %n64 : i64 to index
    %somewhere = memref.view %arena[%n][] : memref<128xi8> to memref<4xf32>
    // expected-note @+1 {{written here}}
    linalg.fill ins(%zero : f32) outs(%somewhere : memref<4xf32>)
    %o = memref.view %arena[%c64][] : memref<128xi8> to memref<4xi64>
    // expected-note @+1 {{kernel 1}}
    linalg.fill ins(%n64 : i64) outs(%o : memref<4xi64>)
    return
  }
}

// -----

// Work a kernel cannot take: an allocation the plan should have placed.
module attributes {mdl.arena_bytes = 64 : i64, mdl.persistent_bytes = 64 : i64} {
  func.func @"T.fwd_bwd"(%arena: memref<64xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    // expected-error @+1 {{the kernel partition cannot place this op}}
    %t = memref.alloc() : memref<4xf32>
    return
  }
}

// -----

module attributes {mdl.arena_bytes = 64 : i64, mdl.persistent_bytes = 64 : i64} {
  // expected-error @+1 {{a program function takes only the arena (memref<Nxi8>): run --mdl-plan-memory first}}
  func.func @"T.fwd_bwd"() attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    return
  }
}
