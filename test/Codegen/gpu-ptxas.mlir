// The PTX of a small planned module passes ptxas for sm_80 and sm_90: an
// elementwise kernel with libdevice math (exp, tanh, erf, log), a constant
// global, an i1 output and linalg.index; an f64 row max (64-bit shuffles);
// a block kernel with barriers; a scalar store. With ptxas found, the
// serialisation adds a cubin per architecture.
// REQUIRES: ptxas
// RUN: modelc %s --emit=ptx --arch sm_80 -o %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm_80.ptx -o %t.sm_80.cubin
// RUN: modelc %s --emit=ptx --arch sm_90 -o %t.sm_90.ptx
// RUN: %ptxas -arch=sm_90 %t.sm_90.ptx -o %t.sm_90.cubin
// RUN: FileCheck %s --input-file %t.sm_80.ptx
// RUN: modelc %s --emit=ptx -o - | FileCheck %s --check-prefix=BOTH
// RUN: modelc-opt %s --mdl-kernels-to-gpu | FileCheck %s --check-prefix=CUBIN

// One kernel entry each, taking the arena as one .u64; libdevice is linked
// in (no external function is left).
// CHECK: .target sm_80
// CHECK-NOT: .extern
// CHECK: .global .align 4 .b8 table[16]
// CHECK: .visible .entry T_fwd_bwd_k0(
// CHECK-NEXT: .param .u64 T_fwd_bwd_k0_param_0
// CHECK: .visible .entry T_fwd_bwd_k1(
// CHECK: shfl.sync.bfly.b32
// CHECK: .visible .entry T_fwd_bwd_k2(
// CHECK: bar.sync
// CHECK: .visible .entry T_update_k3(

// Several architectures: each PTX after a line naming it.
// BOTH: // arch sm_80
// BOTH-NEXT: //
// BOTH: .target sm_80
// BOTH: // arch sm_90
// BOTH: .target sm_90

// CUBIN: images = [{arch = "sm_80", {{.*}} kind = "ptx", part = 0 : i64}, {arch = "sm_90", {{.*}} kind = "ptx", part = 0 : i64}, {arch = "sm_80", data = "\7FELF{{.*}}", kind = "cubin", part = 0 : i64}, {arch = "sm_90", data = "\7FELF{{.*}}", kind = "cubin", part = 0 : i64}]
// CUBIN: gpu.binary @modelc_kernels {{ *}}{mdl.part = 0 : i64} [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = {{.*}}>, #gpu.object<#nvvm.target<chip = "sm_90">, assembly = {{.*}}>, #gpu.object<#nvvm.target<chip = "sm_80">, bin = "\7FELF

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
module attributes {mdl.arena_bytes = 16384 : i64, mdl.persistent_bytes = 16384 : i64} {
  memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  func.func private @"T.fwd_bwd_k0"(%arena: memref<16384xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %c2048 = arith.constant 2048 : index
    %table = memref.get_global @table : memref<4xf32>
    %x = memref.view %arena[%c0][] : memref<16384xi8> to memref<64x4xf32>
    %y = memref.view %arena[%c1024][] : memref<16384xi8> to memref<64x4xf32>
    %mask = memref.view %arena[%c2048][] : memref<16384xi8> to memref<64x4xi1>
    linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<64x4xf32>) outs(%y, %mask : memref<64x4xf32>, memref<64x4xi1>) {
    ^bb0(%in: f32, %out: f32, %m: i1):
      %j = linalg.index 1 : index
      %t = memref.load %table[%j] : memref<4xf32>
      %e = math.exp %in : f32
      %h = math.tanh %e : f32
      %r = math.erf %h : f32
      %l = math.log %t : f32
      %s = arith.addf %r, %l : f32
      %p = arith.cmpf ogt, %s, %in : f32
      linalg.yield %s, %p : f32, i1
    }
    return
  }
  func.func private @"T.fwd_bwd_k1"(%arena: memref<16384xi8>) attributes {mdl.kernel = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c4096 = arith.constant 4096 : index
    %x = memref.view %arena[%c0][] : memref<16384xi8> to memref<16x32xf64>
    %sum = memref.view %arena[%c4096][] : memref<16384xi8> to memref<16xf64>
    linalg.generic {indexing_maps = [#id2, #rows], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<16x32xf64>) outs(%sum : memref<16xf64>) {
    ^bb0(%in: f64, %out: f64):
      %acc = arith.maximumf %out, %in : f64
      linalg.yield %acc : f64
    }
    return
  }
  func.func private @"T.fwd_bwd_k2"(%arena: memref<16384xi8>) attributes {mdl.kernel = 2 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c9 = arith.constant 9 : index
    %c8192 = arith.constant 8192 : index
    %c12288 = arith.constant 12288 : index
    %ids = memref.view %arena[%c8192][] : memref<16384xi8> to memref<8xi32>
    %dout = memref.view %arena[%c0][] : memref<16384xi8> to memref<8x16xf32>
    %grad = memref.view %arena[%c12288][] : memref<16384xi8> to memref<10x16xf32>
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
    }
    return
  }
  func.func private @"T.update_k3"(%arena: memref<16384xi8>) attributes {mdl.kernel = 3 : i64} {
    %c4096 = arith.constant 4096 : index
    %c8192 = arith.constant 8192 : index
    %hyper = memref.view %arena[%c4096][] : memref<16384xi8> to memref<f64>
    %out = memref.view %arena[%c8192][] : memref<16384xi8> to memref<f32>
    %lr64 = memref.load %hyper[] : memref<f64>
    %lr = arith.truncf %lr64 : f64 to f32
    memref.store %lr, %out[] : memref<f32>
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<16384xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %a = memref.view %arena[%c0][] : memref<16384xi8> to memref<16x16xf32>
    %c = memref.view %arena[%c1024][] : memref<16384xi8> to memref<16x16xf32>
    call @"T.fwd_bwd_k0"(%arena) : (memref<16384xi8>) -> ()
    mdlrt.gemm %a, %a, %c alpha = 1.000000e+00 beta = 0.000000e+00 transpose_b : memref<16x16xf32>, memref<16x16xf32>, memref<16x16xf32>
    call @"T.fwd_bwd_k1"(%arena) : (memref<16384xi8>) -> ()
    call @"T.fwd_bwd_k2"(%arena) : (memref<16384xi8>) -> ()
    return
  }
  func.func @"T.update"(%arena: memref<16384xi8>) attributes {mdl.entry = "T", mdl.function = "update"} {
    call @"T.update_k3"(%arena) : (memref<16384xi8>) -> ()
    return
  }
}
