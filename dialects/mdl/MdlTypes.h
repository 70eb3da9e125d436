// Shape rules of the mdl ops, shared by their verifiers and by the frontend.
//
// Each `infer*Shape` function computes an op's result shape from its operand
// shapes and attributes, or returns nullopt when they are invalid. When
// `emitError` is given, it also reports why, in the words the verifiers use.
#ifndef MODELC_DIALECTS_MDL_MDLTYPES_H
#define MODELC_DIALECTS_MDL_MDLTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::mdl {

/// Starts an error diagnostic; a null function means "stay silent".
using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// Streams `args` into a new error when `emitError` is given; returns
/// nullopt, the failure value of the infer functions.
template <typename... Args>
std::nullopt_t reportInvalid(EmitErrorFn emitError, Args &&...args) {
  if (emitError)
    (emitError() << ... << std::forward<Args>(args));
  return std::nullopt;
}

/// A shape as users write it: `[128, 784]`, `[]` for a scalar.
std::string formatShape(ArrayRef<int64_t> shape);

/// The product of `shape`'s sizes, or nullopt when it does not fit in int64.
std::optional<int64_t> getElementCount(ArrayRef<int64_t> shape);

/// The NumPy broadcast of two shapes: aligned from the right, each pair of
/// sizes must be equal or contain a 1.
std::optional<SmallVector<int64_t>> inferBroadcastShape(ArrayRef<int64_t> lhs,
                                                        ArrayRef<int64_t> rhs);

/// The result shape of reducing `axes` (sorted, distinct, in range); reduced
/// axes are kept as 1 with `keepdim`, else removed.
std::optional<SmallVector<int64_t>>
inferReduceShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes, bool keepdim,
                 EmitErrorFn emitError = {});

/// `torch.matmul`'s result shape (see mdl.matmul).
std::optional<SmallVector<int64_t>>
inferMatmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                 EmitErrorFn emitError = {});

/// The number of positions of a sliding window:
/// `(size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1`, or
/// nullopt when the window does not fit in the padded input, when an attribute
/// is out of range, or when the padded size `size + 2 * padding` or the
/// dilated kernel extent `dilation * (kernel - 1) + 1` does not fit in int64.
/// Computed without overflow.
std::optional<int64_t> inferWindowCount(int64_t size, int64_t kernel,
                                        int64_t stride, int64_t padding,
                                        int64_t dilation = 1);

/// `[N, O, Ho, Wo]` for an NCHW input and an OIHW weight.
std::optional<SmallVector<int64_t>>
inferConv2dShape(ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
                 ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                 ArrayRef<int64_t> dilation, int64_t groups,
                 EmitErrorFn emitError = {});

/// `[N, C, Ho, Wo]` for 2-D pooling of an NCHW input.
std::optional<SmallVector<int64_t>>
inferPool2dShape(ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
                 ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                 EmitErrorFn emitError = {});

/// The shape with its axes permuted by `perm`.
std::optional<SmallVector<int64_t>>
inferTransposeShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm,
                    EmitErrorFn emitError = {});

/// The shape of `inputs` joined along `axis`.
std::optional<SmallVector<int64_t>>
inferConcatShape(ArrayRef<ArrayRef<int64_t>> inputs, int64_t axis,
                 EmitErrorFn emitError = {});

/// The shape of a strided slice (see mdl.slice for the rules).
std::optional<SmallVector<int64_t>> inferSliceShape(ArrayRef<int64_t> shape,
                                                    ArrayRef<int64_t> starts,
                                                    ArrayRef<int64_t> limits,
                                                    ArrayRef<int64_t> strides,
                                                    EmitErrorFn emitError = {});

/// `[b, h, t, dv]` for a query `[b, h, t, d]`, key `[b, h, s, d]` and value
/// `[b, h, s, dv]`.
std::optional<SmallVector<int64_t>>
inferAttentionShape(ArrayRef<int64_t> query, ArrayRef<int64_t> key,
                    ArrayRef<int64_t> value, EmitErrorFn emitError = {});

/// `ids + [D]` for a table `[V, D]`.
std::optional<SmallVector<int64_t>>
inferEmbeddingShape(ArrayRef<int64_t> ids, ArrayRef<int64_t> table,
                    EmitErrorFn emitError = {});

/// Result types for the builders that infer them. When the operands are
/// invalid these fall back to the first operand's type, so that the built op
/// fails verification with a precise message instead of crashing the builder.

/// The broadcast of the operands' shapes with `elementType` (by default the
/// first operand's element type).
Type inferBroadcastType(ArrayRef<Value> operands, Type elementType = {});
/// The type of reducing `axes` of `input`, keeping its element type.
Type inferReduceType(Type input, ArrayRef<int64_t> axes, bool keepdim);
/// The type of 2-D pooling of `input`.
Type inferPool2dType(Type input, ArrayRef<int64_t> kernel,
                     ArrayRef<int64_t> stride, ArrayRef<int64_t> padding);

} // namespace mlir::mdl

#endif // MODELC_DIALECTS_MDL_MDLTYPES_H
