// mdlrt.row_scatter_add: round trip (signed and unsigned ids, strided
// operands) and a memref.cast folded into the op
// (row-scatter-add-invalid.mlir: the verifier's rules).
// RUN: modelc-opt %s --split-input-file | FileCheck %s
// RUN: modelc-opt %s --split-input-file --canonicalize | FileCheck %s --check-prefix=FOLD

// CHECK-LABEL: func.func @forms
// CHECK: mdlrt.row_scatter_add ins(%{{.*}}, %{{.*}} : memref<8xi64>, memref<8x16xf32>) outs(%{{.*}} : memref<65x16xf32>) {
// CHECK: mdlrt.row_scatter_add unsigned ins(%{{.*}}, %{{.*}} : memref<8xi8, strided<[1], offset: ?>>, memref<8x16xbf16, strided<[?, 1], offset: ?>>) outs(%{{.*}} : memref<65x16xf32>) {
// CHECK: } {mdl.reduction = 8 : i64}
func.func @forms(%ids: memref<8xi64>, %g: memref<8x16xf32>, %t: memref<65x16xf32>,
                 %uids: memref<8xi8, strided<[1], offset: ?>>, %h: memref<8x16xbf16, strided<[?, 1], offset: ?>>) {
  mdlrt.row_scatter_add ins(%ids, %g : memref<8xi64>, memref<8x16xf32>) outs(%t : memref<65x16xf32>) {
  }
  mdlrt.row_scatter_add unsigned ins(%uids, %h : memref<8xi8, strided<[1], offset: ?>>, memref<8x16xbf16, strided<[?, 1], offset: ?>>) outs(%t : memref<65x16xf32>) {
  } {mdl.reduction = 8 : i64}
  return
}

// -----

// The op's effects are its region's: a region that writes keeps it.
// FOLD-LABEL: func.func @cast
// FOLD: mdlrt.row_scatter_add ins(%{{.*}}, %{{.*}} : memref<8xi64>, memref<8x16xf32>)
func.func @cast(%ids: memref<8xi64>, %g: memref<8x16xf32>, %t: memref<65x16xf32>) {
  %c = memref.cast %g : memref<8x16xf32> to memref<8x16xf32, strided<[?, 1], offset: ?>>
  mdlrt.row_scatter_add ins(%ids, %c : memref<8xi64>, memref<8x16xf32, strided<[?, 1], offset: ?>>) outs(%t : memref<65x16xf32>) {
    %i = arith.constant 0 : index
    %x = memref.load %c[%i, %i] : memref<8x16xf32, strided<[?, 1], offset: ?>>
    memref.store %x, %t[%i, %i] : memref<65x16xf32>
  }
  return
}

