// --mdl-lower-to-linalg on mdl.layer_norm (row reductions, then one
// elementwise pass) and mdl.embedding / mdl.embedding_grad (a clamped row
// gather; a row scatter-add as an mdlrt.row_scatter_add with its loops).
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file | FileCheck %s

// GPT-2's layer norm over 768: row sums, sums of squared deviations from
// sum / 768, mean and 1 / sqrt(var + eps) per row, then
// (x - mean) * rstd * w + b with w and b read along the last axis.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<8x64x768xf32>, %[[W:.*]]: tensor<768xf32>, %[[B:.*]]: tensor<768xf32>)
// CHECK: %[[D:.*]] = arith.constant 7.680000e+02 : f32
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<8x64x768xf32>)
// CHECK: %[[SQ:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[SUM]] : tensor<8x64x768xf32>, tensor<8x64xf32>)
// CHECK: arith.divf %{{.*}}, %[[D]] : f32
// CHECK: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[STATS:.*]]:2 = linalg.generic {{.*}} ins(%[[SUM]], %[[SQ]] : tensor<8x64xf32>, tensor<8x64xf32>)
// CHECK: arith.addf %{{.*}}, %[[EPS]] : f32
// CHECK: math.sqrt
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ROW]], #[[$COL]], #[[$COL]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[STATS]]#0, %[[STATS]]#1, %[[W]], %[[B]] :
// CHECK: return %[[Y]]
func.func @layer_norm(%x: tensor<8x64x768xf32>, %w: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<8x64x768xf32> {
  %y = mdl.layer_norm %x, %w, %b eps = 1.000000e-05 : tensor<8x64x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<8x64x768xf32>
  return %y : tensor<8x64x768xf32>
}

// -----

// A generic over the result reads table[clamp(id, 0, V - 1), d].
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[IDS:.*]]: tensor<8x64xi32>, %[[TABLE:.*]]: tensor<50257x768xf32>)
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[IDS]] : tensor<8x64xi32>) outs(%{{.*}} : tensor<8x64x768xf32>)
// CHECK: ^bb0(%[[ID:.*]]: i32, %{{.*}}: f32):
// CHECK: %[[I:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK: %[[LOW:.*]] = arith.maxsi %[[I]], %{{.*}} : index
// CHECK: %[[LAST:.*]] = arith.constant 50256 : index
// CHECK: %[[ROW:.*]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK: %[[D:.*]] = linalg.index 2 : index
// CHECK: tensor.extract %[[TABLE]][%[[ROW]], %[[D]]] : tensor<50257x768xf32>
// CHECK: return %[[E]]
func.func @embedding(%ids: tensor<8x64xi32>, %wte: tensor<50257x768xf32>) -> tensor<8x64x768xf32> {
  %e = mdl.embedding %ids, %wte : tensor<8x64xi32>, tensor<50257x768xf32> -> tensor<8x64x768xf32>
  return %e : tensor<8x64x768xf32>
}

// -----

// ui8 ids (i8 after the conversion) are zero-extended.
// CHECK-LABEL: func.func @embedding_ui8
// CHECK: arith.index_castui %{{.*}} : i8 to index
mdl.buffer @"T:in:ids" : tensor<4xui8> {entry = "T", key = "ids", phase = "train", role = "input"}
mdl.buffer @"T:in:table" : tensor<300x8xf32> {entry = "T", key = "table", phase = "train", role = "input"}
mdl.buffer @"T:out:e" : tensor<4x8xf32> {entry = "T", key = "e", phase = "train", role = "output"}
func.func @embedding_ui8() {
  %ids = mdl.load @"T:in:ids" : tensor<4xui8>
  %table = mdl.load @"T:in:table" : tensor<300x8xf32>
  %e = mdl.embedding %ids, %table : tensor<4xui8>, tensor<300x8xf32> -> tensor<4x8xf32>
  mdl.store %e, @"T:out:e" : tensor<4x8xf32>
  return
}

// -----

// bf16 layer norm: the row sums and squared deviations accumulate in f32
// from extended elements, mean and rstd (and d, eps) are f32, and the last
// pass extends x, w and b, computes in f32 and rounds once.
// CHECK-LABEL: func.func @layer_norm_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xbf16>, %[[W:.*]]: tensor<16xbf16>, %[[B:.*]]: tensor<16xbf16>)
// CHECK: %[[D:.*]] = arith.constant 1.600000e+01 : f32
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x16xbf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[WIDE]] : f32
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[SUM]] : tensor<4x16xbf16>, tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[STATS:.*]]:2 = linalg.generic {{.*}} ins(%[[SUM]], %[[SQ]] : tensor<4xf32>, tensor<4xf32>) outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[STATS]]#0, %[[STATS]]#1, %[[W]], %[[B]] : tensor<4x16xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<16xbf16>, tensor<16xbf16>) outs(%{{.*}} : tensor<4x16xbf16>)
// CHECK-NEXT: ^bb0(%[[XI:.*]]: bf16, %[[MEAN:.*]]: f32, %[[RSTD:.*]]: f32, %[[WI:.*]]: bf16, %[[BI:.*]]: bf16, %{{.*}}: bf16):
// CHECK-DAG: %[[XW:.*]] = arith.extf %[[XI]] : bf16 to f32
// CHECK-DAG: %[[WW:.*]] = arith.extf %[[WI]] : bf16 to f32
// CHECK-DAG: %[[BW:.*]] = arith.extf %[[BI]] : bf16 to f32
// CHECK: %[[C:.*]] = arith.subf %[[XW]], %[[MEAN]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.mulf %[[C]], %[[RSTD]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[N]], %[[WW]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[S]], %[[BW]] : f32
// CHECK-NEXT: %[[OUT:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[OUT]] : bf16
// CHECK: return %[[Y]]
func.func @layer_norm_bf16(%x: tensor<4x16xbf16>, %w: tensor<16xbf16>, %b: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %y = mdl.layer_norm %x, %w, %b eps = 1.000000e-05 : tensor<4x16xbf16>, tensor<16xbf16>, tensor<16xbf16> -> tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

// The scatter-add: ids and grad flattened to 512 positions and read as
// memory, one mdlrt.row_scatter_add into a fresh f32 table (marked with the
// 512 terms an element may sum): its loops zero the table, then take the
// positions in order, adding grad row i into table row clamp(ids[i]).
// CHECK-LABEL: func.func @embedding_grad
// CHECK-SAME: (%[[IDS:.*]]: tensor<8x64xi64>, %[[G:.*]]: tensor<8x64x768xf32>)
// CHECK: %[[FLAT_IDS:.*]] = tensor.collapse_shape %[[IDS]] {{\[}}[0, 1]] : tensor<8x64xi64> into tensor<512xi64>
// CHECK: %[[IDM:.*]] = bufferization.to_memref %[[FLAT_IDS]] read_only : memref<512xi64, strided<[?], offset: ?>>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1], [2]] : tensor<8x64x768xf32> into tensor<512x768xf32>
// CHECK: %[[GM:.*]] = bufferization.to_memref %[[ROWS]] read_only : memref<512x768xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[TABLE:.*]] = memref.alloc() : memref<50257x768xf32>
// CHECK: mdlrt.row_scatter_add ins(%[[IDM]], %[[GM]] : {{.*}}) outs(%[[TABLE]] : memref<50257x768xf32>) {
// CHECK: scf.for %{{.*}} = %{{.*}} to %c50257
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[TABLE]]
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c512
// CHECK: %[[ID:.*]] = memref.load %[[IDM]][%[[I]]]
// CHECK: arith.index_cast %[[ID]] : i64 to index
// CHECK: %[[R:.*]] = arith.minsi
// CHECK: scf.for %[[D:.*]] = %{{.*}} to %c768
// CHECK: %[[X:.*]] = memref.load %[[GM]][%[[I]], %[[D]]]
// CHECK: %[[OLD:.*]] = memref.load %[[TABLE]][%[[R]], %[[D]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[X]] : f32
// CHECK: memref.store %[[NEW]], %[[TABLE]][%[[R]], %[[D]]]
// CHECK: } {mdl.reduction = 512 : i64}
// CHECK: %[[RESULT:.*]] = bufferization.to_tensor %[[TABLE]] restrict writable
// CHECK: return %[[RESULT]]
func.func @embedding_grad(%ids: tensor<8x64xi64>, %g: tensor<8x64x768xf32>) -> tensor<50257x768xf32> {
  %d = mdl.embedding_grad %ids, %g : tensor<8x64xi64>, tensor<8x64x768xf32> -> tensor<50257x768xf32>
  return %d : tensor<50257x768xf32>
}

// -----

// bf16 rows add up in an f32 table (repeated ids sum in f32), rounded once
// to bf16 after the scatter-add.
// CHECK-LABEL: func.func @embedding_grad_bf16
// CHECK: %[[TABLE:.*]] = memref.alloc() : memref<65x16xf32>
// CHECK: mdlrt.row_scatter_add ins(%{{.*}}, %{{.*}} : memref<8xi64, {{.*}}>, memref<8x16xbf16, {{.*}}>) outs(%[[TABLE]] : memref<65x16xf32>)
// CHECK: %[[X:.*]] = memref.load {{.*}} : memref<8x16xbf16
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[TABLE]]
// CHECK-NEXT: arith.addf %[[OLD]], %[[WIDE]] : f32
// CHECK: %[[SUMS:.*]] = bufferization.to_tensor %[[TABLE]]
// CHECK: %[[ROUNDED:.*]] = linalg.generic {{.*}} ins(%[[SUMS]] : tensor<65x16xf32>) outs(%{{.*}} : tensor<65x16xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[ROUNDED]]
func.func @embedding_grad_bf16(%ids: tensor<8xi64>, %g: tensor<8x16xbf16>) -> tensor<65x16xbf16> {
  %d = mdl.embedding_grad %ids, %g : tensor<8xi64>, tensor<8x16xbf16> -> tensor<65x16xbf16>
  return %d : tensor<65x16xbf16>
}

// -----

// layer_norm_grad: the row statistics as the forward computes them (sum,
// squared deviations, mean and rstd), the two row sums of g*w and g*w*xhat,
// dx in one elementwise generic, then the weight and bias gradients in two
// stages: the rows (2 x 3 = 6, in one chunk of 6) into [chunks, n] partial
// sums by a (chunk, row, column) generic with both outputs, then the chunks.
// CHECK-LABEL: func.func @layer_norm_grad
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x3x8xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x3x8xf32>, tensor<2x3xf32>)
// CHECK: %[[STATS:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]}
// CHECK: %[[A:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[STATS]]#0, %[[STATS]]#1
// CHECK: %[[C:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[STATS]]#0, %[[STATS]]#1
// CHECK: %[[DX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[STATS]]#0, %[[STATS]]#1, %[[A]], %[[C]] :
// CHECK: %[[PART:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins({{.*}} : tensor<1x6x8xf32>, tensor<1x6x8xf32>, tensor<1x6xf32>, tensor<1x6xf32>) outs({{.*}} : tensor<1x8xf32>, tensor<1x8xf32>)
// CHECK: %[[SUMS:.*]]:2 = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[PART]]#0, %[[PART]]#1 : tensor<1x8xf32>, tensor<1x8xf32>) outs({{.*}} : tensor<8xf32>, tensor<8xf32>)
// CHECK: return %[[DX]], %[[SUMS]]#0, %[[SUMS]]#1
func.func @layer_norm_grad(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %g: tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dw, %db = mdl.layer_norm_grad %x, %w, %g eps = 1.0e-5 : tensor<2x3x8xf32>, tensor<8xf32>
  return %dx, %dw, %db : tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>
}
