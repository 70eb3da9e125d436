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

// -----

// bf16 computes in f32 (PyTorch's opmath): the element extended, the
// formula and its constants in f32, one truncf on the result.
// CHECK-LABEL: func.func @gelu_bf16
// CHECK: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[X:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NOT: bf16
// CHECK: math.erf %{{.*}} : f32
// CHECK-NOT: bf16
// CHECK: %[[R:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[Y:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[Y]] : bf16
func.func @gelu_bf16(%x: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
  %y = mdl.gelu %x : tensor<4x16xbf16>
  return %y : tensor<4x16xbf16>
}

// -----

// gelu_grad on f16: input and adjoint extended, the derivative and the
// product in f32, one truncf.
// CHECK-LABEL: func.func @gelu_grad_f16
// CHECK: ^bb0(%[[IN:.*]]: f16, %[[DY:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[X:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[G:.*]] = arith.extf %[[DY]] : f16 to f32
// CHECK-NOT: f16
// CHECK: math.tanh %{{.*}} : f32
// CHECK-NOT: f16
// CHECK: %[[R:.*]] = arith.mulf %[[G]], %{{.*}} : f32
// CHECK-NEXT: %[[Y:.*]] = arith.truncf %[[R]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[Y]] : f16
func.func @gelu_grad_f16(%x: tensor<4x16xf16>, %g: tensor<4x16xf16>) -> tensor<4x16xf16> {
  %d = mdl.gelu_grad %x, %g {approximate = "tanh"} : tensor<4x16xf16>
  return %d : tensor<4x16xf16>
}
