// The rewrite patterns of --mdl-lower-to-linalg, one populate function per
// op family (the Triton habit: ElementwiseToLinalg.cpp, ReductionToLinalg.cpp,
// ...). Each pattern rewrites one mdl op on tensors into linalg, tensor,
// arith and math ops (and mdlrt.buffer / bufferization ops for storage).
#ifndef MODELC_CODEGEN_LINALG_PATTERNS_H
#define MODELC_CODEGEN_LINALG_PATTERNS_H

#include "mlir/IR/PatternMatch.h"

namespace modelc {

/// Elementwise ops with broadcasting, casts, constants, where, compare.
void populateElementwiseToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// sum, mean, max, min, argmax, softmax, log_softmax.
void populateReductionToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// reshape, transpose, concat, split, broadcast_to, arange, slice, slice_grad.
void populateShapeToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// load, store, param_ref (mdlrt.buffer + bufferization), dropout_mask.
void populateStorageToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// matmul, conv2d and its gradients, pooling and its gradients, layer_norm,
/// embedding and its gradient, cross_entropy and its gradient, mse_loss,
/// accuracy, gelu and its gradient.
void populateNNToLinalgPatterns(mlir::RewritePatternSet &patterns);

} // namespace modelc

#endif // MODELC_CODEGEN_LINALG_PATTERNS_H
