// --mdl-fuse-elementwise: chains of elementwise linalg.generic ops on tensors
// become one generic (Passes.td), through upstream's elementwise fusion
// with a control that keeps the arithmetic of every element as it was; then
// the fill that initialises a reduction's output goes into the reduction
// (ReductionInit.h).
#include "codegen/Passes.h"
#include "codegen/linalg/ReductionInit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace modelc {
#define GEN_PASS_DEF_MDLFUSEELEMENTWISE
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

bool isElementwise(linalg::GenericOp op) {
  return op.getNumLoops() == op.getNumParallelLoops() && op.getNumLoops() > 0;
}

/// Fuses producer into consumer through `operand` only when the producer is
/// all-parallel with its one result used once, and the consumer (elementwise
/// or a reduction) reads it element for element as an input: each element
/// is then computed once, in the consumer's loop order.
bool isElementwiseChain(OpOperand *operand) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!producer || !consumer || producer->getNumResults() != 1 ||
      !producer->hasOneUse() || !isElementwise(producer) ||
      !consumer.isDpsInput(operand))
    return false;
  return consumer.getMatchingIndexingMap(operand).isPermutation();
}

/// A reduction whose init is a linalg.fill it alone uses starts from the
/// fill's value instead (ReductionInit.h).
struct FoldFillIntoReduction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &init : op.getDpsInitsMutable())
      if (succeeded(modelc::foldFillIntoReduction(rewriter, op, init)))
        return success();
    return failure();
  }
};

struct MdlFuseElementwisePass
    : modelc::impl::MdlFuseElementwiseBase<MdlFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, isElementwiseChain);
    patterns.add<FoldFillIntoReduction>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    GreedyRewriteConfig config;
    // Only the fusion itself: no region simplification on the way.
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    // Not inside loops: the bodies of the time loops (lstm_scan) write
    // their carried tensors in place through generics whose `outs` they do
    // not read, which the fusion patterns would replace by fresh tensors
    // (an allocation per step, and no longer in place).
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      for (bool changed = true; changed;) {
        SmallVector<Operation *> ops;
        func.walk([&](linalg::GenericOp op) {
          if (!op->getParentOfType<scf::ForOp>())
            ops.push_back(op);
        });
        if (failed(applyOpPatternsAndFold(ops, frozen, config, &changed)))
          return signalPassFailure();
      }
    }
  }
};

} // namespace
