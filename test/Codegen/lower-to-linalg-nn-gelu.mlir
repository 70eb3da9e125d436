// --mdl-lower-to-linalg on mdl.gelu and mdl.gelu_grad: elementwise generics
// with PyTorch's formulas and constants for the erf and tanh forms.
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file | FileCheck %s

// "none": x * 0.5 * (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func.func @gelu_erf
// CHECK-SAME: (%[[X:.*]]: tensor<8x3072xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<8x3072xf32>) outs(%{{.*}} : tensor<8x3072xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[HALF_X:.*]] = arith.mulf %[[IN]], %[[HALF]] : f32
// CHECK: %[[RSQRT2:.*]] = arith.constant 0.707106769 : f32
// CHECK: %[[SCALED:.*]] = arith.mulf %[[IN]], %[[RSQRT2]] : f32
// CHECK: %[[ERF:.*]] = math.erf %[[SCALED]] : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[ONE_PLUS:.*]] = arith.addf %[[ONE]], %[[ERF]] : f32
// CHECK: %[[R:.*]] = arith.mulf %[[HALF_X]], %[[ONE_PLUS]] : f32
// CHECK: linalg.yield %[[R]] : f32
// CHECK: return %[[Y]]
func.func @gelu_erf(%x: tensor<8x3072xf32>) -> tensor<8x3072xf32> {
  %y = mdl.gelu %x : tensor<8x3072xf32>
  return %y : tensor<8x3072xf32>
}

// -----

// "tanh" (GPT-2): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: linalg.generic
// CHECK-DAG: arith.constant 4.471500e-02 : f32
// CHECK-DAG: arith.constant 0.797884583 : f32
// CHECK: math.tanh
// CHECK-NOT: math.erf
func.func @gelu_tanh(%x: tensor<8x3072xf32>) -> tensor<8x3072xf32> {
  %y = mdl.gelu %x {approximate = "tanh"} : tensor<8x3072xf32>
  return %y : tensor<8x3072xf32>
}

// -----

// gelu_grad "none": grad * (cdf + x * exp(-x^2 / 2) / sqrt(2 pi)), f64.
// CHECK-LABEL: func.func @gelu_grad_erf
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf64>, %[[G:.*]]: tensor<4x16xf64>)
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[G]] : tensor<4x16xf64>, tensor<4x16xf64>)
// CHECK: ^bb0(%[[IN:.*]]: f64, %[[DY:.*]]: f64, %{{.*}}: f64):
// CHECK: math.erf
// CHECK: math.exp
// CHECK: arith.constant 0.3989422804014327 : f64
// CHECK: %[[D:.*]] = arith.addf
// CHECK: %[[R:.*]] = arith.mulf %[[DY]], %[[D]] : f64
// CHECK: linalg.yield %[[R]] : f64
func.func @gelu_grad_erf(%x: tensor<4x16xf64>, %g: tensor<4x16xf64>) -> tensor<4x16xf64> {
  %d = mdl.gelu_grad %x, %g : tensor<4x16xf64>
  return %d : tensor<4x16xf64>
}

// -----

// gelu_grad "tanh": 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2).
// CHECK-LABEL: func.func @gelu_grad_tanh
// CHECK: linalg.generic
// CHECK: math.tanh
// CHECK: arith.constant 1.341450e-01 : f32
// CHECK-NOT: math.erf
func.func @gelu_grad_tanh(%x: tensor<8x3072xf32>, %g: tensor<8x3072xf32>) -> tensor<8x3072xf32> {
  %d = mdl.gelu_grad %x, %g {approximate = "tanh"} : tensor<8x3072xf32>
  return %d : tensor<8x3072xf32>
}
