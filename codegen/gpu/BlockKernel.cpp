// A region op as the work of a kernel (an scf.for scatter-add, a loop over
// tokens with a row update in it): one block of threads runs it. Scalar
// code, loops and reads run in every thread, so all threads take the same
// path; each nested linalg op or copy is spread over the block's threads;
// any other op with side effects runs in thread 0. A barrier before and
// after each of these writes keeps the threads' reads and writes in the
// CPU's order.
#include "codegen/gpu/GpuLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace modelc {

namespace {

/// Whether `op` (without its regions) may write memory: a write, an
/// allocation or a free, or effects it does not declare.
bool mayWrite(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
  return !effects.onlyHasEffect<MemoryEffects::Read>() &&
         !effects.hasNoEffect();
}

/// Spreads a linalg op or a copy nested in the block kernel over the
/// block's threads (one point each, strided by the block size), or runs it
/// in thread 0 when its points may write the same element.
LogicalResult spreadOverBlock(KernelBuilder &kb, Operation *op) {
  Value first = kb.threadId();
  Value step = kb.index(kGpuBlockSize);
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    auto type = cast<MemRefType>(copy.getTarget().getType());
    if (!type.hasStaticShape())
      return copy.emitError("a dynamic copy has no GPU mapping");
    emitLoop(
        kb, first, kb.index(type.getNumElements()), step, [&](Value linear) {
          emitCopyPoint(kb, copy, delinearize(kb, linear, type.getShape()));
        });
    return success();
  }
  auto linalgOp = cast<linalg::LinalgOp>(op);
  FailureOr<SmallVector<int64_t>> ranges = getStaticRanges(linalgOp);
  if (failed(ranges))
    return failure();
  if (!hasIndependentParallelPoints(linalgOp)) {
    emitInThreadZero(kb, [&] { emitSerialOp(kb, linalgOp, *ranges); });
    return success();
  }
  emitParallelPoints(kb, linalgOp, *ranges, first, step);
  return success();
}

/// Drops each barrier that directly follows another.
void removeRepeatedBarriers(Operation *root) {
  SmallVector<gpu::BarrierOp> barriers;
  root->walk([&](gpu::BarrierOp barrier) { barriers.push_back(barrier); });
  for (gpu::BarrierOp barrier : barriers)
    if (Operation *previous = barrier->getPrevNode();
        isa_and_nonnull<gpu::BarrierOp>(previous))
      barrier.erase();
}

} // namespace

void emitInThreadZero(KernelBuilder &kb, function_ref<void()> body) {
  Value isZero = kb.builder.create<arith::CmpIOp>(
      kb.loc, arith::CmpIPredicate::eq, kb.threadId(), kb.index(0));
  auto ifOp = kb.builder.create<scf::IfOp>(kb.loc, isZero);
  OpBuilder::InsertionGuard guard(kb.builder);
  kb.builder.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  body();
}

LogicalResult emitBlockKernel(KernelBuilder &kb, Operation *work) {
  Operation *root = kb.builder.clone(*work, kb.mapping);
  SmallVector<Operation *> spread, serial;
  WalkResult walk = root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<linalg::LinalgOp, memref::CopyOp>(op)) {
      spread.push_back(op);
      return WalkResult::skip();
    }
    if (op->getNumRegions() > 0 || op->hasTrait<OpTrait::IsTerminator>() ||
        !mayWrite(op))
      return WalkResult::advance();
    if (op->getNumResults() > 0) {
      op->emitError("an op with side effects and results has no GPU mapping "
                    "inside a loop");
      return WalkResult::interrupt();
    }
    serial.push_back(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  OpBuilder::InsertionGuard guard(kb.builder);
  for (Operation *op : spread) {
    kb.builder.setInsertionPoint(op);
    KernelBuilder nested{kb.builder, op->getLoc(), kb.mapping};
    kb.builder.create<gpu::BarrierOp>(op->getLoc());
    if (failed(spreadOverBlock(nested, op)))
      return failure();
    kb.builder.create<gpu::BarrierOp>(op->getLoc());
    op->erase();
  }
  for (Operation *op : serial) {
    kb.builder.setInsertionPoint(op);
    KernelBuilder nested{kb.builder, op->getLoc(), kb.mapping};
    kb.builder.create<gpu::BarrierOp>(op->getLoc());
    emitInThreadZero(nested, [&] {
      op->moveBefore(kb.builder.getInsertionBlock(),
                     kb.builder.getInsertionPoint());
    });
    kb.builder.setInsertionPointAfter(op->getParentOp());
    kb.builder.create<gpu::BarrierOp>(op->getLoc());
  }
  removeRepeatedBarriers(root);
  return success();
}

} // namespace modelc
