// --mdl-expand-optimizer: what every update function does, whatever the
// optimizer: the parameters it updates, the global gradient norm and the
// run-time switch for clipping, the stores (parameters, zeroed gradients,
// lr), and a load of each symbol before any store to it. The input is
// Inputs/expand-optimizer-module.mlir with its SETTINGS filled in.

// Clipping is switched at run time by the hyper grad_clip, so the function
// is the same with and without the setting.
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd", momentum = 0.0 : f64, nesterov = false}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s
// RUN: sed 's/SETTINGS/{batch = 2 : i64, grad_clip = 1.0 : f64, optimizer = {kind = "sgd", momentum = 0.0 : f64, nesterov = false}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s
// The multi-tensor form (the default): the same step once over flat views.
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adamw"}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer | FileCheck %s --check-prefix=FLAT

// Plain SGD keeps no state, and @frozen, whose gradient @t.fwd_bwd does not
// write, is neither loaded nor updated.
// CHECK-NOT: t:state
// CHECK-LABEL: func.func @t.update()
// CHECK-SAME: attributes {mdl.entry = "t", mdl.function = "update"}
// CHECK-NOT: frozen
// CHECK: %[[LR:.*]] = mdl.load @"t:hyper:lr" : tensor<f64>

// The norm: the root of the sum of every gradient's squares (a 0-d
// gradient needs no reduction).
// CHECK-NEXT: %[[GW:.*]] = mdl.load @"grad:w" : tensor<4x3xf32>
// CHECK-NEXT: %[[GS:.*]] = mdl.load @"grad:s" : tensor<f32>
// CHECK-NEXT: %[[SQW:.*]] = mdl.mul %[[GW]], %[[GW]]
// CHECK-NEXT: %[[SUMW:.*]] = mdl.sum %[[SQW]] axes = [0, 1] : tensor<4x3xf32> -> tensor<f32>
// CHECK-NEXT: %[[SQS:.*]] = mdl.mul %[[GS]], %[[GS]]
// The sum of the stacked squares, in mdl.sum's order: from 0, each
// added to the sum so far, as 0-d adds.
// CHECK-NEXT: %[[Z:.*]] = mdl.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[S1:.*]] = mdl.add %[[SUMW]], %[[Z]]
// CHECK-NEXT: %[[SUM:.*]] = mdl.add %[[SQS]], %[[S1]]
// CHECK-NEXT: %[[NORM:.*]] = mdl.sqrt %[[SUM]] : tensor<f32>
// CHECK-NEXT: mdl.store %[[NORM]], @"t:out:grad_norm" : tensor<f32>

// coef = min(1, reciprocal(norm + 1e-6) * grad_clip) when grad_clip > 0,
// else 1; every gradient is scaled by it.
// CHECK-NEXT: %[[CLIP:.*]] = mdl.load @"t:hyper:grad_clip" : tensor<f64>
// CHECK-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[EPS:.*]] = mdl.constant dense<9.99999997E-7> : tensor<f32>
// CHECK-NEXT: %[[GUARDED:.*]] = mdl.add %[[NORM]], %[[EPS]]
// CHECK-NEXT: %[[RECIP:.*]] = mdl.div %[[ONE]], %[[GUARDED]]
// CHECK-NEXT: %[[CLIP32:.*]] = mdl.cast %[[CLIP]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: %[[COEF:.*]] = mdl.mul %[[RECIP]], %[[CLIP32]]
// CHECK-NEXT: %[[CLAMPED:.*]] = mdl.minimum %[[COEF]], %[[ONE]]
// CHECK-NEXT: %[[ZERO:.*]] = mdl.constant dense<0.000000e+00> : tensor<f64>
// CHECK-NEXT: %[[ON:.*]] = mdl.compare gt, %[[CLIP]], %[[ZERO]]
// CHECK-NEXT: %[[SCALE:.*]] = mdl.where %[[ON]], %[[CLAMPED]], %[[ONE]] : tensor<i1>, tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT: %[[CGW:.*]] = mdl.mul %[[GW]], %[[SCALE]] : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[CGS:.*]] = mdl.mul %[[GS]], %[[SCALE]] : tensor<f32>, tensor<f32> -> tensor<f32>

// Each parameter: loaded, updated from its clipped gradient, stored; its
// gradient zeroed. Then the lr used, as f32.
// CHECK-NEXT: %[[W:.*]] = mdl.load @w : tensor<4x3xf32>
// CHECK: mdl.add %[[CGW]],
// CHECK: %[[NEWW:.*]] = mdl.sub %[[W]], %{{.*}} : tensor<4x3xf32>
// CHECK-NEXT: mdl.store %[[NEWW]], @w : tensor<4x3xf32>
// CHECK-NEXT: %[[ZW:.*]] = mdl.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK-NEXT: mdl.store %[[ZW]], @"grad:w" : tensor<4x3xf32>
// CHECK-NEXT: %[[S:.*]] = mdl.load @s : tensor<f32>
// CHECK: mdl.add %[[CGS]],
// CHECK: %[[NEWS:.*]] = mdl.sub %[[S]], %{{.*}} : tensor<f32>
// CHECK-NEXT: mdl.store %[[NEWS]], @s : tensor<f32>
// CHECK-NEXT: %[[ZS:.*]] = mdl.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: mdl.store %[[ZS]], @"grad:s" : tensor<f32>
// CHECK-NEXT: %[[LR32:.*]] = mdl.cast %[[LR]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: mdl.store %[[LR32]], @"t:out:lr" : tensor<f32>
// CHECK-NEXT: return
// CHECK-NOT: frozen

// The views: @w's 12 elements, padding to 64 bytes, then @s: 17 elements;
// @frozen, which the entry does not train, is in none.
// FLAT: mdl.flat_view @"t:flat:param.f32" : tensor<17xf32> of [@w, @s]
// FLAT-NEXT: mdl.flat_view @"t:flat:grad.f32" : tensor<17xf32> of [@"grad:w", @"grad:s"]
// FLAT-NEXT: mdl.flat_view @"t:flat:m.f32" : tensor<17xf32> of [@"t:state:m.w", @"t:state:m.s"]
// FLAT-NEXT: mdl.flat_view @"t:flat:v.f32" : tensor<17xf32> of [@"t:state:v.w", @"t:state:v.s"]
// FLAT-LABEL: func.func @t.update()
// One load of all the gradients, one sum of their squares.
// FLAT: %[[G:.*]] = mdl.load @"t:flat:grad.f32" : tensor<17xf32>
// FLAT-NEXT: %[[SQ:.*]] = mdl.mul %[[G]], %[[G]] : tensor<17xf32>
// FLAT-NEXT: mdl.sum %[[SQ]] axes = [0] : tensor<17xf32> -> tensor<f32>
// FLAT: %[[CG:.*]] = mdl.mul %[[G]], %{{.*}} : tensor<17xf32>, tensor<f32> -> tensor<17xf32>
// FLAT-NEXT: mdl.load @"t:flat:param.f32" : tensor<17xf32>
// FLAT-NEXT: mdl.load @"t:flat:m.f32" : tensor<17xf32>
// FLAT-NEXT: mdl.load @"t:flat:v.f32" : tensor<17xf32>
// FLAT: mdl.store %{{.*}}, @"t:flat:m.f32" : tensor<17xf32>
// FLAT-NEXT: mdl.store %{{.*}}, @"t:flat:v.f32" : tensor<17xf32>
// FLAT: mdl.store %{{.*}}, @"t:flat:param.f32" : tensor<17xf32>
// FLAT-NEXT: %[[Z:.*]] = mdl.constant dense<0.000000e+00> : tensor<17xf32>
// FLAT-NEXT: mdl.store %[[Z]], @"t:flat:grad.f32" : tensor<17xf32>
// No member is touched by itself.
// FLAT-NOT: @w
// FLAT-NOT: @"grad:
// FLAT-NOT: @"t:state
// FLAT: return
