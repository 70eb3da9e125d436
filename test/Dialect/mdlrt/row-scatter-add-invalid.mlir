// mdlrt.row_scatter_add's verifier: ids and source rows agree, the rows
// fit the table's, the table is f32 or f64 and no narrower than the source,
// and every shape is static.
// RUN: modelc-opt %s --split-input-file --verify-diagnostics

func.func @count(%ids: memref<7xi64>, %g: memref<8x16xf32>, %t: memref<65x16xf32>) {
  // expected-error @below {{has 7 ids for 8 source rows}}
  mdlrt.row_scatter_add ins(%ids, %g : memref<7xi64>, memref<8x16xf32>) outs(%t : memref<65x16xf32>) {
  }
  return
}

// -----

func.func @width(%ids: memref<8xi64>, %g: memref<8x16xf32>, %t: memref<65x8xf32>) {
  // expected-error @below {{adds rows of 16 elements to a table of rows of 8}}
  mdlrt.row_scatter_add ins(%ids, %g : memref<8xi64>, memref<8x16xf32>) outs(%t : memref<65x8xf32>) {
  }
  return
}

// -----

func.func @narrow(%ids: memref<8xi64>, %g: memref<8x16xf64>, %t: memref<65x16xf32>) {
  // expected-error @below {{adds 'f64' rows to a narrower 'f32' table}}
  mdlrt.row_scatter_add ins(%ids, %g : memref<8xi64>, memref<8x16xf64>) outs(%t : memref<65x16xf32>) {
  }
  return
}

// -----

func.func @table_type(%ids: memref<8xi64>, %g: memref<8x16xbf16>, %t: memref<65x16xbf16>) {
  // expected-error @below {{operand #2 must be}}
  mdlrt.row_scatter_add ins(%ids, %g : memref<8xi64>, memref<8x16xbf16>) outs(%t : memref<65x16xbf16>) {
  }
  return
}

// -----

func.func @dynamic(%ids: memref<?xi64>, %g: memref<8x16xf32>, %t: memref<65x16xf32>) {
  // expected-error @below {{takes operands of static shapes}}
  mdlrt.row_scatter_add ins(%ids, %g : memref<?xi64>, memref<8x16xf32>) outs(%t : memref<65x16xf32>) {
  }
  return
}
