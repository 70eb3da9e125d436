// Scalar arithmetic and the learning-rate schedules of --mdl-expand-optimizer
// (docs/passes/expand-optimizer.md gives the formulas and their guards).
#include "passes/OptimizerUtils.h"

#include "dialects/mdl/SumOrder.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace modelc {

Value UpdateMath::constant(double value, Type elementType) {
  if (!elementType)
    elementType = builder.getF64Type();
  return splat(RankedTensorType::get({}, elementType), value);
}

Value UpdateMath::splat(RankedTensorType type, double value) {
  return builder.create<mdl::ConstantOp>(loc, type, value);
}

Value UpdateMath::add(Value lhs, Value rhs) {
  return builder.create<mdl::AddOp>(loc, lhs, rhs);
}

Value UpdateMath::sub(Value lhs, Value rhs) {
  return builder.create<mdl::SubOp>(loc, lhs, rhs);
}

Value UpdateMath::mul(Value lhs, Value rhs) {
  return builder.create<mdl::MulOp>(loc, lhs, rhs);
}

Value UpdateMath::div(Value lhs, Value rhs) {
  return builder.create<mdl::DivOp>(loc, lhs, rhs);
}

Value UpdateMath::pow(Value base, Value exponent) {
  return builder.create<mdl::PowOp>(loc, base, exponent);
}

Value UpdateMath::min(Value lhs, Value rhs) {
  return builder.create<mdl::MinimumOp>(loc, lhs, rhs);
}

Value UpdateMath::max(Value lhs, Value rhs) {
  return builder.create<mdl::MaximumOp>(loc, lhs, rhs);
}

Value UpdateMath::stackedSum(ArrayRef<Value> terms) {
  Type element =
      llvm::cast<RankedTensorType>(terms.front().getType()).getElementType();
  // In order from 0, each term added to the sum so far, as the lowering's
  // reduction combines `element + accumulator`.
  auto inOrder = [&](ArrayRef<Value> run) {
    Value sum = constant(0.0, element);
    for (Value term : run)
      sum = add(term, sum);
    return sum;
  };
  size_t block = size_t(mdl::kSumBlock);
  if (!element.isF32() || terms.size() <= block)
    return inOrder(terms);
  SmallVector<Value> level(terms.begin(), terms.end()), tails;
  while (level.size() > block) {
    size_t blocks = level.size() / block;
    ArrayRef<Value> all(level);
    if (blocks * block != level.size())
      tails.push_back(inOrder(all.drop_front(blocks * block)));
    SmallVector<Value> sums;
    for (size_t b = 0; b < blocks; ++b)
      sums.push_back(inOrder(all.slice(b * block, block)));
    level = std::move(sums);
  }
  Value sum = inOrder(level);
  for (Value tail : tails)
    sum = add(sum, tail);
  return sum;
}

Value UpdateMath::sqrt(Value value) {
  return builder.create<mdl::SqrtOp>(loc, value);
}

Value UpdateMath::compare(mdl::CmpPredicate predicate, Value lhs, Value rhs) {
  return builder.create<mdl::CompareOp>(loc, predicate, lhs, rhs);
}

Value UpdateMath::select(Value condition, Value onTrue, Value onFalse) {
  return builder.create<mdl::WhereOp>(loc, condition, onTrue, onFalse);
}

Value UpdateMath::cast(Value value, Type elementType) {
  if (llvm::cast<RankedTensorType>(value.getType()).getElementType() ==
      elementType)
    return value;
  return builder.create<mdl::CastOp>(loc, value, elementType);
}

Value UpdateMath::floorNonNegative(Value value) {
  // The conversion to an integer truncates toward zero (`Tensor.to`), which
  // is floor for x >= 0. Step counts are far below 2^53, so the f64 values
  // and the i64 round trip are exact.
  return cast(cast(value, builder.getI64Type()), builder.getF64Type());
}

Value UpdateMath::cos(Value value) {
  // The dialect has no cosine. cos(x) = -sin(x - pi/2), and for
  // |y| <= pi/2 the Taylor series of sin through y^23/23! is exact to
  // (pi/2)^25/25! < 1e-20, far below f64 rounding. Horner form:
  // sin(y) = y (1 - y^2/(2*3) (1 - y^2/(4*5) (... (1 - y^2/(22*23))))).
  Value halfPi = constant(llvm::numbers::pi / 2);
  Value y = sub(value, halfPi);
  Value ySquared = mul(y, y);
  Value one = constant(1.0);
  Value series = one;
  for (int k = 11; k >= 1; --k) {
    Value term = div(ySquared, constant(2.0 * k * (2 * k + 1)));
    series = sub(one, mul(term, series));
  }
  return builder.create<mdl::NegOp>(loc, mul(y, series));
}

Value buildScheduledLearningRate(UpdateMath &math, StringRef kind,
                                 function_ref<Value(StringRef)> hyper) {
  // s is the optimizer step (1-based), S the run's total steps; both are
  // exact integers in f64. Formulas: the language spec, section 8. Each op
  // is built in its own statement so that the IR's order does not depend
  // on the compiler's order of evaluating arguments.
  Value lr = hyper("lr");
  if (kind == "constant")
    return lr;
  Value step = hyper("step");
  Value zero = math.constant(0.0);
  Value one = math.constant(1.0);
  if (kind == "step_lr") {
    // lr * gamma^floor((s - 1) / every). The frontend checks every >= 1;
    // max(every, 1) keeps a run-time 0 from dividing by zero.
    Value gamma = hyper("gamma");
    Value every = math.max(hyper("every"), one);
    Value elapsed = math.max(math.sub(step, one), zero);
    Value decays = math.floorNonNegative(math.div(elapsed, every));
    Value factor = math.pow(gamma, decays);
    return math.mul(lr, factor);
  }
  if (kind != "warmup_cosine" && kind != "linear")
    return {};

  // Both: lr * s / warmup while s <= warmup. With warmup = 0 that branch is
  // never taken (s >= 1); max(warmup, 1) only keeps its unused value finite.
  Value warmup = hyper("warmup");
  Value totalSteps = hyper("total_steps");
  Value warming = math.compare(mdl::CmpPredicate::le, step, warmup);
  Value scaledLr = math.mul(lr, step);
  Value warmupLr = math.div(scaledLr, math.max(warmup, one));
  // The decay runs over S - warmup steps; max(S - warmup, 1) guards
  // S = warmup, where no step of the run reaches it.
  Value decaySteps = math.max(math.sub(totalSteps, warmup), one);
  Value decayLr;
  if (kind == "warmup_cosine") {
    // min_lr + (lr - min_lr) * 1/2 * (1 + cos(pi * progress)) with
    // progress = (s - warmup) / (S - warmup), clamped to 1 so that steps
    // past S stay at min_lr.
    Value minLr = hyper("min_lr");
    Value sinceWarmup = math.sub(step, warmup);
    Value progress = math.min(math.div(sinceWarmup, decaySteps), one);
    Value angle = math.mul(math.constant(llvm::numbers::pi), progress);
    Value cosine = math.cos(angle);
    Value range = math.sub(lr, minLr);
    Value halfRange = math.mul(range, math.constant(0.5));
    Value decay = math.mul(halfRange, math.add(one, cosine));
    decayLr = math.add(minLr, decay);
  } else {
    // lr * (S - s) / (S - warmup), not below 0 past the end of the run.
    Value remaining = math.max(math.sub(totalSteps, step), zero);
    decayLr = math.div(math.mul(lr, remaining), decaySteps);
  }
  return math.select(warming, warmupLr, decayLr);
}

} // namespace modelc
