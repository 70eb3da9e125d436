// --mdl-lower-to-gpu, mdlrt.row_scatter_add (the embedding gradient) as a
// thread per (range of rows, column): a table of 100 rows of 4 columns is
// split into 100 ranges of one row (R * D about 2^17 threads, R at most V),
// so 400 threads in blocks of 256. Each zeroes its column of its rows, then
// walks the 6 positions in order and adds its column of each source row
// (bf16, extended to f32) whose clamped id falls in its range: no atomics,
// no barriers. The op's mdl.reduction is the kernel's; its region (the
// CPU's loops) is not used.
// RUN: modelc-opt %s --mdl-lower-to-gpu --cse | FileCheck %s

// CHECK: mdl.gpu_kernels = [{block = 256 : i64, grid = 2 : i64, name = "T_fwd_bwd_k0", {{.*}}reduction = 6 : i64}]
// CHECK-LABEL: gpu.func @T_fwd_bwd_k0(
// CHECK-SAME: %[[IDS:.*]]: memref<6xi32>, %[[SRC:.*]]: memref<6x4xbf16>, %[[TABLE:.*]]: memref<100x4xf32>
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>, mdl.block = 256 : i64, mdl.grid = 2 : i64
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %c400 step %{{.*}} {
// CHECK: %[[COL:.*]] = arith.remui %[[T]], %c4
// CHECK: %[[RANGE:.*]] = arith.divui %[[T]], %c4
// CHECK: %[[FIRST:.*]] = arith.muli %[[RANGE]], %c1
// CHECK: %[[NEXT:.*]] = arith.addi %[[FIRST]], %c1
// CHECK: %[[END:.*]] = arith.minui %[[NEXT]], %c100
// CHECK: scf.for %[[ROW:.*]] = %[[FIRST]] to %[[END]] step %c1 {
// CHECK: memref.store %{{.*}}, %[[TABLE]][%[[ROW]], %[[COL]]] : memref<100x4xf32>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c6 step %c1 {
// CHECK: %[[ID:.*]] = memref.load %[[IDS]][%[[I]]] : memref<6xi32>
// CHECK: %[[INDEX:.*]] = arith.index_castui %[[ID]] : i32 to index
// CHECK: %[[LOW:.*]] = arith.maxsi %[[INDEX]], %{{.*}}
// CHECK: %[[R:.*]] = arith.minsi %[[LOW]], %c99
// CHECK: %[[GE:.*]] = arith.cmpi uge, %[[R]], %[[FIRST]]
// CHECK: %[[LT:.*]] = arith.cmpi ult, %[[R]], %[[END]]
// CHECK: %[[MINE:.*]] = arith.andi %[[GE]], %[[LT]]
// CHECK: scf.if %[[MINE]] {
// CHECK: %[[X:.*]] = memref.load %[[SRC]][%[[I]], %[[COL]]] : memref<6x4xbf16>
// CHECK: %[[WIDE:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: %[[OLD:.*]] = memref.load %[[TABLE]][%[[R]], %[[COL]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[WIDE]] : f32
// CHECK: memref.store %[[SUM]], %[[TABLE]][%[[R]], %[[COL]]]
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

module {
  func.func private @"T.fwd_bwd_k0"(%ids: memref<6xi32>, %src: memref<6x4xbf16>, %table: memref<100x4xf32>) attributes {mdl.kernel = 0 : i64} {
    mdlrt.row_scatter_add unsigned ins(%ids, %src : memref<6xi32>, memref<6x4xbf16>) outs(%table : memref<100x4xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      scf.for %i = %c0 to %c6 step %c1 {
        %id = memref.load %ids[%i] : memref<6xi32>
      }
    } {mdl.reduction = 6 : i64}
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<4096xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %ids = memref.view %arena[%c0][] : memref<4096xi8> to memref<6xi32>
    %src = memref.view %arena[%c64][] : memref<4096xi8> to memref<6x4xbf16>
    %table = memref.view %arena[%c128][] : memref<4096xi8> to memref<100x4xf32>
    call @"T.fwd_bwd_k0"(%ids, %src, %table) : (memref<6xi32>, memref<6x4xbf16>, memref<100x4xf32>) -> ()
    return
  }
}
