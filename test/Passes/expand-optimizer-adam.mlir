// --mdl-expand-optimizer with adam and adamw: torch.optim.Adam / AdamW
// (amsgrad off) on the run-time hypers lr, weight_decay, beta1, beta2, eps
// and step. The input is Inputs/expand-optimizer-module.mlir with its
// SETTINGS filled in.

// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adam", momentum = 0.0 : f64, nesterov = false}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefixes=CHECK,ADAM
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adamw", momentum = 0.0 : f64, nesterov = false}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefixes=CHECK,ADAMW

// Two moments per parameter.
// CHECK: mdl.buffer @"t:state:m.w" : tensor<4x3xf32> {entry = "t", key = "m.w", phase = "train", role = "state"}
// CHECK-NEXT: mdl.buffer @"t:state:v.w" : tensor<4x3xf32> {entry = "t", key = "v.w", phase = "train", role = "state"}
// CHECK-NEXT: mdl.buffer @"t:state:m.s" : tensor<f32> {entry = "t", key = "m.s", phase = "train", role = "state"}
// CHECK-NEXT: mdl.buffer @"t:state:v.s" : tensor<f32> {entry = "t", key = "v.s", phase = "train", role = "state"}
// CHECK-LABEL: func.func @t.update()
// CHECK: %[[LR:.*]] = mdl.load @"t:hyper:lr" : tensor<f64>
// CHECK: %[[SCALE:.*]] = mdl.where
// CHECK-NEXT: %[[G:.*]] = mdl.mul %{{.*}}, %[[SCALE]] : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
// CHECK: %[[P:.*]] = mdl.load @w : tensor<4x3xf32>
// CHECK-NEXT: %[[M:.*]] = mdl.load @"t:state:m.w" : tensor<4x3xf32>
// CHECK-NEXT: %[[V:.*]] = mdl.load @"t:state:v.w" : tensor<4x3xf32>
// CHECK-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00> : tensor<f64>
// CHECK-NEXT: %[[WD:.*]] = mdl.load @"t:hyper:weight_decay" : tensor<f64>

// adam: L2 penalty on the gradient, g += wd p.
// ADAM-NEXT: %[[WD32:.*]] = mdl.cast %[[WD]] : tensor<f64> -> tensor<f32>
// ADAM-NEXT: %[[DECAY:.*]] = mdl.mul %[[WD32]], %[[P]]
// ADAM-NEXT: %[[GD:.*]] = mdl.add %[[G]], %[[DECAY]]
// ADAM-NEXT: %[[B1:.*]] = mdl.load @"t:hyper:beta1" : tensor<f64>
// adamw: decoupled decay first, p *= 1 - lr wd (computed in f64).
// ADAMW-NEXT: %[[LRWD:.*]] = mdl.mul %[[LR]], %[[WD]] : tensor<f64>, tensor<f64> -> tensor<f64>
// ADAMW-NEXT: %[[KEEP:.*]] = mdl.sub %[[ONE]], %[[LRWD]] : tensor<f64>, tensor<f64> -> tensor<f64>
// ADAMW-NEXT: %[[KEEP32:.*]] = mdl.cast %[[KEEP]] : tensor<f64> -> tensor<f32>
// ADAMW-NEXT: %[[PD:.*]] = mdl.mul %[[P]], %[[KEEP32]]
// ADAMW-NEXT: %[[B1:.*]] = mdl.load @"t:hyper:beta1" : tensor<f64>

// m = beta1 m + (1 - beta1) g as torch's lerp(m, g, w = 1 - beta1):
// base + coef (g - m) with (m, w) when w < 0.5, else (g, w - 1);
// v = beta2 v + ((1 - beta2) g) g.
// CHECK-NEXT: %[[B2:.*]] = mdl.load @"t:hyper:beta2" : tensor<f64>
// CHECK-NEXT: %[[C1:.*]] = mdl.sub %[[ONE]], %[[B1]] : tensor<f64>
// CHECK-NEXT: %[[WEIGHT:.*]] = mdl.cast %[[C1]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: %[[HALF:.*]] = mdl.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %[[SMALL:.*]] = mdl.compare lt, %[[WEIGHT]], %[[HALF]] : tensor<f32>, tensor<f32> -> tensor<i1>
// CHECK-NEXT: %[[ONEF:.*]] = mdl.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[WM1:.*]] = mdl.sub %[[WEIGHT]], %[[ONEF]]
// CHECK-NEXT: %[[COEF:.*]] = mdl.where %[[SMALL]], %[[WEIGHT]], %[[WM1]] : tensor<i1>, tensor<f32>, tensor<f32> -> tensor<f32>
// ADAM-NEXT: %[[BASE:.*]] = mdl.where %[[SMALL]], %[[M]], %[[GD]] : tensor<i1>, tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// ADAM-NEXT: %[[DIFF:.*]] = mdl.sub %[[GD]], %[[M]]
// ADAMW-NEXT: %[[BASE:.*]] = mdl.where %[[SMALL]], %[[M]], %[[G]] : tensor<i1>, tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// ADAMW-NEXT: %[[DIFF:.*]] = mdl.sub %[[G]], %[[M]]
// CHECK-NEXT: %[[STEPM:.*]] = mdl.mul %[[COEF]], %[[DIFF]]
// CHECK-NEXT: %[[NEWM:.*]] = mdl.add %[[BASE]], %[[STEPM]]
// CHECK-NEXT: %[[B2F:.*]] = mdl.cast %[[B2]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: %[[VKEPT:.*]] = mdl.mul %[[V]], %[[B2F]]
// CHECK-NEXT: %[[C2:.*]] = mdl.sub %[[ONE]], %[[B2]] : tensor<f64>
// CHECK-NEXT: %[[C2F:.*]] = mdl.cast %[[C2]]
// ADAM-NEXT: %[[GS:.*]] = mdl.mul %[[C2F]], %[[GD]]
// ADAM-NEXT: %[[GG:.*]] = mdl.mul %[[GS]], %[[GD]]
// ADAMW-NEXT: %[[GS:.*]] = mdl.mul %[[C2F]], %[[G]]
// ADAMW-NEXT: %[[GG:.*]] = mdl.mul %[[GS]], %[[G]]
// CHECK-NEXT: %[[NEWV:.*]] = mdl.add %[[VKEPT]], %[[GG]]
// CHECK-NEXT: mdl.store %[[NEWM]], @"t:state:m.w" : tensor<4x3xf32>
// CHECK-NEXT: mdl.store %[[NEWV]], @"t:state:v.w" : tensor<4x3xf32>

// Bias corrections 1 - beta^s and step_size = lr / bc1 in f64;
// p -= step_size m / (sqrt(v) / sqrt(bc2) + eps).
// CHECK-NEXT: %[[S:.*]] = mdl.load @"t:hyper:optimizer_step" : tensor<f64>
// CHECK-NEXT: %[[B1S:.*]] = mdl.pow %[[B1]], %[[S]] : tensor<f64>, tensor<f64> -> tensor<f64>
// CHECK-NEXT: %[[BC1:.*]] = mdl.sub %[[ONE]], %[[B1S]]
// CHECK-NEXT: %[[B2S:.*]] = mdl.pow %[[B2]], %[[S]]
// CHECK-NEXT: %[[BC2:.*]] = mdl.sub %[[ONE]], %[[B2S]]
// CHECK-NEXT: %[[SS:.*]] = mdl.div %[[LR]], %[[BC1]] : tensor<f64>, tensor<f64> -> tensor<f64>
// CHECK-NEXT: %[[E:.*]] = mdl.load @"t:hyper:eps" : tensor<f64>
// CHECK-NEXT: %[[E32:.*]] = mdl.cast %[[E]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: %[[RBC2:.*]] = mdl.sqrt %[[BC2]] : tensor<f64>
// CHECK-NEXT: %[[RBC2F:.*]] = mdl.cast %[[RBC2]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: %[[RV:.*]] = mdl.sqrt %[[NEWV]] : tensor<4x3xf32>
// CHECK-NEXT: %[[UNBIASED:.*]] = mdl.div %[[RV]], %[[RBC2F]]
// CHECK-NEXT: %[[DENOM:.*]] = mdl.add %[[UNBIASED]], %[[E32]]
// CHECK-NEXT: %[[SS32:.*]] = mdl.cast %[[SS]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: %[[NUM:.*]] = mdl.mul %[[SS32]], %[[NEWM]]
// CHECK-NEXT: %[[UPD:.*]] = mdl.div %[[NUM]], %[[DENOM]]
// ADAM-NEXT: %[[NEWP:.*]] = mdl.sub %[[P]], %[[UPD]]
// ADAMW-NEXT: %[[NEWP:.*]] = mdl.sub %[[PD]], %[[UPD]]
// CHECK-NEXT: mdl.store %[[NEWP]], @w : tensor<4x3xf32>
// CHECK: mdl.store %{{.*}}, @"t:state:m.s" : tensor<f32>
// CHECK-NEXT: mdl.store %{{.*}}, @"t:state:v.s" : tensor<f32>
