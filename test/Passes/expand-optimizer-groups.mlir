// --mdl-expand-optimizer with param_groups: a parameter a group selects (by
// name pattern or rank) takes the group's weight decay, a constant, in
// place of the weight_decay hyper; a group that selects nothing, a
// parameter in two groups, and groups with ZeRO-1 are errors. The input is
// Inputs/expand-optimizer-module.mlir (parameters @w, 4x3, and @s, a
// scalar) with its SETTINGS filled in.

// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd", momentum = 0.0 : f64, nesterov = false}, param_groups = {scalars = {max_rank = 0 : i64, weight_decay = 2.500000e-01 : f64}}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adamw"}, param_groups = {named = {match = ["x*", "s"], weight_decay = 2.500000e-01 : f64}}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=ADAMW
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd", momentum = 0.0 : f64, nesterov = false}, param_groups = {fast = {max_rank = 0 : i64, lr = 5.000000e-01 : f64}}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=LR
// The multi-tensor form: a flat view per group (and one for the
// parameters in none), each stepped with its own settings.
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adamw"}, param_groups = {no_decay = {max_rank = 1 : i64, weight_decay = 0.0 : f64}}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer | FileCheck %s --check-prefix=FLAT
// Many wildcards select as the plain name: "**s**" matches @s only, and
// "?*w*" nothing ("?" takes the one character before "w"), so ADAMW holds.
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adamw"}, param_groups = {named = {match = ["**s**", "?*w*"], weight_decay = 2.500000e-01 : f64}}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=ADAMW
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd"}, param_groups = {none = {match = ["x*"], weight_decay = 0.0 : f64}}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | not modelc-opt --mdl-expand-optimizer=flat-views=false 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd"}, param_groups = {a = {match = ["?"], weight_decay = 0.0 : f64}, b = {max_rank = 2 : i64, weight_decay = 0.0 : f64}}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | not modelc-opt --mdl-expand-optimizer=flat-views=false 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd"}, parallel = {zero = 1 : i64}, param_groups = {a = {match = ["w"], weight_decay = 0.0 : f64}}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | not modelc-opt --mdl-expand-optimizer=flat-views=false 2>&1 | FileCheck %s --check-prefix=ZERO

// @w keeps the hyper; the scalar @s (rank 0) takes 0.25.
// CHECK-LABEL: func.func @t.update()
// CHECK: %[[W:.*]] = mdl.load @w : tensor<4x3xf32>
// CHECK-NEXT: %[[WD:.*]] = mdl.load @"t:hyper:weight_decay" : tensor<f64>
// CHECK-NEXT: mdl.cast %[[WD]] : tensor<f64> -> tensor<f32>
// CHECK: %[[S:.*]] = mdl.load @s : tensor<f32>
// CHECK-NEXT: %[[GWD:.*]] = mdl.constant dense<2.500000e-01> : tensor<f64>
// CHECK-NEXT: %[[GWD32:.*]] = mdl.cast %[[GWD]] : tensor<f64> -> tensor<f32>
// CHECK-NEXT: mdl.mul %[[GWD32]], %[[S]]
// CHECK: return

// AdamW's decoupled decay of @s (matched by name) uses the constant.
// ADAMW-LABEL: func.func @t.update()
// ADAMW: %[[W:.*]] = mdl.load @w : tensor<4x3xf32>
// ADAMW: mdl.load @"t:hyper:weight_decay" : tensor<f64>
// ADAMW: %[[S:.*]] = mdl.load @s : tensor<f32>
// ADAMW: %[[GWD:.*]] = mdl.constant dense<2.500000e-01> : tensor<f64>
// ADAMW-NEXT: %[[LRWD:.*]] = mdl.mul %{{.*}}, %[[GWD]] : tensor<f64>, tensor<f64> -> tensor<f64>
// ADAMW-NOT: t:hyper:weight_decay
// ADAMW: return

// NONE: error: parameter group 'none' selects none of the trained parameters
// TWICE: error: parameter 'w' is in parameter groups 'a' and 'b'; a parameter may be in one group only
// ZERO: error: param_groups are not supported with ZeRO-1 (parallel { zero = 1 }) yet

// A group's lr: the schedule (here constant) from the group's own base lr,
// a constant, for @s; @w keeps the lr hyper, which is also what out:lr
// reports. No weight decay given: both keep the hyper.
// LR-LABEL: func.func @t.update()
// LR: %[[LR:.*]] = mdl.load @"t:hyper:lr" : tensor<f64>
// LR: %[[WDW:.*]] = mdl.load @"t:hyper:weight_decay" : tensor<f64>
// LR: %[[LRW:.*]] = mdl.cast %[[LR]] : tensor<f64> -> tensor<f32>
// LR-NEXT: mdl.mul %[[LRW]], %{{.*}} : tensor<f32>, tensor<4x3xf32>
// LR: %[[GLR:.*]] = mdl.constant dense<5.000000e-01> : tensor<f64>
// LR-NEXT: %[[S:.*]] = mdl.load @s : tensor<f32>
// LR-NEXT: mdl.cast %[[WDW]] : tensor<f64> -> tensor<f32>
// LR: %[[GLR32:.*]] = mdl.cast %[[GLR]] : tensor<f64> -> tensor<f32>
// LR-NEXT: mdl.mul %[[GLR32]], %{{.*}} : tensor<f32>, tensor<f32>
// LR: %[[OUT:.*]] = mdl.cast %[[LR]] : tensor<f64> -> tensor<f32>
// LR-NEXT: mdl.store %[[OUT]], @"t:out:lr"

// FLAT: mdl.flat_view @"t:flat:param.f32" : tensor<12xf32> of [@w]
// FLAT: mdl.flat_view @"t:flat:param.f32.no_decay" : tensor<1xf32> of [@s]
// FLAT-NEXT: mdl.flat_view @"t:flat:grad.f32.no_decay" : tensor<1xf32> of [@"grad:s"]
// FLAT-LABEL: func.func @t.update()
// FLAT: mdl.load @"t:flat:param.f32" : tensor<12xf32>
// FLAT: %[[WD:.*]] = mdl.load @"t:hyper:weight_decay" : tensor<f64>
// FLAT: mdl.store %{{.*}}, @"t:flat:param.f32" : tensor<12xf32>
// FLAT: mdl.load @"t:flat:param.f32.no_decay" : tensor<1xf32>
// The group's weight decay is the constant 0, not the hyper.
// FLAT: %[[GWD:.*]] = mdl.constant dense<0.000000e+00> : tensor<f64>
// FLAT: mdl.mul %{{.*}}, %[[GWD]] : tensor<f64>, tensor<f64> -> tensor<f64>
// FLAT: mdl.store %{{.*}}, @"t:flat:param.f32.no_decay" : tensor<1xf32>
