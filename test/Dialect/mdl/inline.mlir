// mdl ops may be inlined: the upstream inliner inlines a block's function
// into its caller, and symbol-dce then drops the function.
// RUN: modelc-opt %s --inline --symbol-dce | FileCheck %s

// CHECK-NOT: @double
func.func private @double(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mdl.add %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @caller(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4xf32>
// CHECK-NEXT: %[[Y:.*]] = mdl.add %[[X]], %[[X]]
// CHECK-NEXT: %[[Z:.*]] = mdl.exp %[[Y]]
// CHECK-NEXT: return %[[Z]]
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = call @double(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %z = mdl.exp %y : tensor<4xf32>
  return %z : tensor<4xf32>
}
