// --mdl-inline-calls inlines every block call into the entries (blocks call
// blocks) and erases the block functions.
// RUN: modelc-opt %s --split-input-file --mdl-inline-calls --verify-diagnostics | FileCheck %s

// A block that calls another block, called from a train entry: the nested
// call is inlined too, the caller's param_refs replace the parameter
// arguments, and both functions are gone.

// CHECK-NOT: func.func
// CHECK-LABEL: mdl.train @t
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<2x4xf32>):
// CHECK-NEXT: %[[W:.*]] = mdl.param_ref @w
// CHECK-NEXT: %[[WT:.*]] = mdl.transpose %[[W]]
// CHECK-NEXT: %[[Y:.*]] = mdl.matmul %[[X]], %[[WT]]
// CHECK-NEXT: %[[R:.*]] = mdl.relu %[[Y]]
// CHECK-NEXT: %[[L:.*]] = mdl.mean %[[R]]
// CHECK-NEXT: mdl.yield %[[L]]
// CHECK-NOT: func.func
mdl.param @w : tensor<4x4xf32> = zeros()
mdl.data @d {
  mdl.field "x" : tensor<4xf32> = npy "x.npy"
}
func.func private @linear(%x: tensor<2x4xf32>, %w: tensor<4x4xf32> {mdl.param = "weight"}) -> tensor<2x4xf32> {
  %wt = mdl.transpose %w perm = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %y = mdl.matmul %x, %wt : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
func.func private @mlp(%x: tensor<2x4xf32>, %w: tensor<4x4xf32> {mdl.param = "fc.weight"}) -> tensor<2x4xf32> {
  %y = call @linear(%x, %w) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %r = mdl.relu %y : tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2x4xf32>):
  %w = mdl.param_ref @w : tensor<4x4xf32>
  %y = func.call @mlp(%x, %w) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %l = mdl.mean %y axes = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  mdl.yield %l : tensor<f32>
}

// -----

// A block used twice, by two entries and twice within one: every call site
// gets its own copy.

// CHECK-NOT: func.func
// CHECK-LABEL: mdl.train @t
// CHECK: %[[A:.*]] = mdl.exp %{{.*}} : tensor<2xf32>
// CHECK-NEXT: %[[B:.*]] = mdl.exp %[[A]] : tensor<2xf32>
// CHECK-NEXT: %[[S:.*]] = mdl.sum %[[B]]
// CHECK-NEXT: mdl.yield %[[S]]
// CHECK-LABEL: mdl.infer @i
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<2xf32>):
// CHECK-NEXT: %[[E:.*]] = mdl.exp %[[X]] : tensor<2xf32>
// CHECK-NEXT: mdl.yield %[[E]]
// CHECK-NOT: func.func
mdl.data @d {
  mdl.field "x" : tensor<f32> = npy "x.npy"
}
func.func private @act(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = mdl.exp %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
mdl.train @t data @d outputs ["loss"] settings {batch = 2 : i64} {
^bb0(%x: tensor<2xf32>):
  %a = func.call @act(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %b = func.call @act(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %s = mdl.sum %b axes = [0] : tensor<2xf32> -> tensor<f32>
  mdl.yield %s : tensor<f32>
}
mdl.infer @i inputs ["x"] outputs ["y"] {
^bb0(%x: tensor<2xf32>):
  %y = func.call @act(%x) : (tensor<2xf32>) -> tensor<2xf32>
  mdl.yield %y : tensor<2xf32>
}

// -----

// A deep chain of blocks (each calls the next) flattens to one body.

// CHECK-NOT: func.func
// CHECK-LABEL: mdl.infer @i
// CHECK-COUNT-5: mdl.neg
// CHECK-NEXT: mdl.yield
// CHECK-NOT: func.func
func.func private @f0(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = mdl.neg %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func private @f1(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = call @f0(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %z = mdl.neg %y : tensor<2xf32>
  return %z : tensor<2xf32>
}
func.func private @f2(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = call @f1(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %z = mdl.neg %y : tensor<2xf32>
  return %z : tensor<2xf32>
}
func.func private @f3(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = call @f2(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %z = mdl.neg %y : tensor<2xf32>
  return %z : tensor<2xf32>
}
func.func private @f4(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = call @f3(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %z = mdl.neg %y : tensor<2xf32>
  return %z : tensor<2xf32>
}
mdl.infer @i inputs ["x"] outputs ["y"] {
^bb0(%x: tensor<2xf32>):
  %y = func.call @f4(%x) : (tensor<2xf32>) -> tensor<2xf32>
  mdl.yield %y : tensor<2xf32>
}

// -----

// A public function keeps existing, with its calls inlined; the private
// block it called is erased.

// CHECK-NOT: @half
// CHECK-LABEL: func.func @caller(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2xf32>
// CHECK-NEXT: %[[Y:.*]] = mdl.add %[[X]], %[[X]]
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: @half
func.func private @half(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = mdl.add %x, %x : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func @caller(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = call @half(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func private @external(%x: tensor<2xf32>) -> tensor<2xf32>
mdl.infer @i inputs ["x"] outputs ["y"] {
^bb0(%x: tensor<2xf32>):
  // expected-error @below {{cannot inline call to @external: it has no body}}
  %y = func.call @external(%x) : (tensor<2xf32>) -> tensor<2xf32>
  mdl.yield %y : tensor<2xf32>
}

// -----

// Sema forbids recursion; the pass reports it rather than loop.
func.func private @ping(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = call @pong(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func private @pong(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @below {{cannot inline recursive call to @ping}}
  %y = call @ping(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
