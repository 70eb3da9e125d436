// --mdl-expand-optimizer: the learning rate of step s (S = total_steps) for
// each schedule of the language spec, section 8, in f64 on the run-time
// hypers, stored as f32. The input is Inputs/expand-optimizer-module.mlir
// with its SETTINGS filled in.

// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd"}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=CONSTANT
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd"}, schedule = {kind = "warmup_cosine"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefixes=WARMUP,COSINE
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd"}, schedule = {kind = "linear"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefixes=WARMUP,LINEAR
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd"}, schedule = {kind = "step_lr"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=STEPLR

// constant: lr itself, and nothing else is read for it.
// CONSTANT-LABEL: func.func @t.update()
// CONSTANT-NEXT: %[[LR:.*]] = mdl.load @"t:hyper:lr" : tensor<f64>
// CONSTANT-NEXT: mdl.load @"grad:w"
// CONSTANT-NOT: t:hyper:step
// CONSTANT: mdl.store %{{.*}}, @"grad:s"
// CONSTANT-NEXT: %[[LR32:.*]] = mdl.cast %[[LR]] : tensor<f64> -> tensor<f32>
// CONSTANT-NEXT: mdl.store %[[LR32]], @"t:out:lr" : tensor<f32>

// warmup_cosine and linear: lr * s / max(warmup, 1) while s <= warmup.
// WARMUP-LABEL: func.func @t.update()
// WARMUP-NEXT: %[[LR:.*]] = mdl.load @"t:hyper:lr" : tensor<f64>
// WARMUP-NEXT: %[[S:.*]] = mdl.load @"t:hyper:step" : tensor<f64>
// WARMUP-NEXT: %[[ZERO:.*]] = mdl.constant dense<0.000000e+00> : tensor<f64>
// WARMUP-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00> : tensor<f64>
// WARMUP-NEXT: %[[W:.*]] = mdl.load @"t:hyper:warmup" : tensor<f64>
// WARMUP-NEXT: %[[TOTAL:.*]] = mdl.load @"t:hyper:total_steps" : tensor<f64>
// WARMUP-NEXT: %[[WARMING:.*]] = mdl.compare le, %[[S]], %[[W]] : tensor<f64>, tensor<f64> -> tensor<i1>
// WARMUP-NEXT: %[[LRS:.*]] = mdl.mul %[[LR]], %[[S]]
// WARMUP-NEXT: %[[WGUARD:.*]] = mdl.maximum %[[W]], %[[ONE]]
// WARMUP-NEXT: %[[WARMLR:.*]] = mdl.div %[[LRS]], %[[WGUARD]]
// The decay runs over max(S - warmup, 1) steps.
// WARMUP-NEXT: %[[SPAN:.*]] = mdl.sub %[[TOTAL]], %[[W]]
// WARMUP-NEXT: %[[DSTEPS:.*]] = mdl.maximum %[[SPAN]], %[[ONE]]

// cosine: min_lr + (lr - min_lr) * 0.5 * (1 + cos(pi * progress)),
// progress = min((s - w) / (S - w), 1).
// COSINE-NEXT: %[[MINLR:.*]] = mdl.load @"t:hyper:min_lr" : tensor<f64>
// COSINE-NEXT: %[[SINCE:.*]] = mdl.sub %[[S]], %[[W]]
// COSINE-NEXT: %[[RATIO:.*]] = mdl.div %[[SINCE]], %[[DSTEPS]]
// COSINE-NEXT: %[[PROGRESS:.*]] = mdl.minimum %[[RATIO]], %[[ONE]]
// COSINE-NEXT: %[[PI:.*]] = mdl.constant dense<3.1415926535897931> : tensor<f64>
// COSINE-NEXT: %[[ANGLE:.*]] = mdl.mul %[[PI]], %[[PROGRESS]]
// cos(x) = -sin(x - pi/2), sin by its Taylor series through y^23 (Horner).
// COSINE-NEXT: %[[HALFPI:.*]] = mdl.constant dense<1.5707963267948966> : tensor<f64>
// COSINE-NEXT: %[[Y:.*]] = mdl.sub %[[ANGLE]], %[[HALFPI]]
// COSINE-NEXT: %[[Y2:.*]] = mdl.mul %[[Y]], %[[Y]]
// COSINE-NEXT: %[[SONE:.*]] = mdl.constant dense<1.000000e+00> : tensor<f64>
// COSINE-NEXT: mdl.constant dense<5.060000e+02> : tensor<f64>
// COSINE-COUNT-10: mdl.div %[[Y2]]
// COSINE: mdl.constant dense<6.000000e+00> : tensor<f64>
// COSINE-NEXT: %[[T:.*]] = mdl.div %[[Y2]]
// COSINE-NEXT: %[[TS:.*]] = mdl.mul %[[T]], %{{.*}}
// COSINE-NEXT: %[[SERIES:.*]] = mdl.sub %[[SONE]], %[[TS]]
// COSINE-NEXT: %[[SIN:.*]] = mdl.mul %[[Y]], %[[SERIES]]
// COSINE-NEXT: %[[COS:.*]] = mdl.neg %[[SIN]] : tensor<f64>
// COSINE-NEXT: %[[RANGE:.*]] = mdl.sub %[[LR]], %[[MINLR]]
// COSINE-NEXT: %[[HALF:.*]] = mdl.constant dense<5.000000e-01> : tensor<f64>
// COSINE-NEXT: %[[HALFRANGE:.*]] = mdl.mul %[[RANGE]], %[[HALF]]
// COSINE-NEXT: %[[ONEPLUS:.*]] = mdl.add %[[ONE]], %[[COS]]
// COSINE-NEXT: %[[DECAY:.*]] = mdl.mul %[[HALFRANGE]], %[[ONEPLUS]]
// COSINE-NEXT: %[[DECAYLR:.*]] = mdl.add %[[MINLR]], %[[DECAY]]

// linear: lr * max(S - s, 0) / max(S - warmup, 1).
// LINEAR-NEXT: %[[LEFT:.*]] = mdl.sub %[[TOTAL]], %[[S]]
// LINEAR-NEXT: %[[LEFT0:.*]] = mdl.maximum %[[LEFT]], %[[ZERO]]
// LINEAR-NEXT: %[[LRLEFT:.*]] = mdl.mul %[[LR]], %[[LEFT0]]
// LINEAR-NEXT: %[[DECAYLR:.*]] = mdl.div %[[LRLEFT]], %[[DSTEPS]]

// WARMUP-NEXT: %[[SLR:.*]] = mdl.where %[[WARMING]], %[[WARMLR]], %[[DECAYLR]] : tensor<i1>, tensor<f64>, tensor<f64> -> tensor<f64>
// WARMUP: mdl.store %{{.*}}, @"grad:s"
// WARMUP-NEXT: %[[SLR32:.*]] = mdl.cast %[[SLR]] : tensor<f64> -> tensor<f32>
// WARMUP-NEXT: mdl.store %[[SLR32]], @"t:out:lr" : tensor<f32>

// step_lr: lr * gamma^floor(max(s - 1, 0) / max(every, 1)), the floor an
// i64 round trip.
// STEPLR-LABEL: func.func @t.update()
// STEPLR-NEXT: %[[LR:.*]] = mdl.load @"t:hyper:lr" : tensor<f64>
// STEPLR-NEXT: %[[S:.*]] = mdl.load @"t:hyper:step" : tensor<f64>
// STEPLR-NEXT: %[[ZERO:.*]] = mdl.constant dense<0.000000e+00> : tensor<f64>
// STEPLR-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00> : tensor<f64>
// STEPLR-NEXT: %[[GAMMA:.*]] = mdl.load @"t:hyper:gamma" : tensor<f64>
// STEPLR-NEXT: %[[EVERY:.*]] = mdl.load @"t:hyper:every" : tensor<f64>
// STEPLR-NEXT: %[[EVERY1:.*]] = mdl.maximum %[[EVERY]], %[[ONE]]
// STEPLR-NEXT: %[[SM1:.*]] = mdl.sub %[[S]], %[[ONE]]
// STEPLR-NEXT: %[[ELAPSED:.*]] = mdl.maximum %[[SM1]], %[[ZERO]]
// STEPLR-NEXT: %[[RATIO:.*]] = mdl.div %[[ELAPSED]], %[[EVERY1]]
// STEPLR-NEXT: %[[INT:.*]] = mdl.cast %[[RATIO]] : tensor<f64> -> tensor<i64>
// STEPLR-NEXT: %[[FLOOR:.*]] = mdl.cast %[[INT]] : tensor<i64> -> tensor<f64>
// STEPLR-NEXT: %[[FACTOR:.*]] = mdl.pow %[[GAMMA]], %[[FLOOR]]
// STEPLR-NEXT: %[[SLR:.*]] = mdl.mul %[[LR]], %[[FACTOR]]
// STEPLR: mdl.store %{{.*}}, @"grad:s"
// STEPLR-NEXT: %[[SLR32:.*]] = mdl.cast %[[SLR]] : tensor<f64> -> tensor<f32>
// STEPLR-NEXT: mdl.store %[[SLR32]], @"t:out:lr" : tensor<f32>
