// --mdl-expand-optimizer with precision f16: torch.amp.GradScaler's
// unscale_ and step. The gradients arrive multiplied by the loss scale;
// found_inf (stored as 1 or 0 to @"t:out:found_inf") is whether any of
// them holds an inf or NaN: g * 0 is NaN exactly there, so the sum of those
// products over all gradients is NaN (compare ne with itself) exactly then.
// Every gradient is multiplied by f32(1 / loss_scale) before the norm and
// clipping. The parameters and the optimizer state are stored unchanged
// (`where found_inf, old, new`) on a skipped step, and Adam's bias
// correction and SGD's first-step test count the optimizer's own steps
// (the hyper optimizer_step), not the train step.
// RUN: sed 's/SETTINGS/{batch = 2 : i64, precision = "f16", optimizer = {kind = "adam", momentum = 0.0 : f64, nesterov = false}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefixes=CHECK,ADAM
// RUN: sed 's/SETTINGS/{batch = 2 : i64, precision = "f16", optimizer = {kind = "sgd", momentum = 0.9 : f64, nesterov = false}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefixes=CHECK,SGD
// Without f16, no found_inf and no selects on it.
// RUN: sed 's/SETTINGS/{batch = 2 : i64, precision = "bf16", optimizer = {kind = "adam", momentum = 0.0 : f64, nesterov = false}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=BF16
// BF16-LABEL: func.func @t.update()
// BF16-NOT: found_inf
// BF16-NOT: loss_scale
// BF16: return

// CHECK-LABEL: func.func @t.update()
// CHECK: %[[GW:.*]] = mdl.load @"grad:w" : tensor<4x3xf32>
// CHECK-NEXT: %[[GS:.*]] = mdl.load @"grad:s" : tensor<f32>
// CHECK-NEXT: %[[Z64:.*]] = mdl.constant dense<0.000000e+00> : tensor<f64>
// CHECK-NEXT: %[[Z:.*]] = mdl.cast %[[Z64]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: %[[PW:.*]] = mdl.mul %[[GW]], %[[Z]]
// CHECK-NEXT: %[[SW:.*]] = mdl.sum %[[PW]] axes = [0, 1]
// CHECK: %[[PS:.*]] = mdl.mul %[[GS]], %{{.*}} : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT: %[[Z0:.*]] = mdl.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[P1:.*]] = mdl.add %[[SW]], %[[Z0]]
// CHECK-NEXT: %[[PROBE:.*]] = mdl.add %[[PS]], %[[P1]]
// CHECK-NEXT: %[[INF:.*]] = mdl.compare ne, %[[PROBE]], %[[PROBE]] : tensor<f32>, tensor<f32> -> tensor<i1>
// CHECK-NEXT: %[[ZERO:.*]] = mdl.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[FLAG:.*]] = mdl.where %[[INF]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT: mdl.store %[[FLAG]], @"t:out:found_inf" : tensor<f32>
// CHECK-NEXT: %[[SCALE:.*]] = mdl.load @"t:hyper:loss_scale" : tensor<f64>
// CHECK-NEXT: %[[ONE64:.*]] = mdl.constant dense<1.000000e+00> : tensor<f64>
// CHECK-NEXT: %[[INV64:.*]] = mdl.div %[[ONE64]], %[[SCALE]] : tensor<f64>
// CHECK-NEXT: %[[INV:.*]] = mdl.cast %[[INV64]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: %[[UW:.*]] = mdl.mul %[[GW]], %[[INV]]
// CHECK-NEXT: %[[US:.*]] = mdl.mul %[[GS]], %[[INV]]
// The norm is the unscaled gradients'.
// CHECK-NEXT: mdl.mul %[[UW]], %[[UW]]
// CHECK: mdl.store %{{.*}}, @"t:out:grad_norm"

// ADAM: %[[P:.*]] = mdl.load @w : tensor<4x3xf32>
// ADAM-NEXT: %[[M:.*]] = mdl.load @"t:state:m.w"
// ADAM-NEXT: %[[V:.*]] = mdl.load @"t:state:v.w"
// ADAM: %[[KEEPM:.*]] = mdl.where %[[INF]], %[[M]], %{{.*}}
// ADAM-NEXT: mdl.store %[[KEEPM]], @"t:state:m.w"
// ADAM-NEXT: %[[KEEPV:.*]] = mdl.where %[[INF]], %[[V]], %{{.*}}
// ADAM-NEXT: mdl.store %[[KEEPV]], @"t:state:v.w"
// ADAM-NEXT: %[[T:.*]] = mdl.load @"t:hyper:optimizer_step" : tensor<f64>
// ADAM-NEXT: mdl.pow %{{.*}}, %[[T]]
// ADAM: %[[NEWP:.*]] = mdl.sub %[[P]], %{{.*}} : tensor<4x3xf32>
// ADAM-NEXT: %[[KEEPP:.*]] = mdl.where %[[INF]], %[[P]], %[[NEWP]]
// ADAM-NEXT: mdl.store %[[KEEPP]], @w : tensor<4x3xf32>

// SGD: %[[P:.*]] = mdl.load @w : tensor<4x3xf32>
// SGD: %[[B:.*]] = mdl.load @"t:state:momentum.w"
// SGD: %[[T:.*]] = mdl.load @"t:hyper:optimizer_step" : tensor<f64>
// SGD: %[[KEEPB:.*]] = mdl.where %[[INF]], %[[B]], %{{.*}}
// SGD-NEXT: mdl.store %[[KEEPB]], @"t:state:momentum.w"
// SGD: %[[NEWP:.*]] = mdl.sub %[[P]], %{{.*}} : tensor<4x3xf32>
// SGD-NEXT: %[[KEEPP:.*]] = mdl.where %[[INF]], %[[P]], %[[NEWP]]
// SGD-NEXT: mdl.store %[[KEEPP]], @w : tensor<4x3xf32>
// CHECK: mdl.store %{{.*}}, @"grad:w"
