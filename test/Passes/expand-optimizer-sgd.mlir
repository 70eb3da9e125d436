// --mdl-expand-optimizer with sgd: torch.optim.SGD (dampening 0) on the
// run-time hypers lr, weight_decay and momentum. The input is
// Inputs/expand-optimizer-module.mlir with its SETTINGS filled in.

// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd", momentum = 0.0 : f64, nesterov = false}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=PLAIN
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd", momentum = 0.9 : f64, nesterov = false}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefixes=MOMENTUM,HEAVYBALL
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd", momentum = 0.9 : f64, nesterov = true}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefixes=MOMENTUM,NESTEROV

// Without momentum in the settings: no state; g += wd p; p -= lr g.
// PLAIN-NOT: t:state
// PLAIN-LABEL: func.func @t.update()
// PLAIN: %[[LR:.*]] = mdl.load @"t:hyper:lr" : tensor<f64>
// PLAIN: %[[SCALE:.*]] = mdl.where
// PLAIN-NEXT: %[[G:.*]] = mdl.mul %{{.*}}, %[[SCALE]] : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
// PLAIN: %[[W:.*]] = mdl.load @w : tensor<4x3xf32>
// PLAIN-NEXT: %[[WD:.*]] = mdl.load @"t:hyper:weight_decay" : tensor<f64>
// PLAIN-NEXT: %[[WD32:.*]] = mdl.cast %[[WD]] : tensor<f64> -> tensor<f32>
// PLAIN-NEXT: %[[DECAY:.*]] = mdl.mul %[[WD32]], %[[W]] : tensor<f32>, tensor<4x3xf32> -> tensor<4x3xf32>
// PLAIN-NEXT: %[[GD:.*]] = mdl.add %[[G]], %[[DECAY]]
// PLAIN-NEXT: %[[LR32:.*]] = mdl.cast %[[LR]] : tensor<f64> -> tensor<f32>
// PLAIN-NEXT: %[[STEP:.*]] = mdl.mul %[[LR32]], %[[GD]] : tensor<f32>, tensor<4x3xf32> -> tensor<4x3xf32>
// PLAIN-NEXT: %[[NEW:.*]] = mdl.sub %[[W]], %[[STEP]]
// PLAIN-NEXT: mdl.store %[[NEW]], @w : tensor<4x3xf32>
// PLAIN-NOT: momentum

// With momentum: a buffer per parameter; b = g on step 1, else
// momentum * b + g; nesterov steps along g + momentum * b, else along b.
// MOMENTUM: mdl.buffer @"t:state:momentum.w" : tensor<4x3xf32> {entry = "t", key = "momentum.w", phase = "train", role = "state"}
// MOMENTUM-NEXT: mdl.buffer @"t:state:momentum.s" : tensor<f32> {entry = "t", key = "momentum.s", phase = "train", role = "state"}
// MOMENTUM-LABEL: func.func @t.update()
// MOMENTUM: %[[LR:.*]] = mdl.load @"t:hyper:lr" : tensor<f64>
// MOMENTUM: %[[W:.*]] = mdl.load @w : tensor<4x3xf32>
// MOMENTUM: %[[GD:.*]] = mdl.add %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// MOMENTUM-NEXT: %[[B:.*]] = mdl.load @"t:state:momentum.w" : tensor<4x3xf32>
// MOMENTUM-NEXT: %[[MU:.*]] = mdl.load @"t:hyper:momentum" : tensor<f64>
// MOMENTUM-NEXT: %[[MU32:.*]] = mdl.cast %[[MU]] : tensor<f64> -> tensor<f32>
// MOMENTUM-NEXT: %[[S:.*]] = mdl.load @"t:hyper:optimizer_step" : tensor<f64>
// MOMENTUM-NEXT: %[[ONE:.*]] = mdl.constant dense<1.000000e+00> : tensor<f64>
// MOMENTUM-NEXT: %[[FIRST:.*]] = mdl.compare eq, %[[S]], %[[ONE]] : tensor<f64>, tensor<f64> -> tensor<i1>
// MOMENTUM-NEXT: %[[KEPT:.*]] = mdl.mul %[[B]], %[[MU32]]
// MOMENTUM-NEXT: %[[ACC:.*]] = mdl.add %[[KEPT]], %[[GD]]
// MOMENTUM-NEXT: %[[NEWB:.*]] = mdl.where %[[FIRST]], %[[GD]], %[[ACC]] : tensor<i1>, tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// MOMENTUM-NEXT: mdl.store %[[NEWB]], @"t:state:momentum.w" : tensor<4x3xf32>
// NESTEROV-NEXT: %[[LOOK:.*]] = mdl.mul %[[MU32]], %[[NEWB]]
// NESTEROV-NEXT: %[[DIR:.*]] = mdl.add %[[GD]], %[[LOOK]]
// NESTEROV-NEXT: %[[LR32:.*]] = mdl.cast %[[LR]] : tensor<f64> -> tensor<f32>
// NESTEROV-NEXT: %[[STEP:.*]] = mdl.mul %[[LR32]], %[[DIR]]
// HEAVYBALL-NEXT: %[[LR32:.*]] = mdl.cast %[[LR]] : tensor<f64> -> tensor<f32>
// HEAVYBALL-NEXT: %[[STEP:.*]] = mdl.mul %[[LR32]], %[[NEWB]]
// MOMENTUM-NEXT: %[[NEW:.*]] = mdl.sub %[[W]], %[[STEP]]
// MOMENTUM-NEXT: mdl.store %[[NEW]], @w : tensor<4x3xf32>
// MOMENTUM: mdl.store %{{.*}}, @"t:state:momentum.s" : tensor<f32>
