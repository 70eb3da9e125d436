// Vector-Jacobian products of the elementwise ops, cast and constant.
//
// Each formula is PyTorch's (tools/autograd/derivatives.yaml and
// FunctionsManual.cpp), so gradients agree with torch.autograd, including at
// the points where the derivative is undefined (relu and abs at 0, ties of
// maximum/minimum, pow with a zero base). `g` is the result's adjoint;
// gradients of broadcast operands are summed back to the operand's shape.
#include "dialects/mdl/VJPBuilder.h"

using namespace mlir;
using namespace mlir::mdl;

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

// add: self: grad, other: grad.
SmallVector<Value> AddOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  return {b.sumToType(g, getLhs().getType()),
          b.sumToType(g, getRhs().getType())};
}

// sub: self: grad, other: -grad (negated after the reduction, where it is
// smaller).
SmallVector<Value> SubOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  return {b.sumToType(g, getLhs().getType()),
          b.neg(b.sumToType(g, getRhs().getType()))};
}

// mul: self: grad * other, other: grad * self.
SmallVector<Value> MulOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  return {b.sumToType(b.mul(g, getRhs()), getLhs().getType()),
          b.sumToType(b.mul(g, getLhs()), getRhs().getType())};
}

// div: self: grad / other; other: -grad * ((self / other) / other), where
// self / other is the result.
SmallVector<Value> DivOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value rhsGrad = b.mul(g, b.div(getResult(), getRhs()));
  return {b.sumToType(b.div(g, getRhs()), getLhs().getType()),
          b.neg(b.sumToType(rhsGrad, getRhs().getType()))};
}

// remainder: self: grad; other: -grad * floor(self / other). The floor
// division is (self - result) / other, exact up to rounding because
// result = self - floor(self / other) * other.
SmallVector<Value> RemOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value quotient = b.div(b.sub(getLhs(), getResult()), getRhs());
  return {b.sumToType(g, getLhs().getType()),
          b.neg(b.sumToType(b.mul(g, quotient), getRhs().getType()))};
}

// pow (pow_backward_self / pow_backward_exponent):
//   self:     where(exponent == 0, 0, grad * exponent * self^(exponent - 1))
//   exponent: grad * where(self == 0 & exponent >= 0, 0, result * log(self))
// A negative base gives log(self) = nan, so the exponent's gradient is nan
// there, as in PyTorch; a zero base with a non-negative exponent gives 0.
SmallVector<Value> PowOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value base = getLhs(), exponent = getRhs();
  Value zero = b.scalar(0.0, g);

  Value power = b.pow(base, b.sub(exponent, b.scalar(1.0, g)));
  Value baseGrad = b.where(b.compare(CmpPredicate::eq, exponent, zero), zero,
                           b.mul(g, b.mul(exponent, power)));

  Value zeroBase = b.compare(CmpPredicate::eq, base, zero);
  Value nonNegative = b.compare(CmpPredicate::ge, exponent, zero);
  Value logTerm = b.mul(getResult(), b.log(base));
  Value exponentGrad =
      b.mul(g, b.where(b.logicalAnd(zeroBase, nonNegative), zero, logTerm));
  return {b.sumToType(baseGrad, base.getType()),
          b.sumToType(exponentGrad, exponent.getType())};
}

// maximum and minimum: the chosen operand gets the gradient and a tie splits
// it evenly. With m = where(self == other, grad / 2, grad):
//   maximum self:  m.masked_fill(self < other, 0)
//   maximum other: m.masked_fill(self > other, 0)
// and minimum with the two masks swapped.
static SmallVector<Value> buildExtremumVJP(Operation *op, OpBuilder &builder,
                                           Value g, bool isMaximum) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  VJPBuilder b(builder, op->getLoc());
  Value zero = b.scalar(0.0, g);
  Value shared = b.where(b.compare(CmpPredicate::eq, lhs, rhs),
                         b.mul(g, b.scalar(0.5, g)), g);
  Value less = b.compare(CmpPredicate::lt, lhs, rhs);
  Value greater = b.compare(CmpPredicate::gt, lhs, rhs);
  Value lhsGrad = b.where(isMaximum ? less : greater, zero, shared);
  Value rhsGrad = b.where(isMaximum ? greater : less, zero, shared);
  return {b.sumToType(lhsGrad, lhs.getType()),
          b.sumToType(rhsGrad, rhs.getType())};
}

SmallVector<Value> MaximumOp::buildVJP(OpBuilder &builder,
                                       ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  return buildExtremumVJP(*this, builder, resultAdjoints[0], true);
}

SmallVector<Value> MinimumOp::buildVJP(OpBuilder &builder,
                                       ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  return buildExtremumVJP(*this, builder, resultAdjoints[0], false);
}

// where: condition: none; self: where(condition, grad, 0);
// other: where(condition, 0, grad).
SmallVector<Value> WhereOp::buildVJP(OpBuilder &builder,
                                     ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value zero = b.scalar(0.0, g);
  Value condition = getCondition();
  return {Value(),
          b.sumToType(b.where(condition, g, zero), getOnTrue().getType()),
          b.sumToType(b.where(condition, zero, g), getOnFalse().getType())};
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

// neg: -grad.
SmallVector<Value> NegOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  return {VJPBuilder(builder, getLoc()).neg(resultAdjoints[0])};
}

// abs: grad * sgn(self), with sgn(0) = 0.
SmallVector<Value> AbsOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value zero = b.scalar(0.0, g);
  Value positive =
      b.where(b.compare(CmpPredicate::gt, getInput(), zero), g, zero);
  return {b.where(b.compare(CmpPredicate::lt, getInput(), zero), b.neg(g),
                  positive)};
}

// relu: threshold_backward(grad, result, 0): grad where result > 0, else 0
// (so 0 at x = 0).
SmallVector<Value> ReluOp::buildVJP(OpBuilder &builder,
                                    ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value zero = b.scalar(0.0, g);
  return {b.where(b.compare(CmpPredicate::gt, getResult(), zero), g, zero)};
}

// exp: grad * result.
SmallVector<Value> ExpOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  return {VJPBuilder(builder, getLoc()).mul(resultAdjoints[0], getResult())};
}

// log: grad / self.
SmallVector<Value> LogOp::buildVJP(OpBuilder &builder,
                                   ArrayRef<Value> resultAdjoints) {
  return {VJPBuilder(builder, getLoc()).div(resultAdjoints[0], getInput())};
}

// sqrt: grad / (2 * result).
SmallVector<Value> SqrtOp::buildVJP(OpBuilder &builder,
                                    ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  return {b.div(g, b.mul(getResult(), b.scalar(2.0, g)))};
}

// rsqrt: -0.5 * grad * result^3.
SmallVector<Value> RsqrtOp::buildVJP(OpBuilder &builder,
                                     ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value r = getResult();
  Value cube = b.mul(b.mul(r, r), r);
  return {b.mul(b.mul(g, b.scalar(-0.5, g)), cube)};
}

// tanh: tanh_backward(grad, result) = grad * (1 - result^2).
SmallVector<Value> TanhOp::buildVJP(OpBuilder &builder,
                                    ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value r = getResult();
  return {b.mul(g, b.sub(b.scalar(1.0, g), b.mul(r, r)))};
}

// sigmoid: sigmoid_backward(grad, result) = grad * (1 - result) * result.
SmallVector<Value> SigmoidOp::buildVJP(OpBuilder &builder,
                                       ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value r = getResult();
  return {b.mul(b.mul(g, b.sub(b.scalar(1.0, g), r)), r)};
}

// silu: silu_backward(grad, self) = grad * s * (1 + self * (1 - s)) with
// s = sigmoid(self).
SmallVector<Value> SiluOp::buildVJP(OpBuilder &builder,
                                    ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value x = getInput();
  Value s = b.sigmoid(x);
  Value one = b.scalar(1.0, g);
  return {b.mul(b.mul(g, s), b.add(one, b.mul(x, b.sub(one, s))))};
}

// gelu: gelu_backward(grad, self, approximate), one op for both forms.
SmallVector<Value> GeluOp::buildVJP(OpBuilder &builder,
                                    ArrayRef<Value> resultAdjoints) {
  return {builder.create<GeluGradOp>(getLoc(), getType(), getInput(),
                                     resultAdjoints[0], getApproximateAttr())};
}

// cast: between float types the gradient is cast back (Tensor.to's
// backward); to or from an integer or bool type nothing flows.
SmallVector<Value> CastOp::buildVJP(OpBuilder &builder,
                                    ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()) ||
      !isDifferentiableType(getInput().getType()))
    return noGradients(*this);
  return {VJPBuilder(builder, getLoc())
              .cast(resultAdjoints[0], getInput().getType().getElementType())};
}

// constant: no operands.
SmallVector<Value> ConstantOp::buildVJP(OpBuilder &, ArrayRef<Value>) {
  return {};
}
