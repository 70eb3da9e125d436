// --mdl-lower-to-linalg, reduction family: linalg.generic with reduction
// iterators into a linalg.fill of the identity; keepdim as an expand_shape
// view; argmax with PyTorch's tie rule; numerically stable softmax.
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file | FileCheck %s

// sum over axes 0 and 2 with keepdim: the generic reduces into [8], the
// kept axes come back as a view.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$MID:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @sum_keepdim
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x16xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<8xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$MID]]], iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[X]] : tensor<4x8x16xf32>) outs(%[[INIT]] : tensor<8xf32>)
// CHECK: ^bb0(%[[E:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[NEXT:.*]] = arith.addf %[[E]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: %[[KEPT:.*]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1, 2]] output_shape [1, 8, 1] : tensor<8xf32> into tensor<1x8x1xf32>
// CHECK: return %[[KEPT]]
func.func @sum_keepdim(%x: tensor<4x8x16xf32>) -> tensor<1x8x1xf32> {
  %r = mdl.sum %x axes = [0, 2] keepdim : tensor<4x8x16xf32> -> tensor<1x8x1xf32>
  return %r : tensor<1x8x1xf32>
}

// -----

// Without keepdim the generic's result is the result; integer sums addi.
// CHECK-LABEL: func.func @sum_integer
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.addi
// CHECK-NOT: tensor.expand_shape
// CHECK: return %[[SUM]] : tensor<4xi64>
func.func @sum_integer(%x: tensor<4x8xi64>) -> tensor<4xi64> {
  %r = mdl.sum %x axes = [1] : tensor<4x8xi64> -> tensor<4xi64>
  return %r : tensor<4xi64>
}

// -----

// mean: the sum divided by the number of reduced elements (4 * 8).
// CHECK-LABEL: func.func @mean
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<f32>) outs(%{{.*}} : tensor<f32>)
// CHECK: ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[N:.*]] = arith.constant 3.200000e+01 : f32
// CHECK-NEXT: arith.divf %[[S]], %[[N]] : f32
// CHECK: return %[[MEAN]]
func.func @mean(%x: tensor<4x8xf32>) -> tensor<f32> {
  %r = mdl.mean %x axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// bf16 sums accumulate in f32 and round once (PyTorch's accumulate type).
// CHECK-LABEL: func.func @mean_bf16
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: ^bb0(%[[E:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT: arith.addf %[[W]], %[[ACC]] : f32
// CHECK: %[[Q:.*]] = arith.divf
// CHECK-NEXT: arith.truncf %[[Q]] : f32 to bf16
func.func @mean_bf16(%x: tensor<4x8xbf16>) -> tensor<bf16> {
  %r = mdl.mean %x axes = [0, 1] : tensor<4x8xbf16> -> tensor<bf16>
  return %r : tensor<bf16>
}

// -----

// max/min start from -inf/+inf or the extreme integers (ui8: 0 and 255,
// which is -1 as signless i8), NaN-propagating for floats.
// CHECK-LABEL: func.func @extrema
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: arith.maximumf
// CHECK: %[[IMAX:.*]] = arith.constant 2147483647 : i32
// CHECK: linalg.fill ins(%[[IMAX]] : i32)
// CHECK: arith.minsi
// CHECK: %[[U0:.*]] = arith.constant 0 : i8
// CHECK: linalg.fill ins(%[[U0]] : i8)
// CHECK: arith.maxui
// CHECK: %[[U255:.*]] = arith.constant -1 : i8
// CHECK: linalg.fill ins(%[[U255]] : i8)
// CHECK: arith.minui
mdl.buffer @bytes : tensor<4x8xui8> {entry = "T", key = "bytes", phase = "train", role = "input"}
mdl.buffer @hi : tensor<4xui8> {entry = "T", key = "hi", phase = "train", role = "output"}
mdl.buffer @lo : tensor<4xui8> {entry = "T", key = "lo", phase = "train", role = "output"}
func.func @extrema(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = mdl.max %x axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %1 = mdl.min %i axes = [1] : tensor<4x8xi32> -> tensor<4xi32>
  %b = mdl.load @bytes : tensor<4x8xui8>
  %2 = mdl.max %b axes = [1] : tensor<4x8xui8> -> tensor<4xui8>
  %3 = mdl.min %b axes = [1] : tensor<4x8xui8> -> tensor<4xui8>
  mdl.store %2, @hi : tensor<4xui8>
  mdl.store %3, @lo : tensor<4xui8>
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// argmax: value and index reduced together; a later element wins only when
// greater, or equal with a smaller index, or the first NaN; keepdim view.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @argmax
// CHECK-SAME: (%[[X:.*]]: tensor<128x10xf32>)
// CHECK: %[[VALS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<128xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : i64
// CHECK: %[[IDXS:.*]] = linalg.fill ins(%[[C0]] : i64) outs(%{{.*}} : tensor<128xi64>)
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWS]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<128x10xf32>) outs(%[[VALS]], %[[IDXS]] : tensor<128xf32>, tensor<128xi64>)
// CHECK: ^bb0(%[[E:.*]]: f32, %[[BEST:.*]]: f32, %[[BI:.*]]: i64):
// CHECK-NEXT: %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[I64:.*]] = arith.index_castui %[[I]] : index to i64
// CHECK-NEXT: %[[EARLIER:.*]] = arith.cmpi slt, %[[I64]], %[[BI]] : i64
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[E]], %[[BEST]] : f32
// CHECK-NEXT: %[[EQ:.*]] = arith.cmpf oeq, %[[E]], %[[BEST]] : f32
// CHECK-NEXT: %[[TIE:.*]] = arith.andi %[[EQ]], %[[EARLIER]] : i1
// CHECK-NEXT: %[[BETTER:.*]] = arith.ori %[[GT]], %[[TIE]] : i1
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[E]], %[[E]] : f32
// CHECK-NEXT: %[[NUM:.*]] = arith.cmpf ord, %[[BEST]], %[[BEST]] : f32
// CHECK-NEXT: %[[OVER:.*]] = arith.ori %[[NUM]], %[[EARLIER]] : i1
// CHECK-NEXT: %[[NANWINS:.*]] = arith.andi %[[NAN]], %[[OVER]] : i1
// CHECK-NEXT: %[[WINS:.*]] = arith.ori %[[BETTER]], %[[NANWINS]] : i1
// CHECK-NEXT: %[[NV:.*]] = arith.select %[[WINS]], %[[E]], %[[BEST]] : f32
// CHECK-NEXT: %[[NI:.*]] = arith.select %[[WINS]], %[[I64]], %[[BI]] : i64
// CHECK-NEXT: linalg.yield %[[NV]], %[[NI]] : f32, i64
// CHECK: %[[KEPT:.*]] = tensor.expand_shape %[[R]]#1 {{\[}}[0, 1]] output_shape [128, 1] : tensor<128xi64> into tensor<128x1xi64>
// CHECK: return %[[KEPT]]
func.func @argmax(%x: tensor<128x10xf32>) -> tensor<128x1xi64> {
  %r = mdl.argmax %x axis = 1 keepdim : tensor<128x10xf32> -> tensor<128x1xi64>
  return %r : tensor<128x1xi64>
}

// -----

// Integer argmax: no NaN test.
// CHECK-LABEL: func.func @argmax_integer
// CHECK: arith.cmpi sgt
// CHECK-NOT: arith.cmpf
// CHECK: return %{{.*}} : tensor<8xi64>
func.func @argmax_integer(%x: tensor<4x8xi32>) -> tensor<8xi64> {
  %r = mdl.argmax %x axis = 0 : tensor<4x8xi32> -> tensor<8xi64>
  return %r : tensor<8xi64>
}

// -----

// softmax: max, then sum(exp(x - max)) (exp recomputed, not stored), then
// exp(x - max) / sum with both reductions viewed with the axis kept.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$KEPT:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<4x10xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x10xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWS]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<4x10xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[E:.*]]: f32, %[[M:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[E]], %[[M]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[EXP]] : f32
// CHECK: %[[MAXK:.*]] = tensor.expand_shape %[[MAX]] {{\[}}[0, 1]] output_shape [4, 1]
// CHECK: %[[SUMK:.*]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1]] output_shape [4, 1]
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$KEPT]], #[[$KEPT]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAXK]], %[[SUMK]] : tensor<4x10xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK: ^bb0(%[[E2:.*]]: f32, %[[M2:.*]]: f32, %[[S2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D2:.*]] = arith.subf %[[E2]], %[[M2]] : f32
// CHECK-NEXT: %[[EXP2:.*]] = math.exp %[[D2]] : f32
// CHECK-NEXT: arith.divf %[[EXP2]], %[[S2]] : f32
// CHECK: return %[[OUT]]
func.func @softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %r = mdl.softmax %x axis = 1 : tensor<4x10xf32>
  return %r : tensor<4x10xf32>
}

// -----

// log_softmax over axis 0 in f16: (x - max) - log(sum) computed in f32.
// CHECK-DAG: #[[$COLS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$KEPT:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @log_softmax
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<10xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$KEPT]], #[[$KEPT]], #{{.*}}]
// CHECK: ^bb0(%[[E:.*]]: f16, %[[M:.*]]: f16, %[[S:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT: %[[WE:.*]] = arith.extf %[[E]] : f16 to f32
// CHECK-NEXT: %[[WM:.*]] = arith.extf %[[M]] : f16 to f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[WE]], %[[WM]] : f32
// CHECK-NEXT: %[[LOG:.*]] = math.log %[[S]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[D]], %[[LOG]] : f32
// CHECK-NEXT: arith.truncf %[[R]] : f32 to f16
func.func @log_softmax(%x: tensor<4x10xf16>) -> tensor<4x10xf16> {
  %r = mdl.log_softmax %x axis = 0 : tensor<4x10xf16>
  return %r : tensor<4x10xf16>
}

// -----

// An f32 sum of more than 128 terms over adjacent axes adds in a cascade
// (PyTorch's accuracy): the axes as one of 3000 terms; 23 blocks of 128
// summed each, then the 23 partial sums; the 56 terms after the last block
// summed alone and added at the end.
// CHECK-LABEL: func.func @sum_blocked
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<4x1000x3xf32> into tensor<4x3000xf32>
// CHECK: %[[WHOLE:.*]] = tensor.extract_slice %[[FLAT]][0, 0] [4, 2944] [1, 1]
// CHECK: %[[REST:.*]] = tensor.extract_slice %[[FLAT]][0, 2944] [4, 56] [1, 1]
// CHECK: %[[TAIL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[REST]] : tensor<4x56xf32>)
// CHECK: %[[BLOCKS:.*]] = tensor.expand_shape %[[WHOLE]] {{\[}}[0], [1, 2]] output_shape [4, 23, 128]
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[BLOCKS]] : tensor<4x23x128xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PARTIAL]] : tensor<4x23xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %[[TAIL]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape {{.*}} output_shape [4, 1, 1]
func.func @sum_blocked(%x: tensor<4x1000x3xf32>) -> tensor<4x1x1xf32> {
  %r = mdl.sum %x axes = [1, 2] keepdim : tensor<4x1000x3xf32> -> tensor<4x1x1xf32>
  return %r : tensor<4x1x1xf32>
}

// -----

// 2^14 terms: two levels of blocks (16384 -> 128 -> 1), no tail; 128 terms
// or fewer, and f64, stay one in-order sum.
// CHECK-LABEL: func.func @sum_two_levels
// CHECK: tensor.expand_shape {{.*}} output_shape [128, 128] : tensor<16384xf32> into tensor<128x128xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<128x128xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<128xf32>)
// CHECK-NOT: tensor.extract_slice
// CHECK-LABEL: func.func @sum_short
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<128xf32>)
// CHECK-LABEL: func.func @sum_f64
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<16384xf64>)
func.func @sum_two_levels(%x: tensor<16384xf32>) -> tensor<f32> {
  %r = mdl.sum %x axes = [0] : tensor<16384xf32> -> tensor<f32>
  return %r : tensor<f32>
}
func.func @sum_short(%x: tensor<128xf32>) -> tensor<f32> {
  %r = mdl.sum %x axes = [0] : tensor<128xf32> -> tensor<f32>
  return %r : tensor<f32>
}
func.func @sum_f64(%x: tensor<16384xf64>) -> tensor<f64> {
  %r = mdl.sum %x axes = [0] : tensor<16384xf64> -> tensor<f64>
  return %r : tensor<f64>
}
