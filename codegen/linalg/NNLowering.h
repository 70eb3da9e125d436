// Private helpers shared by the NNToLinalg*.cpp lowerings of the mdl
// neural-network ops (matmul, conv, pooling, norms, embedding, losses, gelu).
#ifndef MODELC_CODEGEN_LINALG_NNLOWERING_H
#define MODELC_CODEGEN_LINALG_NNLOWERING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace modelc::nn {

// One populate function per file; populateNNToLinalgPatterns calls them all.
void populateMatmulToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateConvToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populatePoolToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populatePoolGradToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateNormToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateEmbeddingToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateLossToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateMeanReductionToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateGeluToLinalgPatterns(mlir::RewritePatternSet &patterns);

/// `type` after the pass's type conversion: `converter`'s result when the
/// pattern has one, otherwise the same tensor with unsigned integer elements
/// made signless (the conversion --mdl-lower-to-linalg applies).
mlir::RankedTensorType convertTensorType(const mlir::TypeConverter *converter,
                                         mlir::Type type);

/// Whether `value`'s element type is an unsigned integer (ui8, ui16). Ask the
/// original mdl operand: after type conversion every integer is signless.
bool hasUnsignedElements(mlir::Value value);

/// `tensor.empty` of `shape` and `elementType`.
mlir::Value createEmptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::ArrayRef<int64_t> shape,
                              mlir::Type elementType);
/// `linalg.fill` of `value` on a fresh `tensor.empty`.
mlir::Value createFilledTensor(mlir::OpBuilder &b, mlir::Location loc,
                               llvm::ArrayRef<int64_t> shape,
                               mlir::Value value);
/// A tensor of zeros: the accumulator of GEMMs and reductions.
mlir::Value createZeroTensor(mlir::OpBuilder &b, mlir::Location loc,
                             llvm::ArrayRef<int64_t> shape,
                             mlir::Type elementType);

/// An arith constant of a float `type`.
mlir::Value createFloatConstant(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Type type, double value);
mlir::Value createIndexConstant(mlir::OpBuilder &b, mlir::Location loc,
                                int64_t value);

/// Float `value` converted to the float type `type` (extf / truncf).
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

/// The named GEMM `lhs @ rhs` into zeros of `shape`: linalg.matmul for a
/// 2-D `shape`, linalg.batch_matmul for a 3-D one, in the _transpose_a/b
/// form when a side is stored transposed (`[k, m]` for the lhs, `[n, k]`
/// for the rhs; at most one, as linalg has no form for both). These named
/// ops are what --mdl-gemm-to-library maps to BLAS.
mlir::Value createGemm(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs,
                       mlir::Value rhs, bool transposeLhs, bool transposeRhs,
                       llvm::ArrayRef<int64_t> shape);

/// NCHW `input` with `padding[0]` rows of `value` above and below and
/// `padding[1]` columns left and right (a tensor.pad; `input` itself when
/// both are 0).
mlir::Value padSpatial(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value input, llvm::ArrayRef<int64_t> padding,
                       mlir::Value value);

/// `value` reshaped (row-major, same element count) to `shape` with
/// tensor.collapse_shape / tensor.expand_shape, which bufferize to views.
mlir::Value reshapeTensor(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, llvm::ArrayRef<int64_t> shape);

/// `value` broadcast to `shape` with NumPy's rules (axes aligned on the
/// right, size-1 axes stretched) as one copying linalg.generic.
mlir::Value broadcastTensor(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value value, llvm::ArrayRef<int64_t> shape);

/// A linalg.generic with no loops computing `fn(inputs..)` (element values)
/// into a fresh 0-d tensor of `type`; the inputs are 0-d tensors.
mlir::Value createScalarGeneric(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
    mlir::ValueRange inputs,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::ValueRange)>
        fn);

/// `n` parallel iterators followed by `m` reductions.
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

} // namespace modelc::nn

#endif // MODELC_CODEGEN_LINALG_NNLOWERING_H
