// --mdl-fuse-elementwise: an elementwise generic used once, element for
// element, as an input of another generic (elementwise or a reduction) is
// merged into it; broadcasts, initial values and producers with several
// users stay apart, so no element is computed twice and each element's
// arithmetic is unchanged.
// RUN: modelc-opt %s --mdl-fuse-elementwise --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// A chain of three (scale, add, exp): one generic with all three ops, in
// order, and every input of the chain.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>)
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[Y]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: math.exp
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x2 = math.exp %in : f32
    linalg.yield %x2 : f32
  } -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// Read through a transpose (a permutation): still one element per element,
// so fused.
// CHECK-LABEL: func.func @transposed_read
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
func.func @transposed_read(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %et = tensor.empty() : tensor<8x4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %b : tensor<8x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Not fused: a broadcast read (each producer element used by a whole row)
// would compute the producer eight times over.
// CHECK-LABEL: func.func @broadcast_stays
// CHECK-COUNT-2: linalg.generic
func.func @broadcast_stays(%v: tensor<4xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e1 = tensor.empty() : tensor<4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%v : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x2 = math.exp %in : f32
    linalg.yield %x2 : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %x : tensor<4xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.mulf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A reduction that reads the producer element for element: fused, the
// producer's op first in the body, the reduction's loops unchanged.
// CHECK-LABEL: func.func @into_reduction
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
func.func @into_reduction(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x2 = math.exp %in : f32
    linalg.yield %x2 : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Not fused: the producer is the reduction's initial value (its output),
// not an input.
// CHECK-LABEL: func.func @init_stays
// CHECK-COUNT-2: linalg.generic
func.func @init_stays(%v: tensor<4xf32>, %x: tensor<4x8xf32>) -> tensor<4xf32> {
  %e1 = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%v : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Not fused: two users would each recompute the producer.
// CHECK-LABEL: func.func @two_users_stay
// CHECK-COUNT-3: linalg.generic
func.func @two_users_stay(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x2 = math.exp %in : f32
    linalg.yield %x2 : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %b, %c : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The fill that initialises a reduction's output, used by it alone, goes
// into it: the init becomes the fill's tensor.empty and the first iteration of the
// reduction loops starts from the fill's value (no pass over the output
// before the reduction). A fill that something else reads stays.
// CHECK-LABEL: func.func @fill_into_reduction
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[START:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi eq, %[[I]], %[[C0]] : index
// CHECK-NEXT: %[[ACC:.*]] = arith.select %[[FIRST]], %[[START]], %[[OUT]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]]
// CHECK-LABEL: func.func @shared_fill
// CHECK: linalg.fill
func.func @fill_into_reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %start = arith.constant 1.5 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%start : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @shared_fill(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %init : tensor<4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A GEMM's [m, n] result rounded to bf16, then read as [b, t, n] by its
// bias add: the rounding computes [b, t, n] itself (reading the result
// through an expand_shape) and fuses into the bias add. An expand_shape
// with a second user stays where it is, and so do both generics.
// CHECK-LABEL: func.func @reshape_between
// CHECK-SAME: (%[[Y:.*]]: tensor<8x6xf32>, %[[B:.*]]: tensor<6xbf16>)
// CHECK: %[[Y3:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xf32> into tensor<2x4x6xf32>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[Y3]], %[[B]] : tensor<2x4x6xf32>, tensor<6xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[BIAS:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[ROUND:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[ROUND]] : bf16 to f32
// CHECK-NEXT: %[[WB:.*]] = arith.extf %[[BIAS]] : bf16 to f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[WIDE]], %[[WB]] : f32
// CHECK-NEXT: %[[OUT:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[OUT]] : bf16
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @reshape_shared
// CHECK: linalg.generic
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
func.func @reshape_between(%y: tensor<8x6xf32>, %b: tensor<6xbf16>) -> tensor<2x4x6xbf16> {
  %e = tensor.empty() : tensor<8x6xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x6xf32>) outs(%e : tensor<8x6xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x6xbf16>
  %r3 = tensor.expand_shape %r [[0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xbf16> into tensor<2x4x6xbf16>
  %e3 = tensor.empty() : tensor<2x4x6xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r3, %b : tensor<2x4x6xbf16>, tensor<6xbf16>) outs(%e3 : tensor<2x4x6xbf16>) {
  ^bb0(%in: bf16, %bias: bf16, %out: bf16):
    %w = arith.extf %in : bf16 to f32
    %wb = arith.extf %bias : bf16 to f32
    %a = arith.addf %w, %wb : f32
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4x6xbf16>
  return %s : tensor<2x4x6xbf16>
}
func.func @reshape_shared(%y: tensor<8x6xf32>) -> (tensor<2x4x6xf32>, tensor<2x4x6xf32>) {
  %e = tensor.empty() : tensor<8x6xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<8x6xf32>
  %r3 = tensor.expand_shape %r [[0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xf32> into tensor<2x4x6xf32>
  %e3 = tensor.empty() : tensor<2x4x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r3 : tensor<2x4x6xf32>) outs(%e3 : tensor<2x4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %in : f32
    linalg.yield %a : f32
  } -> tensor<2x4x6xf32>
  return %s, %r3 : tensor<2x4x6xf32>, tensor<2x4x6xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A producer that only converts (a bias rounded to bf16) fuses into a
// consumer that broadcasts it: the rounding is repeated per row, with the
// same result each time. Anything more than one conversion stays apart
// (@broadcast_stays above).
// CHECK-LABEL: func.func @conversion_broadcast
// CHECK-SAME: (%[[B:.*]]: tensor<8xf32>, %[[X:.*]]: tensor<4x8xbf16>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[X]] : tensor<8xf32>, tensor<4x8xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[XIN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[ROUND:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT: arith.addf %[[ROUND]], %[[XIN]] : bf16
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @conversion_broadcast(%b: tensor<8xf32>, %x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %e1 = tensor.empty() : tensor<8xbf16>
  %e = tensor.empty() : tensor<4x8xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e1 : tensor<8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8xbf16>
  %s = linalg.generic {indexing_maps = [#col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %x : tensor<8xbf16>, tensor<4x8xbf16>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%in: bf16, %in2: bf16, %out: bf16):
    %a = arith.addf %in, %in2 : bf16
    linalg.yield %a : bf16
  } -> tensor<4x8xbf16>
  return %s : tensor<4x8xbf16>
}

// -----

// A reduction computed again from the same operands (layer norm's backward
// recomputing the forward's row sums) is the first one: one sum, read by
// both users, and the second's fill and empty tensor go with it. A
// repeated single-result elementwise generic is not shared (two users
// would stop its fusion).
// CHECK-LABEL: func.func @shared_sum
// CHECK-NOT: linalg.fill
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x8xf32>)
// CHECK-NOT: "reduction"
// CHECK: math.exp
// CHECK-NOT: "reduction"
// CHECK: math.exp
// CHECK-NOT: "reduction"
// CHECK: return %[[SUM]], %[[SUM]], %{{.*}}, %{{.*}} :
func.func @shared_sum(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %s1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%i1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %ex = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%ex : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %zero2 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4xf32>
  %i2 = linalg.fill ins(%zero2 : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %s2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%i2 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %ex2 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%ex2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %s1, %s2, %a, %b : tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
