// --mdl-expand-optimizer: rmsprop, adagrad and adadelta, each step as
// torch.optim's single-tensor implementation writes it (the same ops in the
// same order; test/E2E/train-vs-numpy-mlp-optimizers.test checks the
// numbers). The input is Inputs/expand-optimizer-module.mlir with its
// SETTINGS filled in.
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {centered = true, kind = "rmsprop", momentum = 9.000000e-01 : f64}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=RMSPROP
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "rmsprop", momentum = 0.0 : f64}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=PLAIN
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adagrad"}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=ADAGRAD
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adadelta"}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer=flat-views=false | FileCheck %s --check-prefix=ADADELTA

// RMSprop keeps square_avg, then momentum (momentum > 0), then grad_avg
// (centered), per parameter, under torch.optim's names.
// RMSPROP: mdl.buffer @"t:state:square_avg.w" : tensor<4x3xf32> {entry = "t", key = "square_avg.w", phase = "train", role = "state"}
// RMSPROP-NEXT: mdl.buffer @"t:state:momentum.w"
// RMSPROP-NEXT: mdl.buffer @"t:state:grad_avg.w"
// RMSPROP-NEXT: mdl.buffer @"t:state:square_avg.s"
// RMSPROP-LABEL: func.func @t.update()
// RMSPROP: %[[P:.*]] = mdl.load @w : tensor<4x3xf32>
// RMSPROP: %[[G:.*]] = mdl.add %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// RMSPROP: %[[OLDSQ:.*]] = mdl.load @"t:state:square_avg.w"
// RMSPROP: %[[ALPHA:.*]] = mdl.load @"t:hyper:alpha" : tensor<f64>
// square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
// RMSPROP: %[[KEPT:.*]] = mdl.mul %[[OLDSQ]], %{{.*}}
// RMSPROP: %[[SCALED:.*]] = mdl.mul %{{.*}}, %[[G]] : tensor<f32>, tensor<4x3xf32>
// RMSPROP: %[[GG:.*]] = mdl.mul %[[SCALED]], %[[G]]
// RMSPROP: %[[SQ:.*]] = mdl.add %[[KEPT]], %[[GG]]
// RMSPROP: mdl.store %[[SQ]], @"t:state:square_avg.w"
// grad_avg.lerp_(grad, 1 - alpha); avg = sqrt(square_avg - grad_avg^2) + eps
// RMSPROP: %[[OLDMEAN:.*]] = mdl.load @"t:state:grad_avg.w"
// RMSPROP: %[[MEAN:.*]] = mdl.add %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>
// RMSPROP: mdl.store %[[MEAN]], @"t:state:grad_avg.w"
// RMSPROP: %[[MM:.*]] = mdl.mul %[[MEAN]], %[[MEAN]]
// RMSPROP: %[[VAR:.*]] = mdl.sub %[[SQ]], %[[MM]]
// RMSPROP: %[[ROOT:.*]] = mdl.sqrt %[[VAR]]
// RMSPROP: %[[AVG:.*]] = mdl.add %[[ROOT]], %{{.*}} : tensor<4x3xf32>, tensor<f32>
// buf.mul_(momentum).addcdiv_(grad, avg); param.add_(buf, alpha=-lr)
// RMSPROP: %[[OLDBUF:.*]] = mdl.load @"t:state:momentum.w"
// RMSPROP: %[[BK:.*]] = mdl.mul %[[OLDBUF]], %{{.*}}
// RMSPROP-NEXT: %[[QUOT:.*]] = mdl.div %[[G]], %[[AVG]]
// RMSPROP: %[[BUF:.*]] = mdl.add %[[BK]], %[[QUOT]]
// RMSPROP: mdl.store %[[BUF]], @"t:state:momentum.w"
// RMSPROP: %[[STEP:.*]] = mdl.mul %{{.*}}, %[[BUF]]
// RMSPROP: %[[NEWP:.*]] = mdl.sub %[[P]], %[[STEP]]
// RMSPROP: mdl.store %[[NEWP]], @w

// Without momentum or centered: square_avg only, and addcdiv.
// PLAIN: mdl.buffer @"t:state:square_avg.w"
// PLAIN-NEXT: mdl.buffer @"t:state:square_avg.s"
// PLAIN-NEXT: func.func @t.update()
// PLAIN: %[[AVG:.*]] = mdl.add %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<f32>
// PLAIN: %[[NUM:.*]] = mdl.mul %{{.*}}, %[[G:.*]] : tensor<f32>, tensor<4x3xf32>
// PLAIN-NEXT: %[[Q:.*]] = mdl.div %[[NUM]], %[[AVG]]
// PLAIN-NEXT: %[[NEWP:.*]] = mdl.sub %{{.*}}, %[[Q]]
// PLAIN-NEXT: mdl.store %[[NEWP]], @w

// Adagrad: clr = lr / (1 + (step - 1) * lr_decay) in f64; the sum starts
// at initial_accumulator_value on the optimizer's first step.
// ADAGRAD: mdl.buffer @"t:state:sum.w" : tensor<4x3xf32> {entry = "t", key = "sum.w", phase = "train", role = "state"}
// ADAGRAD-LABEL: func.func @t.update()
// ADAGRAD: %[[LR:.*]] = mdl.load @"t:hyper:lr" : tensor<f64>
// ADAGRAD: %[[T:.*]] = mdl.load @"t:hyper:optimizer_step" : tensor<f64>
// ADAGRAD: %[[ONE:.*]] = mdl.constant dense<1.000000e+00> : tensor<f64>
// ADAGRAD: %[[DECAY:.*]] = mdl.load @"t:hyper:lr_decay" : tensor<f64>
// ADAGRAD: %[[TM1:.*]] = mdl.sub %[[T]], %[[ONE]]
// ADAGRAD: %[[TD:.*]] = mdl.mul %[[TM1]], %[[DECAY]]
// ADAGRAD: %[[DEN:.*]] = mdl.add %[[ONE]], %[[TD]]
// ADAGRAD: %[[CLR:.*]] = mdl.div %[[LR]], %[[DEN]] : tensor<f64>, tensor<f64> -> tensor<f64>
// ADAGRAD: %[[OLD:.*]] = mdl.load @"t:state:sum.w"
// ADAGRAD: %[[FIRST:.*]] = mdl.compare eq, %[[T]], %[[ONE]]
// ADAGRAD: %[[INIT:.*]] = mdl.load @"t:hyper:initial_accumulator_value"
// ADAGRAD: %[[INIT32:.*]] = mdl.cast %[[INIT]] : tensor<f64> -> tensor<f32>
// ADAGRAD: %[[START:.*]] = mdl.where %[[FIRST]], %[[INIT32]], %[[OLD]] : tensor<i1>, tensor<f32>, tensor<4x3xf32> -> tensor<4x3xf32>
// ADAGRAD: %[[SUM:.*]] = mdl.add %[[START]], %{{.*}}
// ADAGRAD-NEXT: mdl.store %[[SUM]], @"t:state:sum.w"
// ADAGRAD: %[[ROOT:.*]] = mdl.sqrt %[[SUM]]
// ADAGRAD: %[[STD:.*]] = mdl.add %[[ROOT]], %{{.*}}
// ADAGRAD: %[[CLR32:.*]] = mdl.cast %[[CLR]] : tensor<f64> -> tensor<f32>
// ADAGRAD: %[[NUM:.*]] = mdl.mul %[[CLR32]], %{{.*}}
// ADAGRAD: %[[Q:.*]] = mdl.div %[[NUM]], %[[STD]]

// Adadelta: square_avg and acc_delta; delta = sqrt(acc + eps) /
// sqrt(square + eps) * grad; p - lr * delta.
// ADADELTA: mdl.buffer @"t:state:square_avg.w"
// ADADELTA-NEXT: mdl.buffer @"t:state:acc_delta.w"
// ADADELTA-LABEL: func.func @t.update()
// ADADELTA: %[[RHO:.*]] = mdl.load @"t:hyper:rho" : tensor<f64>
// ADADELTA: %[[OLDSQ:.*]] = mdl.load @"t:state:square_avg.w"
// ADADELTA: %[[OLDACC:.*]] = mdl.load @"t:state:acc_delta.w"
// ADADELTA: %[[SQ:.*]] = mdl.add %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>
// ADADELTA: %[[SQE:.*]] = mdl.add %[[SQ]], %[[EPS:.*]] : tensor<4x3xf32>, tensor<f32>
// ADADELTA: %[[STD:.*]] = mdl.sqrt %[[SQE]]
// ADADELTA: %[[ACCE:.*]] = mdl.add %[[OLDACC]], %[[EPS]]
// ADADELTA: %[[ROOT:.*]] = mdl.sqrt %[[ACCE]]
// ADADELTA: %[[RATIO:.*]] = mdl.div %[[ROOT]], %[[STD]]
// ADADELTA: %[[DELTA:.*]] = mdl.mul %[[RATIO]], %{{.*}}
// ADADELTA: mdl.store %[[SQ]], @"t:state:square_avg.w"
// ADADELTA: mdl.store %{{.*}}, @"t:state:acc_delta.w"
// ADADELTA: %[[STEP:.*]] = mdl.mul %{{.*}}, %[[DELTA]]
// ADADELTA: %[[NEWP:.*]] = mdl.sub %{{.*}}, %[[STEP]]
// ADADELTA: mdl.store %[[NEWP]], @w
