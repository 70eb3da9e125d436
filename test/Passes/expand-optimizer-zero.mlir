// --mdl-expand-optimizer with `parallel { zero = 1 }` (ZeRO-1,
// docs/runtime/zero.md): no state buffers in the arena; `update` prepares
// the gradients (norm, clipping, f16's unscaling) and stores them back, and
// names the parameters; per element type, a window (a chunk of a
// parameter, of its gradient and of each state kind, role "window") and
// `update_chunk`, the optimizer's elementwise step on it. The input is
// Inputs/expand-optimizer-module.mlir with its SETTINGS filled in.

// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adamw"}, parallel = {zero = 1 : i64}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer | FileCheck %s --check-prefix=ADAMW
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd", momentum = 0.9 : f64, nesterov = false}, parallel = {zero = 1 : i64}, precision = "f16", schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer | FileCheck %s --check-prefix=F16
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "sgd", momentum = 0.0 : f64, nesterov = false}, parallel = {zero = 1 : i64}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer | FileCheck %s --check-prefix=PLAIN
// zero = 0 is the usual update.
// RUN: sed 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adamw"}, parallel = {zero = 0 : i64}, schedule = {kind = "constant"}}/' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer | FileCheck %s --check-prefix=OFF
// The chunk is a power of two at least 1/64 of the parameters' elements,
// between 1024 and 2^20: 2^24 + 1 elements make chunks of 2^19, 2^31 + 1
// chunks of 2^20.
// RUN: sed -e 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adamw"}, parallel = {zero = 1 : i64}, schedule = {kind = "constant"}}/' -e 's/4x3xf32/4x4194304xf32/g' -e 's/2x3xf32/2x4194304xf32/g' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer | FileCheck %s --check-prefix=MID
// RUN: sed -e 's/SETTINGS/{batch = 2 : i64, optimizer = {kind = "adamw"}, parallel = {zero = 1 : i64}, schedule = {kind = "constant"}}/' -e 's/4x3xf32/4x536870912xf32/g' -e 's/2x3xf32/2x536870912xf32/g' %S/Inputs/expand-optimizer-module.mlir \
// RUN:   | modelc-opt --mdl-expand-optimizer | FileCheck %s --check-prefix=BIG

// ADAMW-NOT: t:state
// ADAMW-NOT: t:flat:m
// ADAMW: mdl.buffer @"t:zero:param.f32" : tensor<1024xf32> {entry = "t", key = "param", phase = "train", role = "window"}
// ADAMW-NEXT: mdl.buffer @"t:zero:grad.f32" : tensor<1024xf32> {entry = "t", key = "grad", phase = "train", role = "window"}
// ADAMW-NEXT: mdl.buffer @"t:zero:m.f32" : tensor<1024xf32> {entry = "t", key = "m", phase = "train", role = "window"}
// ADAMW-NEXT: mdl.buffer @"t:zero:v.f32" : tensor<1024xf32> {entry = "t", key = "v", phase = "train", role = "window"}
// ADAMW-NEXT: mdl.flat_view @"t:flat:param.f32" : tensor<17xf32> of [@w, @s]
// ADAMW-NEXT: mdl.flat_view @"t:flat:grad.f32" : tensor<17xf32> of [@"grad:w", @"grad:s"]
// ADAMW-LABEL: func.func @t.update()
// ADAMW-SAME: mdl.zero_params = ["w", "s"]
// ADAMW: mdl.store %{{.*}}, @"t:out:grad_norm"
// The clipped gradients go back for the chunk steps, through the flat
// view of the gradients (no state views: ZeRO-1 keeps no state in the
// arena); no parameter, state or zeroed gradient is stored here.
// ADAMW: %[[CG:.*]] = mdl.mul %{{.*}}, %{{.*}} : tensor<17xf32>, tensor<f32> -> tensor<17xf32>
// ADAMW-NEXT: mdl.store %[[CG]], @"t:flat:grad.f32" : tensor<17xf32>
// ADAMW-NEXT: mdl.cast
// ADAMW-NEXT: mdl.store %{{.*}}, @"t:out:lr" : tensor<f32>
// ADAMW-NEXT: return
// ADAMW-LABEL: func.func @t.update_chunk.f32()
// ADAMW-SAME: attributes {mdl.entry = "t", mdl.function = "update_chunk", mdl.window = ["t:zero:param.f32", "t:zero:grad.f32", "t:zero:m.f32", "t:zero:v.f32"]}
// ADAMW: %[[LR:.*]] = mdl.load @"t:hyper:lr" : tensor<f64>
// ADAMW: %[[G:.*]] = mdl.load @"t:zero:grad.f32" : tensor<1024xf32>
// ADAMW: %[[P:.*]] = mdl.load @"t:zero:param.f32" : tensor<1024xf32>
// ADAMW: mdl.load @"t:zero:m.f32" : tensor<1024xf32>
// ADAMW: mdl.load @"t:zero:v.f32" : tensor<1024xf32>
// ADAMW: mdl.store %{{.*}}, @"t:zero:m.f32" : tensor<1024xf32>
// ADAMW: mdl.store %{{.*}}, @"t:zero:v.f32" : tensor<1024xf32>
// ADAMW: mdl.store %{{.*}}, @"t:zero:param.f32" : tensor<1024xf32>
// ADAMW-NEXT: return
// ADAMW-NOT: grad:

// f16: the chunk step skips on `update`'s found_inf: every store keeps
// the old value when it is set.
// F16-LABEL: func.func @t.update()
// F16: mdl.store %{{.*}}, @"t:out:found_inf"
// F16-LABEL: func.func @t.update_chunk.f32()
// F16-SAME: mdl.window = ["t:zero:param.f32", "t:zero:grad.f32", "t:zero:momentum.f32"]
// F16: %[[FOUND:.*]] = mdl.load @"t:out:found_inf" : tensor<f32>
// F16: %[[SKIP:.*]] = mdl.compare ne, %[[FOUND]], %{{.*}} : tensor<f32>, tensor<f32> -> tensor<i1>
// F16: %[[OLDB:.*]] = mdl.load @"t:zero:momentum.f32"
// F16: %[[B:.*]] = mdl.where %[[SKIP]], %[[OLDB]], %{{.*}}
// F16-NEXT: mdl.store %[[B]], @"t:zero:momentum.f32"
// F16: %[[NEWP:.*]] = mdl.where %[[SKIP]], %{{.*}}, %{{.*}}
// F16-NEXT: mdl.store %[[NEWP]], @"t:zero:param.f32"

// Plain SGD keeps no state: the window is a parameter and a gradient.
// PLAIN: mdl.buffer @"t:zero:grad.f32" : tensor<1024xf32>
// PLAIN-NEXT: mdl.flat_view @"t:flat:param.f32"
// PLAIN-NEXT: mdl.flat_view @"t:flat:grad.f32"
// PLAIN-NEXT: func.func @t.update()
// PLAIN-LABEL: func.func @t.update_chunk.f32()
// PLAIN-SAME: mdl.window = ["t:zero:param.f32", "t:zero:grad.f32"]

// OFF-NOT: t:zero
// OFF: mdl.buffer @"t:state:m.w"
// OFF-NOT: t:zero
// OFF-NOT: update_chunk

// MID: mdl.buffer @"t:zero:param.f32" : tensor<524288xf32>
// BIG: mdl.buffer @"t:zero:param.f32" : tensor<1048576xf32>
