// Helpers shared by the --mdl-lower-to-linalg pattern families: signless
// types, tensor.empty/linalg.fill, broadcasting elementwise generics,
// reductions, reshapes and PyTorch's scalar conversions.
#ifndef MODELC_CODEGEN_LINALG_LOWERINGUTILS_H
#define MODELC_CODEGEN_LINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace modelc::lowering {

//===----------------------------------------------------------------------===//
// Types. mdl tensors of ui8/ui16 become signless i8/i16 tensors (arith works
// on signless integers only); the patterns read the signedness from the
// original mdl op, whose types are unchanged during the conversion.
//===----------------------------------------------------------------------===//

/// ui8/ui16 as i8/i16; every other type unchanged.
mlir::Type getSignlessType(mlir::Type elementType);
/// `type` (a ranked tensor) with getSignlessType elements.
mlir::RankedTensorType getSignlessTensorType(mlir::Type type);
/// Whether integer values of mdl element type `elementType` zero-extend:
/// ui8, ui16 and i1 (false < true, as in PyTorch).
bool isZeroExtended(mlir::Type elementType);
/// f16 and bf16 compute in f32 and round once, as PyTorch's opmath does.
mlir::Type getComputeType(mlir::Type elementType);

//===----------------------------------------------------------------------===//
// Constants and tensors.
//===----------------------------------------------------------------------===//

/// A scalar arith.constant of a float or (signless) integer `type`; integers
/// take `value` truncated toward zero.
mlir::Value createScalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Type type, double value);
/// The identity of max: -inf, or the least integer of `elementType` (an mdl
/// type, so that ui8 gives 0).
mlir::Value createLowestValue(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Type elementType);
/// The identity of min: +inf, or the greatest integer of `elementType`.
mlir::Value createHighestValue(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Type elementType);
/// `tensor.empty` of `type`: the destination of a linalg op that overwrites
/// every element.
mlir::Value createEmptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::RankedTensorType type);
/// `linalg.fill` of `scalar` into a fresh tensor of `shape`.
mlir::Value createFilledTensor(mlir::OpBuilder &b, mlir::Location loc,
                               llvm::ArrayRef<int64_t> shape,
                               mlir::Value scalar);
/// The element of a tensor whose elements are all one constant (a splat
/// arith.constant, or a linalg.fill of an arith.constant: what mdl.constant
/// splats lower to), or null.
mlir::TypedAttr getSplatValue(mlir::Value tensor);

//===----------------------------------------------------------------------===//
// linalg.generic builders.
//===----------------------------------------------------------------------===//

/// Computes a result element from the operands' elements (block arguments).
using ScalarBodyFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// The indexing map that reads an operand of `operandShape` broadcast with
/// NumPy's rules to `resultShape`: axes aligned on the right, missing
/// leading axes dropped, size-1 axes read at index 0.
mlir::AffineMap getBroadcastMap(mlir::MLIRContext *ctx,
                                llvm::ArrayRef<int64_t> operandShape,
                                llvm::ArrayRef<int64_t> resultShape);

/// One all-parallel linalg.generic producing `resultType` from `inputs`
/// broadcast to its shape, the body computing each element. Inputs with a
/// getSplatValue are not read from memory: the body gets the constant.
mlir::Value createElementwiseOp(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::RankedTensorType resultType,
                                mlir::ValueRange inputs, ScalarBodyFn body);

/// The shape of `shape` without `axes` (sorted).
llvm::SmallVector<int64_t> dropAxes(llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<int64_t> axes);

/// A linalg.generic iterating over `shape` that reduces `axes` (sorted) into
/// a tensor of shape dropAxes(shape, axes) starting from `init` (a scalar
/// whose type is the accumulator's). Each input has either `shape` or the
/// reduced shape (read at the output's position). `combine(b, loc, elements,
/// accumulator)` returns the new accumulator.
mlir::Value createReduction(
    mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange inputs,
    llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> axes,
    mlir::Value init,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::ValueRange, mlir::Value)>
        combine);

/// The linear (row-major) index of the current element of the enclosing
/// linalg.generic over `shape`, as i64.
mlir::Value createLinearIndex(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<int64_t> shape);

/// `value` reshaped (row-major, same element count) to `shape` with one
/// tensor.collapse_shape or tensor.expand_shape when the shapes nest, else
/// a collapse to 1-D and an expand; both bufferize to views, never copies.
mlir::Value reshapeTensor(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, llvm::ArrayRef<int64_t> shape);

//===----------------------------------------------------------------------===//
// Scalars.
//===----------------------------------------------------------------------===//

/// `value` (signless, of mdl element type `from`) converted to mdl element
/// type `to` (returned signless) as PyTorch's `Tensor.to(dtype)`: floats to
/// integers truncate toward zero, anything to i1 is `x != 0`, unsigned
/// integers and i1 zero-extend.
mlir::Value convertScalar(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, mlir::Type from, mlir::Type to);

/// Runs `compute` on `operands` in getComputeType(type): f16/bf16 operands are
/// extended to f32 and the result truncated back, as PyTorch computes half
/// types. Other types pass through.
mlir::Value computeInOpmath(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Type type, mlir::ValueRange operands,
                            ScalarBodyFn compute);

} // namespace modelc::lowering

#endif // MODELC_CODEGEN_LINALG_LOWERINGUTILS_H
