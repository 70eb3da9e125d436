// --mdl-lower-to-gpu, a region op as a kernel's work (here a scatter-add
// loop, as a recurrent time loop would be): one block of 256 threads. The loop and its scalar
// code run in every thread; the nested generic is spread over the block's
// threads; a nested store runs in thread 0; a barrier comes before and
// after each write, so the iterations keep the CPU's order.
// RUN: modelc-opt %s --mdl-lower-to-gpu --cse | FileCheck %s

// The kernel may write the gradient rows (f32) and the counter (i32): two
// ranges, each with its element type, for kernelcheck to compare as such.
// CHECK-LABEL: func.func @T.fwd_bwd(
// CHECK-SAME: mdl.gpu_steps = [{args = array<i64: 0>, launch = @modelc_kernels::@T_fwd_bwd_k0, writes = [{bytes = 640 : i64, offset = 4096 : i64, type = f32}, {bytes = 4 : i64, offset = 8192 : i64, type = i32}]}]
// CHECK-LABEL: gpu.func @T_fwd_bwd_k0(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>, mdl.block = 256 : i64, mdl.grid = 1 : i64
// CHECK-DAG: %[[IDS:.*]] = memref.view {{.*}} to memref<8xi32>
// CHECK-DAG: %[[COUNT:.*]] = memref.view {{.*}} to memref<i32>
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[ID:.*]] = memref.load %[[IDS]][%[[T]]]
// CHECK: %[[ACC:.*]] = memref.subview
// CHECK: %[[UPD:.*]] = memref.subview
// CHECK: gpu.barrier
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for %[[I:.*]] = %[[TID]] to %[[C16]] step %[[C256]] {
// CHECK: %[[IN:.*]] = memref.load %[[UPD]][%[[I]]]
// CHECK: %[[OUT:.*]] = memref.load %[[ACC]][%[[I]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[OUT]], %[[IN]]
// CHECK: memref.store %[[SUM]], %[[ACC]][%[[I]]]
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[N:.*]] = memref.load %[[COUNT]][]
// CHECK-NEXT: %[[N1:.*]] = arith.addi %[[N]], %[[ID]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[IS0:.*]] = arith.cmpi eq, %[[TID]], %{{.*}}
// CHECK-NEXT: scf.if %[[IS0]] {
// CHECK-NEXT: memref.store %[[N1]], %[[COUNT]][]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return

#id1 = affine_map<(d0) -> (d0)>
module {
  func.func private @"T.fwd_bwd_k0"(%arena: memref<16384xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c9 = arith.constant 9 : index
    %c1024 = arith.constant 1024 : index
    %c4096 = arith.constant 4096 : index
    %c8192 = arith.constant 8192 : index
    %ids = memref.view %arena[%c0][] : memref<16384xi8> to memref<8xi32>
    %dout = memref.view %arena[%c1024][] : memref<16384xi8> to memref<8x16xf32>
    %grad = memref.view %arena[%c4096][] : memref<16384xi8> to memref<10x16xf32>
    %count = memref.view %arena[%c8192][] : memref<16384xi8> to memref<i32>
    scf.for %t = %c0 to %c8 step %c1 {
      %id = memref.load %ids[%t] : memref<8xi32>
      %index = arith.index_cast %id : i32 to index
      %low = arith.maxsi %index, %c0 : index
      %row = arith.minsi %low, %c9 : index
      %acc = memref.subview %grad[%row, 0] [1, 16] [1, 1] : memref<10x16xf32> to memref<16xf32, strided<[1], offset: ?>>
      %upd = memref.subview %dout[%t, 0] [1, 16] [1, 1] : memref<8x16xf32> to memref<16xf32, strided<[1], offset: ?>>
      linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
          ins(%upd : memref<16xf32, strided<[1], offset: ?>>) outs(%acc : memref<16xf32, strided<[1], offset: ?>>) {
      ^bb0(%in: f32, %out: f32):
        %sum = arith.addf %out, %in : f32
        linalg.yield %sum : f32
      }
      %n = memref.load %count[] : memref<i32>
      %n1 = arith.addi %n, %id : i32
      memref.store %n1, %count[] : memref<i32>
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<16384xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    call @"T.fwd_bwd_k0"(%arena) : (memref<16384xi8>) -> ()
    return
  }
}
