// The pieces of --mdl-lower-to-gpu (LowerToGpu.cpp): how one kernel's work
// op becomes threads (ThreadMapping.cpp, RowReduction.cpp, BlockKernel.cpp on
// the loop-body helpers of LinalgPoints.cpp), and the static GEMM steps
// (GemmSteps.cpp). docs/codegen/gpu.md is the contract.
#ifndef MODELC_CODEGEN_GPU_GPULOWERING_H
#define MODELC_CODEGEN_GPU_GPULOWERING_H

#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace modelc {

/// The most threads per block (fewer for little work); a block kernel has
/// exactly this many.
inline constexpr int64_t kGpuBlockSize = 256;
/// Threads of a one-thread kernel (a scalar store, serial work): one warp,
/// of which thread 0 works.
inline constexpr int64_t kGpuSingleThreadBlock = 32;
inline constexpr int64_t kGpuWarpSize = 32;
/// At most this many blocks per launch; kernels loop (grid-stride) over the
/// rest of their work.
inline constexpr int64_t kGpuMaxGrid = 65535 * 4;

/// How a kernel is launched: `grid` blocks of `block` threads.
struct LaunchShape {
  int64_t grid, block;
};

/// What a kernel body builder has at hand: the builder, inside the gpu.func,
/// and the mapping from the kernel function's values to the gpu.func's.
struct KernelBuilder {
  mlir::OpBuilder &builder;
  mlir::Location loc;
  mlir::IRMapping &mapping;

  mlir::Value index(int64_t value);
  mlir::Value threadId();
  mlir::Value blockId();
  mlir::Value gridDim();
};

// ---- LinalgPoints.cpp: one point of an iteration space -----------------

/// `linear` as coordinates over `ranges`, the last coordinate fastest.
llvm::SmallVector<mlir::Value> delinearize(KernelBuilder &kb,
                                           mlir::Value linear,
                                           llvm::ArrayRef<int64_t> ranges);

/// The static loop ranges of `op`; failure (with a diagnostic) when one is
/// dynamic.
mlir::FailureOr<llvm::SmallVector<int64_t>>
getStaticRanges(mlir::linalg::LinalgOp op);

/// Loads the operands of `op` whose payload argument is used, at loop
/// coordinates `ivs` (all of the op's loops), into `payload`: memrefs
/// through their indexing maps, scalars as they are; linalg.index results
/// map to the coordinates. `skip` is a payload argument left unmapped.
void mapPayloadArguments(KernelBuilder &kb, mlir::linalg::LinalgOp op,
                         mlir::ValueRange ivs, mlir::IRMapping &payload,
                         mlir::BlockArgument skip = nullptr);

/// The body of `op` at one point `ivs`: loads, the payload, and the stores
/// of the yielded values through the init operands' maps.
void emitLinalgPoint(KernelBuilder &kb, mlir::linalg::LinalgOp op,
                     mlir::ValueRange ivs);

/// A copy of one element of `copy`, at `ivs` over the target's shape.
void emitCopyPoint(KernelBuilder &kb, mlir::memref::CopyOp copy,
                   mlir::ValueRange ivs);

/// Whether threads may take the parallel points of `op` in any order: each
/// init operand's indexing map is a projected permutation of exactly the
/// parallel loops (different points write different elements), and no
/// input reads an output through another map.
bool hasIndependentParallelPoints(mlir::linalg::LinalgOp op);

/// `for (i = lb; i < ub; i += step) body(i)` with index bounds.
void emitLoop(KernelBuilder &kb, mlir::Value lb, mlir::Value ub,
              mlir::Value step, llvm::function_ref<void(mlir::Value)> body);

/// The loops of `op` nested in their order, the first outermost (the CPU's
/// order), over the loops in `dims` (the others fixed at `fixed`).
void emitSerialLoops(KernelBuilder &kb, llvm::ArrayRef<int64_t> ranges,
                     llvm::ArrayRef<unsigned> dims,
                     llvm::SmallVectorImpl<mlir::Value> &ivs,
                     llvm::function_ref<void()> body);

// ---- ThreadMapping.cpp ---------------------------------------------------

/// Emits the work op `work` of a kernel (already mapped operands through
/// `kb.mapping`) as threads, by the table of docs/codegen/gpu.md; returns
/// the launch shape it needs.
mlir::FailureOr<LaunchShape> emitKernelWork(KernelBuilder &kb,
                                            mlir::Operation *work);

/// Parallel points of `op` (the points of its parallel loops) spread over
/// `count` threads numbered `first`, `first + step`, ...: one thread per
/// point, the reduction loops serial in the thread.
void emitParallelPoints(KernelBuilder &kb, mlir::linalg::LinalgOp op,
                        llvm::ArrayRef<int64_t> ranges, mlir::Value first,
                        mlir::Value step);

/// `body` in thread 0 only.
void emitInThreadZero(KernelBuilder &kb, llvm::function_ref<void()> body);

/// All of `op` in one thread, in the CPU's loop order.
void emitSerialOp(KernelBuilder &kb, mlir::linalg::LinalgOp op,
                  llvm::ArrayRef<int64_t> ranges);

// ---- AttentionKernels.cpp -------------------------------------------------

/// A pass of the fused attention (docs/codegen/attention.md): the
/// tensor-core kernel when the pass has one for its types and shapes,
/// else its region's parallel loop, a thread per row.
mlir::FailureOr<LaunchShape>
emitAttentionPass(KernelBuilder &kb, mlir::mdlrt::AttentionPassOp pass);

/// A top-level scf.parallel from 0 in unit steps to constant bounds: one
/// thread per point, its body serial in the thread.
mlir::FailureOr<LaunchShape> emitParallelLoop(KernelBuilder &kb,
                                              mlir::scf::ParallelOp parallel);

/// One thread per point of `ranges` (the last fastest), `point` building
/// each point's work from its coordinates.
LaunchShape emitElementwise(KernelBuilder &kb, llvm::ArrayRef<int64_t> ranges,
                            llvm::function_ref<void(mlir::ValueRange)> point);

// ---- ScatterKernels.cpp ---------------------------------------------------

/// mdlrt.row_scatter_add as a thread per (range of rows, column), each
/// adding in position order.
mlir::FailureOr<LaunchShape> emitRowScatterAdd(KernelBuilder &kb,
                                               mlir::mdlrt::RowScatterAddOp op);

// ---- RowReduction.cpp ----------------------------------------------------

/// The row form of a reduction (one warp per parallel point, a butterfly of
/// shuffles), when `op` has it; failure, with no IR emitted, when not.
mlir::FailureOr<LaunchShape> emitRowReduction(KernelBuilder &kb,
                                              mlir::linalg::LinalgOp op,
                                              llvm::ArrayRef<int64_t> ranges);

// ---- BlockKernel.cpp -----------------------------------------------------

/// A region op (an scf.for scatter-add) as one block: scalar code in every
/// thread, nested parallel work spread over the block with barriers,
/// anything else with side effects in thread 0.
mlir::LogicalResult emitBlockKernel(KernelBuilder &kb, mlir::Operation *work);

// ---- GemmSteps.cpp -------------------------------------------------------

/// The Gemm step of `gemm` (docs/codegen/gpu.md): byte offsets in the arena
/// and element strides, all static, as a dictionary with the fields of the
/// schema's GpuGemm; failure, with a diagnostic on the op, otherwise.
mlir::FailureOr<mlir::DictionaryAttr> describeGemm(mlir::mdlrt::GemmOp gemm,
                                                   mlir::Value arena);

} // namespace modelc

#endif // MODELC_CODEGEN_GPU_GPULOWERING_H
