// The rewrite patterns of --mdl-lower-to-linalg, one populate function per
// op family, all declared here (the Triton habit: ElementwiseToLinalg.cpp,
// ReductionToLinalg.cpp, ...; their shared helpers in LoweringUtils.h). Each
// pattern rewrites one mdl op on tensors into linalg, tensor, arith and math
// ops (and mdlrt.buffer / bufferization ops for storage).
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
/// accuracy, gelu and its gradient, the fused attention and its gradient:
/// the populate functions below.
void populateNNToLinalgPatterns(mlir::RewritePatternSet &patterns);

// The neural-network family, one populate function per NNToLinalg*.cpp.
void populateMatmulToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateConvToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populatePoolToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populatePoolGradToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateNormToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateEmbeddingToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateLossToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateMeanReductionToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateGeluToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateRecurrentToLinalgPatterns(mlir::RewritePatternSet &patterns);
void populateAttentionToLinalgPatterns(mlir::RewritePatternSet &patterns);

} // namespace modelc

#endif // MODELC_CODEGEN_LINALG_PATTERNS_H
