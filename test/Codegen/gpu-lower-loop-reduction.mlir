// --mdl-lower-to-gpu, kernelcheck's reduction length of a loop kernel: a
// reduction nested in an scf.for (lstm_scan's time loop: each step's
// rounding is carried into the next) counts its terms times the loop's
// trip count, here 5 steps of a 4-term sum.
// RUN: modelc-opt %s --mdl-lower-to-gpu | FileCheck %s

// CHECK-LABEL: gpu.func @T_fwd_bwd_k0(
// CHECK-SAME: mdl.block = 256 : i64, mdl.grid = 1 : i64, mdl.reduction = 20 : i64

#lhs = affine_map<(d0, d1) -> (d0, d1)>
#acc = affine_map<(d0, d1) -> (d0)>
module {
  func.func private @"T.fwd_bwd_k0"(%arena: memref<4096xi8>) attributes {mdl.kernel = 0 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %c1024 = arith.constant 1024 : index
    %x = memref.view %arena[%c0][] : memref<4096xi8> to memref<3x4xf32>
    %h = memref.view %arena[%c1024][] : memref<4096xi8> to memref<3xf32>
    scf.for %t = %c0 to %c5 step %c1 {
      linalg.generic {indexing_maps = [#lhs, #acc], iterator_types = ["parallel", "reduction"]}
          ins(%x : memref<3x4xf32>) outs(%h : memref<3xf32>) {
      ^bb0(%in: f32, %out: f32):
        %sum = arith.addf %out, %in : f32
        linalg.yield %sum : f32
      }
    }
    return
  }
  func.func @"T.fwd_bwd"(%arena: memref<4096xi8>) attributes {mdl.entry = "T", mdl.function = "fwd_bwd"} {
    call @"T.fwd_bwd_k0"(%arena) : (memref<4096xi8>) -> ()
    return
  }
}
