// The fused attention's tensor-core kernels (docs/codegen/attention.md):
// what they share, and one entry point per pass. AttentionKernels.cpp has
// the dispatch and the forward, AttentionGradKernels.cpp the backward.
#ifndef MODELC_CODEGEN_GPU_ATTENTIONKERNELS_H
#define MODELC_CODEGEN_GPU_ATTENTIONKERNELS_H

#include "codegen/gpu/MmaFragments.h"

namespace modelc {

/// A pass's operands in the kernel (mapped) and its static facts.
struct AttentionOperands {
  /// q, k, v and, for the backward, dO, lse and D; the mask and the dropout
  /// key when the pass has them.
  mlir::Value query, key, value, outputGrad, lse, rowDot, mask, dropoutKey;
  /// The 16-bit type of q, k, v (and dO).
  mlir::Type element;
  int64_t batches, heads, queries, keys, width, valueWidth;
  double scale, dropout;
  bool causal;
};

AttentionOperands readAttentionOperands(KernelBuilder &kb,
                                        mlir::mdlrt::AttentionPassOp pass);

/// Whether query `row` sees key `key` (index values, possibly out of
/// range: then false): in bounds, at or below the diagonal when causal,
/// and where the mask is true.
mlir::Value isVisible(MmaEmitter &e, const AttentionOperands &a,
                      mlir::Value batch, mlir::Value head, mlir::Value row,
                      mlir::Value key);

/// The dropout factor of the pair (f32; 1 without dropout): the CPU loops'
/// hash of its index in [b, h, t, s] (createDropoutFactor).
mlir::Value dropoutFactor(MmaEmitter &e, const AttentionOperands &a,
                          mlir::Value batch, mlir::Value head, mlir::Value row,
                          mlir::Value key);

/// The backward's tensor-core kernels (AttentionGradKernels.cpp).
LaunchShape emitQueryGradMma(KernelBuilder &kb,
                             mlir::mdlrt::AttentionPassOp pass);
LaunchShape emitKeyValueGradMma(KernelBuilder &kb,
                                mlir::mdlrt::AttentionPassOp pass);

} // namespace modelc

#endif // MODELC_CODEGEN_GPU_ATTENTIONKERNELS_H
