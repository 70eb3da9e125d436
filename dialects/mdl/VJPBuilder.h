// Helpers shared by the vector-Jacobian products of the mdl ops (*VJP.cpp):
// short builders for the mdl ops that backward passes are made of, and the
// shape bookkeeping every VJP needs (undoing broadcasts and reductions).
#ifndef MODELC_DIALECTS_MDL_VJPBUILDER_H
#define MODELC_DIALECTS_MDL_VJPBUILDER_H

#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::mdl {

/// Whether gradients can flow through values of `type`: float tensors only
/// (integer and bool values, such as labels, ids and masks, have none).
bool isDifferentiableType(Type type);

/// One null adjoint per operand of `op`: no gradient flows to any of them.
SmallVector<Value> noGradients(Operation *op);

/// Creates mdl ops at a builder's insertion point, all with one location.
/// The result types are inferred, so a VJP reads like its formula.
class VJPBuilder {
public:
  VJPBuilder(OpBuilder &builder, Location loc) : builder(builder), loc(loc) {}

  Value add(Value lhs, Value rhs);
  Value sub(Value lhs, Value rhs);
  Value mul(Value lhs, Value rhs);
  Value div(Value lhs, Value rhs);
  Value neg(Value input);
  Value exp(Value input);
  Value log(Value input);
  Value pow(Value base, Value exponent);
  Value rsqrt(Value input);
  Value sigmoid(Value input);
  Value compare(CmpPredicate predicate, Value lhs, Value rhs);
  Value logicalAnd(Value lhs, Value rhs);
  Value where(Value condition, Value onTrue, Value onFalse);
  Value cast(Value input, Type elementType);

  /// A 0-d constant with `like`'s element type; it broadcasts against any
  /// tensor in the binary ops.
  Value scalar(double value, Value like);
  /// A tensor of `type` full of zeros.
  Value zeros(Type type);

  Value sum(Value input, ArrayRef<int64_t> axes, bool keepdim = false);
  Value mean(Value input, ArrayRef<int64_t> axes, bool keepdim = false);
  /// `input` reshaped to `shape` (no op when it already has it).
  Value reshape(Value input, ArrayRef<int64_t> shape);
  Value transpose(Value input, ArrayRef<int64_t> perm);
  /// Swaps the last two axes (the matrix transpose of a batch of matrices).
  Value transposeLastTwo(Value input);
  Value broadcastTo(Value input, Type type);
  Value slice(Value input, ArrayRef<int64_t> starts, ArrayRef<int64_t> limits,
              ArrayRef<int64_t> strides);
  Value matmul(Value lhs, Value rhs);

  /// The adjoint of a NumPy broadcast from `type` to `grad`'s shape: `grad`
  /// summed over the axes that the broadcast added or stretched from 1, then
  /// reshaped to `type` (`grad` itself when it already has that type).
  Value sumToType(Value grad, Type type);
  /// `grad`, the adjoint of a reduction of a tensor of `inputType` over
  /// `axes`, with the reduced axes back as size 1 (what `keepdim` gives).
  Value restoreReducedAxes(Value grad, Type inputType, ArrayRef<int64_t> axes);

private:
  OpBuilder &builder;
  Location loc;
};

/// The number of elements in the `axes` of `type`, the divisor of a mean.
int64_t getReducedCount(Type type, ArrayRef<int64_t> axes);

} // namespace mlir::mdl

#endif // MODELC_DIALECTS_MDL_VJPBUILDER_H
