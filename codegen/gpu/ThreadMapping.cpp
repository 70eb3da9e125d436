// Which threads do a kernel's work (docs/codegen/gpu.md, the thread mapping
// table): one thread per point of an all-parallel op, a warp per row of a
// reduction in row form, a thread per parallel point with the reduction
// serial otherwise, a thread per point of a parallel loop (the fused
// kernels), one block for another region op, one thread for the rest.
#include "codegen/gpu/GpuLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace modelc {

namespace {

/// Threads per block for `threads` threads of work: whole warps, at most
/// kGpuBlockSize (a scalar op takes one warp, not eight).
int64_t blockFor(int64_t threads) {
  return std::clamp<int64_t>(llvm::alignTo(threads, kGpuWarpSize), kGpuWarpSize,
                             kGpuBlockSize);
}

/// Enough blocks of `block` threads for `threads` threads, at least one, at
/// most kGpuMaxGrid (the kernels loop over the rest).
int64_t gridFor(int64_t threads, int64_t block) {
  return std::clamp<int64_t>((threads + block - 1) / block, 1, kGpuMaxGrid);
}

/// The first global thread id and the grid-stride: blockIdx.x * blockDim.x +
/// threadIdx.x and gridDim.x * blockDim.x, with the block size a constant
/// (the launch uses the recorded one).
std::pair<Value, Value> globalThread(KernelBuilder &kb, int64_t blockSize) {
  Value block = kb.index(blockSize);
  Value blockStart =
      kb.builder.create<arith::MulIOp>(kb.loc, kb.blockId(), block);
  Value first =
      kb.builder.create<arith::AddIOp>(kb.loc, blockStart, kb.threadId());
  Value step = kb.builder.create<arith::MulIOp>(kb.loc, kb.gridDim(), block);
  return {first, step};
}

FailureOr<LaunchShape> emitLinalgKernel(KernelBuilder &kb,
                                        linalg::LinalgOp op) {
  FailureOr<SmallVector<int64_t>> ranges = getStaticRanges(op);
  if (failed(ranges))
    return failure();
  // Points whose writes may collide (an output that drops a parallel
  // loop): only the CPU's order is right.
  if (!hasIndependentParallelPoints(op)) {
    emitInThreadZero(kb, [&] { emitSerialOp(kb, op, *ranges); });
    return LaunchShape{1, kGpuSingleThreadBlock};
  }
  if (op.getNumReductionLoops() == 0)
    return emitElementwise(
        kb, *ranges, [&](ValueRange ivs) { emitLinalgPoint(kb, op, ivs); });
  FailureOr<LaunchShape> row = emitRowReduction(kb, op, *ranges);
  if (succeeded(row))
    return row;
  SmallVector<unsigned> parallel;
  op.getParallelDims(parallel);
  SmallVector<int64_t> parallelRanges;
  for (unsigned dim : parallel)
    parallelRanges.push_back((*ranges)[dim]);
  int64_t points = computeProduct(parallelRanges);
  int64_t block = blockFor(points);
  auto [first, step] = globalThread(kb, block);
  emitParallelPoints(kb, op, *ranges, first, step);
  return LaunchShape{gridFor(points, block), block};
}

} // namespace

/// One thread per point of an all-parallel op or copy, the linear id over
/// the points with the innermost loop fastest.
LaunchShape emitElementwise(KernelBuilder &kb, ArrayRef<int64_t> ranges,
                            function_ref<void(ValueRange)> point) {
  int64_t total = computeProduct(ranges);
  int64_t block = blockFor(total);
  auto [first, step] = globalThread(kb, block);
  emitLoop(kb, first, kb.index(total), step,
           [&](Value linear) { point(delinearize(kb, linear, ranges)); });
  return {gridFor(total, block), block};
}

FailureOr<LaunchShape> emitParallelLoop(KernelBuilder &kb,
                                        scf::ParallelOp parallel) {
  SmallVector<int64_t> ranges;
  for (auto [lower, upper, step] :
       llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                 parallel.getStep())) {
    std::optional<int64_t> low = getConstantIntValue(lower);
    std::optional<int64_t> high = getConstantIntValue(upper);
    std::optional<int64_t> stride = getConstantIntValue(step);
    if (!low || !high || !stride || *low != 0 || *stride != 1)
      return parallel.emitError("a parallel loop without constant bounds "
                                "from 0 in unit steps has no GPU mapping");
    ranges.push_back(*high);
  }
  if (parallel.getNumResults() > 0)
    return parallel.emitError("a parallel loop with results has no GPU "
                              "mapping");
  return emitElementwise(kb, ranges, [&](ValueRange ivs) {
    for (auto [iv, coordinate] : llvm::zip(parallel.getInductionVars(), ivs))
      kb.mapping.map(iv, coordinate);
    for (Operation &op : parallel.getBody()->without_terminator())
      kb.builder.clone(op, kb.mapping);
  });
}

void emitParallelPoints(KernelBuilder &kb, linalg::LinalgOp op,
                        ArrayRef<int64_t> ranges, Value first, Value step) {
  SmallVector<unsigned> parallel, reduction;
  op.getParallelDims(parallel);
  op.getReductionDims(reduction);
  SmallVector<int64_t> parallelRanges;
  for (unsigned dim : parallel)
    parallelRanges.push_back(ranges[dim]);
  emitLoop(kb, first, kb.index(computeProduct(parallelRanges)), step,
           [&](Value linear) {
             SmallVector<Value> ivs(ranges.size());
             for (auto [dim, iv] :
                  llvm::zip(parallel, delinearize(kb, linear, parallelRanges)))
               ivs[dim] = iv;
             emitSerialLoops(kb, ranges, reduction, ivs,
                             [&] { emitLinalgPoint(kb, op, ivs); });
           });
}

void emitSerialOp(KernelBuilder &kb, linalg::LinalgOp op,
                  ArrayRef<int64_t> ranges) {
  SmallVector<unsigned> dims;
  for (unsigned dim = 0; dim < ranges.size(); ++dim)
    dims.push_back(dim);
  SmallVector<Value> ivs(ranges.size());
  emitSerialLoops(kb, ranges, dims, ivs, [&] { emitLinalgPoint(kb, op, ivs); });
}

FailureOr<LaunchShape> emitKernelWork(KernelBuilder &kb, Operation *work) {
  if (auto op = dyn_cast<linalg::LinalgOp>(work))
    return emitLinalgKernel(kb, op);
  if (auto copy = dyn_cast<memref::CopyOp>(work)) {
    auto type = cast<MemRefType>(copy.getTarget().getType());
    if (!type.hasStaticShape())
      return copy.emitError("a dynamic copy has no GPU mapping");
    return emitElementwise(kb, type.getShape(), [&](ValueRange ivs) {
      emitCopyPoint(kb, copy, ivs);
    });
  }
  if (auto parallel = dyn_cast<scf::ParallelOp>(work))
    return emitParallelLoop(kb, parallel);
  if (auto pass = dyn_cast<mdlrt::AttentionPassOp>(work))
    return emitAttentionPass(kb, pass);
  if (auto scatter = dyn_cast<mdlrt::RowScatterAddOp>(work))
    return emitRowScatterAdd(kb, scatter);
  if (work->getNumRegions() > 0) {
    if (failed(emitBlockKernel(kb, work)))
      return failure();
    return LaunchShape{1, kGpuBlockSize};
  }
  // A scalar store, or another op with side effects: one thread.
  if (work->getNumResults() > 0)
    return work->emitError("an op with results has no GPU mapping as the "
                           "work of a kernel");
  emitInThreadZero(kb, [&] { kb.builder.clone(*work, kb.mapping); });
  return LaunchShape{1, kGpuSingleThreadBlock};
}

} // namespace modelc
