// The helpers of every --mdl-lower-to-linalg pattern family (Patterns.h),
// each defined once: signless types and the 16-bit compute rule, constants,
// tensor.empty/linalg.fill, reshapes, broadcasting elementwise generics,
// reductions, GEMMs, pooling windows and PyTorch's scalar conversions.
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
/// `type` (a ranked tensor) with getSignlessType elements: the type
/// conversion of the pass, which every pattern applies to its results.
mlir::RankedTensorType getSignlessTensorType(mlir::Type type);
/// Whether integer values of mdl element type `elementType` zero-extend:
/// ui8, ui16 and i1 (false < true, as in PyTorch).
bool isZeroExtended(mlir::Type elementType);
/// Whether `value`'s element type is an unsigned integer (ui8, ui16). Ask the
/// original mdl operand: after type conversion every integer is signless.
bool hasUnsignedElements(mlir::Value value);

/// The 16-bit compute rule (PyTorch's opmath): f16 and bf16 compute in f32
/// and round once. getComputeType gives the type (also that of the
/// accumulators of sums), computeInOpmath (below) applies the rule to one
/// scalar computation, extendToComputeType extends one element read and
/// castTensor rounds an f32 accumulator once. Every pattern family applies it.
mlir::Type getComputeType(mlir::Type elementType);

//===----------------------------------------------------------------------===//
// Constants and tensors.
//===----------------------------------------------------------------------===//

/// A scalar arith.constant of a float or (signless) integer `type`; integers
/// take `value` truncated toward zero.
mlir::Value createScalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Type type, double value);
/// An arith.constant of index type.
mlir::Value createIndexConstant(mlir::OpBuilder &b, mlir::Location loc,
                                int64_t value);
/// The identity of max: -inf, or the least integer of `elementType` (an mdl
/// type, so that ui8 gives 0).
mlir::Value createLowestValue(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Type elementType);
/// The identity of min: +inf, or the greatest integer of `elementType`.
mlir::Value createHighestValue(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Type elementType);
/// `tensor.empty` of `shape` and `elementType`: the destination of a linalg
/// op that overwrites every element.
mlir::Value createEmptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<int64_t> shape,
                              mlir::Type elementType);
/// `tensor.empty` of `type`.
mlir::Value createEmptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::RankedTensorType type);
/// `linalg.fill` of `scalar` into a fresh tensor of `shape`.
mlir::Value createFilledTensor(mlir::OpBuilder &b, mlir::Location loc,
                               llvm::ArrayRef<int64_t> shape,
                               mlir::Value scalar);
/// A tensor of zeros: the accumulator of GEMMs and reductions.
mlir::Value createZeroTensor(mlir::OpBuilder &b, mlir::Location loc,
                             llvm::ArrayRef<int64_t> shape,
                             mlir::Type elementType);
/// `value` reshaped (row-major, same element count) to `shape` with one
/// tensor.collapse_shape or tensor.expand_shape when the shapes nest, else
/// a collapse to 1-D and an expand; both bufferize to views, never copies.
mlir::Value reshapeTensor(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, llvm::ArrayRef<int64_t> shape);
/// `value` broadcast to `shape` with NumPy's rules (getBroadcastMap) as one
/// copying linalg.generic.
mlir::Value broadcastTensor(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value value, llvm::ArrayRef<int64_t> shape);
/// NCHW `input` with `padding[0]` rows of `value` above and below and
/// `padding[1]` columns left and right (a tensor.pad; `input` itself when
/// both are 0).
mlir::Value padSpatial(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value input, llvm::ArrayRef<int64_t> padding,
                       mlir::Value value);
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

/// `parallel` parallel iterators followed by `reduction` reductions.
llvm::SmallVector<mlir::utils::IteratorType> iteratorTypes(int64_t parallel,
                                                           int64_t reduction);
/// The map from `numDims` loop dimensions to the dimensions `dims`.
mlir::AffineMap projectionMap(mlir::MLIRContext *ctx, unsigned numDims,
                              llvm::ArrayRef<unsigned> dims);
/// The map from `numDims` loop dimensions to the first `count` of them
/// (unlike AffineMap::getMajorSubMap, also for `count` = 0).
mlir::AffineMap leadingDimsMap(mlir::MLIRContext *ctx, unsigned numDims,
                               unsigned count);
/// Loop index `dim` of the enclosing linalg.generic body.
mlir::Value loopIndex(mlir::OpBuilder &b, mlir::Location loc, int64_t dim);

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

/// A linalg.generic with no loops computing `body(inputs..)` (element values)
/// into a fresh 0-d tensor of `type`; the inputs are 0-d tensors.
mlir::Value createScalarGeneric(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::RankedTensorType type,
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

/// `tensor` with its float elements converted to float type `type` by one
/// elementwise generic (castFloat per element), or `tensor` itself when
/// they already are: how an f32 accumulator is rounded once to f16/bf16.
mlir::Value castTensor(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value tensor, mlir::Type type);

/// The linear (row-major) index of the current element of the enclosing
/// linalg.generic over `shape`, as i64.
mlir::Value createLinearIndex(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<int64_t> shape);

/// The named GEMM `lhs @ rhs` into zeros of `shape`: linalg.matmul for a
/// 2-D `shape`, linalg.batch_matmul for a 3-D one, in the _transpose_a/b
/// form when a side is stored transposed (`[k, m]` for the lhs, `[n, k]`
/// for the rhs; at most one, as linalg has no form for both). These named
/// ops are what --mdl-gemm-to-library maps to BLAS. f16/bf16 operands are
/// extended to f32 (exactly), multiplied in f32 and the result rounded to
/// their type, as tensor cores and torch.matmul compute them.
mlir::Value createGemm(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs,
                       mlir::Value rhs, bool transposeLhs, bool transposeRhs,
                       llvm::ArrayRef<int64_t> shape);
/// createGemm's product before rounding: in getComputeType of the
/// operands' type (f32 for f16/bf16 operands, which the matmul reads as
/// they are), for a consumer that adds to it in f32 and rounds once.
mlir::Value createWideGemm(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value lhs, mlir::Value rhs, bool transposeLhs,
                           bool transposeRhs, llvm::ArrayRef<int64_t> shape);

/// The output window along one axis whose tap reads a given input
/// position, for the gather forms of col2im and the pooling gradients.
struct WindowIndex {
  /// The window's index, 0 when there is none (so a read stays in bounds).
  mlir::Value index;
  /// Whether there is one: `(padded - tap) / stride` exact and in
  /// [0, count).
  mlir::Value valid;
};
/// Window y with `y * stride + tap == padded` (index values; `padded` is
/// the input position plus the low padding, `tap` the kernel offset times
/// the dilation), among `count` windows.
WindowIndex findReadingWindow(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value padded, mlir::Value tap,
                              int64_t stride, int64_t count);

//===----------------------------------------------------------------------===//
// Scalars.
//===----------------------------------------------------------------------===//

/// `value` (signless, of mdl element type `from`) converted to mdl element
/// type `to` (returned signless) as PyTorch's `Tensor.to(dtype)`: floats to
/// integers truncate toward zero, anything to i1 is `x != 0`, unsigned
/// integers and i1 zero-extend.
mlir::Value convertScalar(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, mlir::Type from, mlir::Type to);
/// Float `value` converted to the float type `type` (convertScalar between
/// the two float types).
mlir::Value castFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      mlir::Type type);

/// Integer id or label `value` as an index: zero-extended when the original
/// type was unsigned, sign-extended otherwise.
mlir::Value castToIndex(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value value, bool isUnsigned);
/// Integer `value` widened to i64 (the type of `ignore_index` and argmax).
mlir::Value extendToI64(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value value, bool isUnsigned);
/// `index` clamped to [0, size - 1], so that a read can never leave a tensor.
mlir::Value clampIndex(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value index, int64_t size);

/// The 16-bit compute rule applied: runs `compute` on `operands` in
/// getComputeType(type), f16/bf16 operands extended to f32 and the result
/// truncated back, as PyTorch computes half types. Other types pass through.
mlir::Value computeInOpmath(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Type type, mlir::ValueRange operands,
                            ScalarBodyFn compute);
/// Float `value` in getComputeType of its type: f16/bf16 extended to f32
/// (exactly), any other type returned as it is (no op). How a 16-bit
/// element enters an f32 accumulation.
mlir::Value extendToComputeType(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value value);

//===----------------------------------------------------------------------===//
// Dropout's random stream (mdl.dropout_mask, and attention's probabilities).
//===----------------------------------------------------------------------===//

/// The key of the dropout site `id` for this micro-batch:
/// mix64(mix64(seed ^ salt) ^ counter) with salt = id * 0x9E3779B97F4A7C15,
/// an mdlrt.launch_constant (so the sites of one shape share a kernel), and
/// seed, counter the 0-d f64 tensors converted by fptoui. An i64.
mlir::Value createDropoutKey(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value seed, mlir::Value counter, int64_t id);
/// The dropout factor of the element with i64 linear index `index` under
/// `key`: with h = mix64(key ^ index) and u = (h >> 11) * 2^-53 in [0, 1),
/// 0 when u < p, else 1 / (1 - p), in float type `type`. (Computed as the
/// integer comparison (h >> 11) < ceil(p * 2^53), which is the same.)
mlir::Value createDropoutFactor(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value key, mlir::Value index, double p,
                                mlir::Type type);

// ---- Ops on memory inside a tensor program (the fused ops' loops) ----

/// `tensor` as a read-only memref with any strides, or any but a unit last
/// one when `unitInnerStride` (one-shot bufferization casts its buffer to
/// that, or copies it when its last axis is strided).
mlir::Value readMemref(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value tensor, bool unitInnerStride = true);
/// A new buffer for a result of type `type`.
mlir::Value allocate(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type);
/// The buffer `buffer`, written, as the result tensor of type `type`.
mlir::Value asResult(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                     mlir::Type type);

} // namespace modelc::lowering

#endif // MODELC_CODEGEN_LINALG_LOWERINGUTILS_H
