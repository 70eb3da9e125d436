// --mdl-lower-to-linalg on pooling: window reductions over the padded
// input; the gradients as gathers over input positions.
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file | FileCheck %s

// 2x2 stride 2 max pooling without padding: no pad; loops (n, c, y, x | i, j)
// read x[n, c, 2y + i, 2x + j] from a -inf start, the [2, 2] window operand
// giving the reduction loops their extent.
// CHECK-DAG: #[[$WIN_READ:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-DAG: #[[$TAPS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @max_pool
// CHECK-SAME: (%[[X:.*]]: tensor<8x6x28x28xf32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<8x6x14x14xf32>)
// CHECK: %[[WINDOW:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$WIN_READ]], #[[$TAPS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[X]], %[[WINDOW]] : tensor<8x6x28x28xf32>, tensor<2x2xf32>) outs(%[[INIT]] : tensor<8x6x14x14xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK: arith.maximumf %[[ACC]], %[[IN]] : f32
// CHECK: return %[[Y]]
func.func @max_pool(%x: tensor<8x6x28x28xf32>) -> tensor<8x6x14x14xf32> {
  %y = mdl.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<8x6x28x28xf32> -> tensor<8x6x14x14xf32>
  return %y : tensor<8x6x14x14xf32>
}

// -----

// Padded integer max pooling: the padding is the least ui8 (0 after the
// conversion to i8) and the comparison unsigned.
// CHECK-LABEL: func.func @max_pool_ui8
// CHECK: %[[LOWEST:.*]] = arith.constant 0 : i8
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[LOWEST]] : i8
// CHECK: } : tensor<2x3x8x8xi8> to tensor<2x3x10x10xi8>
// CHECK: linalg.generic
// CHECK: arith.maxui %{{.*}}, %{{.*}} : i8
mdl.buffer @"T:in:x" : tensor<2x3x8x8xui8> {entry = "T", key = "x", phase = "train", role = "input"}
mdl.buffer @"T:out:y" : tensor<2x3x4x4xui8> {entry = "T", key = "y", phase = "train", role = "output"}
func.func @max_pool_ui8() {
  %x = mdl.load @"T:in:x" : tensor<2x3x8x8xui8>
  %y = mdl.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<2x3x8x8xui8> -> tensor<2x3x4x4xui8>
  mdl.store %y, @"T:out:y" : tensor<2x3x4x4xui8>
  return
}

// -----

// Average pooling counts the zero padding: the window sum, then / 9.
// CHECK-LABEL: func.func @avg_pool
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[PAD]], %{{.*}} : tensor<2x3x10x10xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<2x3x4x4xf32>)
// CHECK: arith.addf
// CHECK: %[[NINE:.*]] = arith.constant 9.000000e+00 : f32
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x3x4x4xf32>)
// CHECK: arith.divf %{{.*}}, %[[NINE]] : f32
func.func @avg_pool(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x4x4xf32> {
  %y = mdl.avg_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

// max_pool2d_grad, pass 1: per window the running max and the tap
// i * 3 + j of the first in-bounds maximum (i64, starting at -1); pass 2:
// a gather over the input (n, c, h, w | i, j) adding dY where the window
// with y * 2 + i == h + 1 stored tap (i, j).
// CHECK-LABEL: func.func @max_pool_grad
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xf32>, %[[G:.*]]: tensor<2x3x4x4xf32>)
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[NONE:.*]] = arith.constant -1 : i64
// CHECK: %[[TAP_INIT:.*]] = linalg.fill ins(%[[NONE]] : i64) outs(%{{.*}} : tensor<2x3x4x4xi64>)
// CHECK: %[[ARGMAX:.*]]:2 = linalg.generic {{.*}} ins(%[[PAD]], %{{.*}} : tensor<2x3x10x10xf32>, tensor<3x3xf32>) outs(%{{.*}}, %[[TAP_INIT]] : tensor<2x3x4x4xf32>, tensor<2x3x4x4xi64>)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, i64
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<3x3xf32>) outs(%{{.*}} : tensor<2x3x8x8xf32>)
// CHECK: arith.remsi
// CHECK: %[[TAP:.*]] = tensor.extract %[[ARGMAX]]#1[
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[TAP]], %{{.*}} : i64
// CHECK: %[[DY:.*]] = tensor.extract %[[G]][
// CHECK: arith.select %{{.*}}, %[[DY]], %{{.*}} : f32
// CHECK: return %[[DX]]
func.func @max_pool_grad(%x: tensor<2x3x8x8xf32>, %g: tensor<2x3x4x4xf32>) -> tensor<2x3x8x8xf32> {
  %dx = mdl.max_pool2d_grad %x, %g kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x8x8xf32>
  return %dx : tensor<2x3x8x8xf32>
}

// -----

// avg_pool2d_grad: each covering window's dY / 4 gathered; with stride 2 the
// window index (h - i) / 2 must divide exactly.
// CHECK-LABEL: func.func @avg_pool_grad
// CHECK-SAME: (%[[G:.*]]: tensor<2x3x4x4xf32>)
// CHECK: %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x2xf32>) outs(%{{.*}} : tensor<2x3x8x8xf32>)
// CHECK: arith.remsi
// CHECK: %[[DY:.*]] = tensor.extract %[[G]][
// CHECK: arith.divf %[[DY]], %[[FOUR]] : f32
// CHECK: return %[[DX]]
func.func @avg_pool_grad(%g: tensor<2x3x4x4xf32>) -> tensor<2x3x8x8xf32> {
  %dx = mdl.avg_pool2d_grad %g kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x3x4x4xf32> -> tensor<2x3x8x8xf32>
  return %dx : tensor<2x3x8x8xf32>
}

// -----

// bf16 average pooling: the padding and the window operand stay bf16, the
// window sum accumulates in f32 from extended elements, / 9 in f32 and one
// truncf.
// CHECK-LABEL: func.func @avg_pool_bf16
// CHECK: %[[PAD:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<2x3x8x8xbf16> to tensor<2x3x10x10xbf16>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[PAD]], %{{.*}} : tensor<2x3x10x10xbf16>, tensor<3x3xbf16>) outs(%{{.*}} : tensor<2x3x4x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[WIDE]] : f32
// CHECK: %[[NINE:.*]] = arith.constant 9.000000e+00 : f32
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x3x4x4xf32>) outs(%{{.*}} : tensor<2x3x4x4xbf16>)
// CHECK: %[[AVG:.*]] = arith.divf %{{.*}}, %[[NINE]] : f32
// CHECK-NEXT: %[[OUT:.*]] = arith.truncf %[[AVG]] : f32 to bf16
// CHECK: return %[[Y]]
func.func @avg_pool_bf16(%x: tensor<2x3x8x8xbf16>) -> tensor<2x3x4x4xbf16> {
  %y = mdl.avg_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<2x3x8x8xbf16> -> tensor<2x3x4x4xbf16>
  return %y : tensor<2x3x4x4xbf16>
}

// -----

// bf16 max_pool2d_grad: the argmax pass compares in bf16 (exact); the
// gather adds the extended adjoints of overlapping windows in an f32
// accumulator, rounded once by an elementwise pass.
// CHECK-LABEL: func.func @max_pool_grad_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x8xbf16>, %[[G:.*]]: tensor<2x3x4x4xbf16>)
// CHECK: %[[ARGMAX:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2x3x4x4xbf16>, tensor<2x3x4x4xi64>)
// CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : bf16
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x8x8xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: bf16, %[[ACC:.*]]: f32):
// CHECK: %[[DY:.*]] = tensor.extract %[[G]][
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[DY]] : bf16 to f32
// CHECK-NEXT: %[[SHARE:.*]] = arith.select %{{.*}}, %[[WIDE]], %[[ZERO]] : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[SHARE]] : f32
// CHECK: %[[ROUNDED:.*]] = linalg.generic {{.*}} ins(%[[DX]] : tensor<2x3x8x8xf32>) outs(%{{.*}} : tensor<2x3x8x8xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: arith.truncf %[[IN]] : f32 to bf16
// CHECK: return %[[ROUNDED]]
func.func @max_pool_grad_bf16(%x: tensor<2x3x8x8xbf16>, %g: tensor<2x3x4x4xbf16>) -> tensor<2x3x8x8xbf16> {
  %dx = mdl.max_pool2d_grad %x, %g kernel = [3, 3] stride = [2, 2] padding = [1, 1] : tensor<2x3x8x8xbf16>, tensor<2x3x4x4xbf16> -> tensor<2x3x8x8xbf16>
  return %dx : tensor<2x3x8x8xbf16>
}

// -----

// bf16 avg_pool2d_grad: each adjoint extended and divided by 4 in f32,
// summed in f32, rounded once.
// CHECK-LABEL: func.func @avg_pool_grad_bf16
// CHECK-SAME: (%[[G:.*]]: tensor<2x3x4x4xbf16>)
// CHECK: %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x8x8xf32>)
// CHECK: %[[DY:.*]] = tensor.extract %[[G]][
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[DY]] : bf16 to f32
// CHECK-NEXT: arith.divf %[[WIDE]], %[[FOUR]] : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[ROUNDED:.*]] = linalg.generic {{.*}} ins(%[[DX]] : tensor<2x3x8x8xf32>) outs(%{{.*}} : tensor<2x3x8x8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[ROUNDED]]
func.func @avg_pool_grad_bf16(%g: tensor<2x3x4x4xbf16>) -> tensor<2x3x8x8xbf16> {
  %dx = mdl.avg_pool2d_grad %g kernel = [2, 2] stride = [2, 2] padding = [0, 0] : tensor<2x3x4x4xbf16> -> tensor<2x3x8x8xbf16>
  return %dx : tensor<2x3x8x8xbf16>
}
