// Arithmetic for --mdl-expand-optimizer: mdl ops on 0-d f64 tensors for the
// run-time hyperparameters, the learning-rate schedules of the language spec
// (section 8), and the casts where scalars meet parameter tensors.
#ifndef MODELC_PASSES_OPTIMIZERUTILS_H
#define MODELC_PASSES_OPTIMIZERUTILS_H

#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/Builders.h"

namespace modelc {

/// Builds mdl ops at a builder's insertion point. Operands broadcast, so a
/// 0-d scalar combines with a tensor of the same element type.
class UpdateMath {
public:
  UpdateMath(mlir::OpBuilder &builder, mlir::Location loc)
      : builder(builder), loc(loc) {}

  /// A 0-d constant of `elementType` (f64 when null).
  mlir::Value constant(double value, mlir::Type elementType = {});
  /// A constant of `type` with every element `value`.
  mlir::Value splat(mlir::RankedTensorType type, double value);

  mlir::Value add(mlir::Value lhs, mlir::Value rhs);
  mlir::Value sub(mlir::Value lhs, mlir::Value rhs);
  mlir::Value mul(mlir::Value lhs, mlir::Value rhs);
  mlir::Value div(mlir::Value lhs, mlir::Value rhs);
  mlir::Value pow(mlir::Value base, mlir::Value exponent);
  mlir::Value min(mlir::Value lhs, mlir::Value rhs);
  mlir::Value max(mlir::Value lhs, mlir::Value rhs);
  mlir::Value sqrt(mlir::Value value);
  mlir::Value compare(mlir::mdl::CmpPredicate predicate, mlir::Value lhs,
                      mlir::Value rhs);
  mlir::Value select(mlir::Value condition, mlir::Value onTrue,
                     mlir::Value onFalse);
  /// `value` converted to `elementType`; `value` itself when it has it.
  mlir::Value cast(mlir::Value value, mlir::Type elementType);
  /// The sum of the 0-d `terms` (f32 or f64, all alike) as `mdl.sum` of
  /// their stack adds them (dialects/mdl/SumOrder.h), built as 0-d adds:
  /// --mdl-fuse-elementwise makes those one kernel whatever the number of
  /// terms, where a stack would be a copy per term and a sum of a shape
  /// that grows with the count (and one-shot bufferization of a stack's
  /// chain of inserts costs more than the cube of its length).
  mlir::Value stackedSum(llvm::ArrayRef<mlir::Value> terms);
  /// floor(value) of a non-negative f64 scalar.
  mlir::Value floorNonNegative(mlir::Value value);
  /// cos(value) of an f64 scalar in [0, pi], to f64 precision.
  mlir::Value cos(mlir::Value value);

private:
  mlir::OpBuilder &builder;
  mlir::Location loc;
};

/// The learning rate (an f64 scalar) of the optimizer step `hyper("step")`
/// under the schedule `kind` (`constant`, `warmup_cosine`, `linear`,
/// `step_lr`), every hyperparameter read through `hyper`. Null when the
/// kind is unknown.
mlir::Value buildScheduledLearningRate(
    UpdateMath &math, llvm::StringRef kind,
    llvm::function_ref<mlir::Value(llvm::StringRef)> hyper);

} // namespace modelc

#endif // MODELC_PASSES_OPTIMIZERUTILS_H
