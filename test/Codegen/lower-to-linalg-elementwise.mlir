// --mdl-lower-to-linalg, elementwise family: one all-parallel linalg.generic
// per op on a tensor.empty, operands broadcast through indexing maps, the
// body computing PyTorch's scalar semantics; ui8/ui16 become signless.
// RUN: modelc-opt %s --mdl-lower-to-linalg --split-input-file | FileCheck %s

// A missing leading axis is dropped from the operand's map.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>) outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK:   linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
func.func @add_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = mdl.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Size-1 axes that stretch are read at index 0.
// CHECK-DAG: #[[$COL0:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$ROW0:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @stretch
// CHECK: linalg.generic {indexing_maps = [#[[$COL0]], #[[$ROW0]], #{{.*}}]
// CHECK: arith.subf
func.func @stretch(%a: tensor<4x1xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %r = mdl.sub %a, %b : tensor<4x1xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A rank-0 operand has an empty map.
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @scalar_operand
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$SCALAR]], #{{.*}}]
// CHECK: arith.mulf
func.func @scalar_operand(%a: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
  %r = mdl.mul %a, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A splat constant operand becomes a constant in the body: nothing to read.
// CHECK-LABEL: func.func @splat_constant
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>)
// CHECK-NOT: arith.constant dense
// CHECK: linalg.generic {{.*}} ins(%[[A]] : tensor<4xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[C:.*]] = arith.constant 2.550000e+02 : f32
// CHECK:   arith.divf %[[X]], %[[C]] : f32
func.func @splat_constant(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = mdl.constant dense<2.550000e+02> : tensor<f32>
  %r = mdl.div %a, %c : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// bf16 and f16 compute in f32 and round once (PyTorch's opmath).
// CHECK-LABEL: func.func @half_precision
// CHECK: ^bb0(%[[X:.*]]: bf16, %[[Y:.*]]: bf16, %{{.*}}: bf16):
// CHECK:   %[[WX:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK:   %[[WY:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK:   %[[P:.*]] = arith.mulf %[[WX]], %[[WY]] : f32
// CHECK:   %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK:   linalg.yield %[[R]] : bf16
func.func @half_precision(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {
  %r = mdl.mul %a, %b : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

// The float unary ops, one generic each; relu propagates NaN (maximumf),
// sigmoid is 1 / (1 + exp(-x)) and silu x / (1 + exp(-x)), as ATen.
// CHECK-LABEL: func.func @float_unary
// CHECK: ^bb0(%[[X0:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.negf %[[X0]] : f32
// CHECK: ^bb0(%[[X1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: math.absf %[[X1]] : f32
// CHECK: ^bb0(%[[X2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: arith.maximumf %[[X2]], %[[ZERO]] : f32
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: math.rsqrt
// CHECK: math.tanh
// CHECK: ^bb0(%[[X8:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[X8]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[DEN:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT: arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK: ^bb0(%[[X9:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[DEN9:.*]] = arith.addf
// CHECK-NEXT: arith.divf %[[X9]], %[[DEN9]] : f32
func.func @float_unary(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = mdl.neg %x : tensor<4xf32>
  %1 = mdl.abs %x : tensor<4xf32>
  %2 = mdl.relu %x : tensor<4xf32>
  %3 = mdl.exp %x : tensor<4xf32>
  %4 = mdl.log %x : tensor<4xf32>
  %5 = mdl.sqrt %x : tensor<4xf32>
  %6 = mdl.rsqrt %x : tensor<4xf32>
  %7 = mdl.tanh %x : tensor<4xf32>
  %8 = mdl.sigmoid %x : tensor<4xf32>
  %9 = mdl.silu %x : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @integer_unary
// CHECK: ^bb0(%[[X0:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[Z0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: arith.subi %[[Z0]], %[[X0]] : i32
// CHECK: math.absi
// CHECK: ^bb0(%[[X2:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[Z2:.*]] = arith.constant 0 : i32
// CHECK-NEXT: arith.maxsi %[[X2]], %[[Z2]] : i32
// CHECK: ^bb0(%[[B:.*]]: i1, %{{.*}}: i1):
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: arith.xori %[[B]], %[[TRUE]] : i1
func.func @integer_unary(%x: tensor<4xi32>, %b: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi1>) {
  %0 = mdl.neg %x : tensor<4xi32>
  %1 = mdl.abs %x : tensor<4xi32>
  %2 = mdl.relu %x : tensor<4xi32>
  %3 = mdl.not %b : tensor<4xi1>
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi1>
}

// -----

// torch.remainder on floats: fmod, plus the divisor when the signs differ.
// CHECK-LABEL: func.func @float_binary
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[MOD:.*]] = arith.remf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[NZ:.*]] = arith.cmpf une, %[[MOD]], %[[ZERO]] : f32
// CHECK-NEXT: %[[MNEG:.*]] = arith.cmpf olt, %[[MOD]], %[[ZERO]] : f32
// CHECK-NEXT: %[[BNEG:.*]] = arith.cmpf olt, %[[B]], %[[ZERO]] : f32
// CHECK-NEXT: %[[DIFF:.*]] = arith.xori %[[MNEG]], %[[BNEG]] : i1
// CHECK-NEXT: %[[ADJ:.*]] = arith.andi %[[NZ]], %[[DIFF]] : i1
// CHECK-NEXT: %[[MOVED:.*]] = arith.addf %[[MOD]], %[[B]] : f32
// CHECK-NEXT: arith.select %[[ADJ]], %[[MOVED]], %[[MOD]] : f32
// CHECK: math.powf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.andi
// CHECK: arith.ori
func.func @float_binary(%a: tensor<4xf32>, %b: tensor<4xf32>, %p: tensor<4xi1>, %q: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>) {
  %0 = mdl.rem %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = mdl.pow %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = mdl.maximum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %3 = mdl.minimum %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %4 = mdl.and %p, %q : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %5 = mdl.or %p, %q : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Integer division floors and the remainder takes the divisor's sign
// (Python's // and %); a zero divisor gives 0 instead of trapping.
// CHECK-LABEL: func.func @integer_division
// CHECK: ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[ISZERO:.*]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i32
// CHECK-NEXT: %[[D:.*]] = arith.select %[[ISZERO]], %[[ONE]], %[[B]] : i32
// CHECK-NEXT: %[[Q:.*]] = arith.divsi %[[A]], %[[D]] : i32
// CHECK-NEXT: %[[R:.*]] = arith.remsi %[[A]], %[[D]] : i32
// CHECK-NEXT: %[[NZ:.*]] = arith.cmpi ne, %[[R]], %[[ZERO]] : i32
// CHECK-NEXT: %[[RNEG:.*]] = arith.cmpi slt, %[[R]], %[[ZERO]] : i32
// CHECK-NEXT: %[[DNEG:.*]] = arith.cmpi slt, %[[D]], %[[ZERO]] : i32
// CHECK-NEXT: %[[DIFF:.*]] = arith.xori %[[RNEG]], %[[DNEG]] : i1
// CHECK-NEXT: %[[ADJ:.*]] = arith.andi %[[NZ]], %[[DIFF]] : i1
// CHECK-NEXT: %[[FLOOR:.*]] = arith.subi %[[Q]], %[[ONE]] : i32
// CHECK-NEXT: %[[QF:.*]] = arith.select %[[ADJ]], %[[FLOOR]], %[[Q]] : i32
// CHECK-NEXT: %[[OUT:.*]] = arith.select %[[ISZERO]], %[[ZERO]], %[[QF]] : i32
// CHECK-NEXT: linalg.yield %[[OUT]] : i32
// CHECK: arith.remsi
// CHECK: %[[MOVED:.*]] = arith.addi %[[R2:.*]], %[[D2:.*]] : i32
// CHECK-NEXT: arith.select %{{.*}}, %[[MOVED]], %[[R2]] : i32
func.func @integer_division(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %0 = mdl.div %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %1 = mdl.rem %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// Integer pow: square-and-multiply over the exponent's 64 bits; negative
// exponents as ATen's powi (1 for base 1, +-1 for base -1, else 0).
// CHECK-LABEL: func.func @integer_power
// CHECK: ^bb0(%[[BASE:.*]]: i64, %[[EXP:.*]]: i64, %{{.*}}: i64):
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[LOOP:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %[[C64]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[SQ:.*]] = %[[BASE]], %[[E:.*]] = %[[EXP]]) -> (i64, i64, i64)
// CHECK:   %[[PROD:.*]] = arith.muli %[[ACC]], %[[SQ]] : i64
// CHECK:   arith.shrui %[[E]]
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[EXP]], %{{.*}} : i64
// CHECK: %[[OUT:.*]] = arith.select %[[NEG]], %{{.*}}, %[[LOOP]]#0 : i64
// CHECK: linalg.yield %[[OUT]] : i64
func.func @integer_power(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = mdl.pow %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Float comparisons are ordered except ne (true for NaN); signed integers
// compare signed, bools unsigned (false < true).
// CHECK-LABEL: func.func @compare
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf une
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ole
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oge
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi uge, %{{.*}}, %{{.*}} : i1
func.func @compare(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi32>, %p: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = mdl.compare eq, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %1 = mdl.compare ne, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %2 = mdl.compare lt, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %3 = mdl.compare le, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %4 = mdl.compare gt, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %5 = mdl.compare ge, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %6 = mdl.compare lt, %i, %i : tensor<4xi32>, tensor<4xi32> -> tensor<4xi1>
  %7 = mdl.compare ge, %p, %p : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// where broadcasts all three operands.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @where
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$SCALAR]], #[[$ID]]]
// CHECK: ^bb0(%[[C:.*]]: i1, %[[T:.*]]: f32, %[[F:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.select %[[C]], %[[T]], %[[F]] : f32
func.func @where(%c: tensor<4x8xi1>, %a: tensor<8xf32>, %b: tensor<f32>) -> tensor<4x8xf32> {
  %r = mdl.where %c, %a, %b : tensor<4x8xi1>, tensor<8xf32>, tensor<f32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Casts as Tensor.to: floats truncate toward zero, to bool is x != 0, bools
// zero-extend; a cast to the same type is no op.
// CHECK-LABEL: func.func @casts
// CHECK-SAME: (%[[F:[^:]*]]: tensor<4xf32>
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.cmpf une
// CHECK: arith.cmpi ne
// CHECK: arith.uitofp %{{.*}} : i1 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: arith.truncf %[[W]] : f32 to bf16
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: arith.trunci %{{.*}} : i64 to i32
// CHECK: return {{.*}}, %[[F]] :
func.func @casts(%f: tensor<4xf32>, %i: tensor<4xi32>, %h: tensor<4xf16>, %b: tensor<4xi1>, %l: tensor<4xi64>) -> (tensor<4xi32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xi64>, tensor<4xi32>, tensor<4xf32>) {
  %0 = mdl.cast %f : tensor<4xf32> -> tensor<4xi32>
  %1 = mdl.cast %i : tensor<4xi32> -> tensor<4xf32>
  %2 = mdl.cast %f : tensor<4xf32> -> tensor<4xi1>
  %3 = mdl.cast %i : tensor<4xi32> -> tensor<4xi1>
  %4 = mdl.cast %b : tensor<4xi1> -> tensor<4xf32>
  %5 = mdl.cast %f : tensor<4xf32> -> tensor<4xf16>
  %6 = mdl.cast %h : tensor<4xf16> -> tensor<4xbf16>
  %7 = mdl.cast %i : tensor<4xi32> -> tensor<4xi64>
  %8 = mdl.cast %l : tensor<4xi64> -> tensor<4xi32>
  %9 = mdl.cast %f : tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xi32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xi64>, tensor<4xi32>, tensor<4xf32>
}

// -----

// ui8/ui16 tensors are signless i8/i16 after the pass (in the memref too);
// the ops that care use the unsigned forms: uitofp, extui, ult, divui,
// maxui. Float to ui8 goes through i64, as PyTorch. relu is the identity.
// CHECK-LABEL: func.func @unsigned
// CHECK: %[[P:.*]] = mdlrt.buffer @pixels : memref<4xi8>
// CHECK: %[[T:.*]] = mdlrt.buffer @tokens : memref<4xi16>
// CHECK: %[[PT:.*]] = bufferization.to_tensor %[[P]] restrict : memref<4xi8>
// CHECK: %[[TT:.*]] = bufferization.to_tensor %[[T]] restrict : memref<4xi16>
// CHECK: %[[PF:.*]] = linalg.generic {{.*}} ins(%[[PT]] : tensor<4xi8>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK: arith.extui %{{.*}} : i16 to i32
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i8
// CHECK: %[[Q:.*]] = linalg.generic
// CHECK: arith.divui
// CHECK: %[[BACK:.*]] = linalg.generic {{.*}} ins(%[[PF]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xi8>)
// CHECK: %[[WIDE:.*]] = arith.fptosi %{{.*}} : f32 to i64
// CHECK-NEXT: arith.trunci %[[WIDE]] : i64 to i8
// CHECK: linalg.generic {{.*}} ins(%[[Q]], %[[BACK]] : tensor<4xi8>, tensor<4xi8>)
// CHECK: arith.maxui
mdl.buffer @pixels : tensor<4xui8> {entry = "T", key = "pixels", phase = "train", role = "input"}
mdl.buffer @tokens : tensor<4xui16> {entry = "T", key = "tokens", phase = "train", role = "input"}
mdl.buffer @out : tensor<4xui8> {entry = "T", key = "out", phase = "train", role = "output"}
func.func @unsigned() -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi1>) {
  %p = mdl.load @pixels : tensor<4xui8>
  %t = mdl.load @tokens : tensor<4xui16>
  %0 = mdl.cast %p : tensor<4xui8> -> tensor<4xf32>
  %1 = mdl.cast %t : tensor<4xui16> -> tensor<4xi32>
  %2 = mdl.compare lt, %p, %p : tensor<4xui8>, tensor<4xui8> -> tensor<4xi1>
  %3 = mdl.div %p, %p : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
  %4 = mdl.relu %3 : tensor<4xui8>
  %5 = mdl.cast %0 : tensor<4xf32> -> tensor<4xui8>
  %6 = mdl.maximum %4, %5 : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
  mdl.store %6, @out : tensor<4xui8>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xi32>, tensor<4xi1>
}

// -----

// A constant keeps its bits under the signless type (255 is -1 as i8).
// CHECK-LABEL: func.func @unsigned_constant
// CHECK: %[[C:.*]] = arith.constant dense<[1, -1]> : tensor<2xi8>
// CHECK: bufferization.materialize_in_destination %[[C]]
mdl.buffer @out : tensor<2xui8> {entry = "T", key = "out", phase = "train", role = "output"}
func.func @unsigned_constant() {
  %c = mdl.constant dense<[1, 255]> : tensor<2xui8>
  mdl.store %c, @out : tensor<2xui8>
  return
}
