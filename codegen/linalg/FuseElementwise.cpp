// --mdl-fuse-elementwise: a reduction computed twice is computed once; then
// chains of elementwise linalg.generic ops on tensors
// become one generic (Passes.td), through upstream's elementwise fusion
// with a control that keeps the arithmetic of every element as it was (an
// expand_shape between two of them moved out of the way first); then
// the fill that initialises a reduction's output goes into the reduction
// (ReductionInit.h).
#include "codegen/Passes.h"
#include "codegen/linalg/ReductionInit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace modelc {
#define GEN_PASS_DEF_MDLFUSEELEMENTWISE
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

bool isElementwise(linalg::GenericOp op) {
  return op.getNumLoops() == op.getNumParallelLoops() && op.getNumLoops() > 0;
}

/// Whether `op`'s body only converts its one input's element to another
/// type (an extf, truncf or other cast): recomputing it is exact and costs
/// one instruction.
bool isConversion(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (op.getNumDpsInputs() != 1 || body.getOperations().size() != 2)
    return false;
  Operation &cast = body.front();
  return isa<CastOpInterface>(cast) && cast.getNumOperands() == 1 &&
         cast.getOperand(0) == body.getArgument(0) &&
         body.getTerminator()->getOperand(0) == cast.getResult(0);
}

/// Fuses producer into consumer through `operand` only when the producer is
/// all-parallel with its one result used once, and the consumer (elementwise
/// or a reduction) reads it element for element as an input: each element
/// is then computed once, in the consumer's loop order. A producer that
/// only converts (a bias rounded to bf16 for its add) also fuses into a
/// consumer that broadcasts it: the conversion is then repeated per use,
/// with the same result each time.
bool isElementwiseChain(OpOperand *operand) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!producer || !consumer || producer->getNumResults() != 1 ||
      !producer->hasOneUse() || !isElementwise(producer) ||
      !consumer.isDpsInput(operand))
    return false;
  AffineMap map = consumer.getMatchingIndexingMap(operand);
  return map.isPermutation() ||
         (isConversion(producer) && map.isProjectedPermutation());
}

/// Moves a tensor.expand_shape of an elementwise generic's result above the
/// generic (the generic computes the expanded shape, reading its inputs
/// through expand_shapes) when the reshape is all that reads the result and
/// one generic all that reads the reshape: the two generics then fuse as
/// above. A GEMM's [m, n] result rounded to 16 bits and then read as
/// [b, t, n] by its bias add is one kernel, not two.
bool isReshapeBetweenElementwise(OpOperand *operand) {
  auto reshape = dyn_cast<tensor::ExpandShapeOp>(operand->getOwner());
  if (!reshape || !reshape->hasOneUse())
    return false;
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(*reshape->user_begin());
  return producer && consumer && producer->getNumResults() == 1 &&
         producer->hasOneUse() && isElementwise(producer) &&
         consumer.isDpsInput(&*reshape->use_begin());
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

/// Whether `a` and `b` are one value, or fresh tensors made alike: empty
/// tensors of one type, one constant, a fill of one value into such.
bool isSameValue(Value a, Value b) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y || a.getType() != b.getType() || x->getName() != y->getName())
    return false;
  if (isa<tensor::EmptyOp>(x))
    return x->getNumOperands() == 0 && y->getNumOperands() == 0;
  if (isa<arith::ConstantOp>(x))
    return x->getAttrDictionary() == y->getAttrDictionary();
  if (auto fillX = dyn_cast<linalg::FillOp>(x)) {
    auto fillY = cast<linalg::FillOp>(y);
    return isSameValue(fillX.getInputs()[0], fillY.getInputs()[0]) &&
           isSameValue(fillX.getOutputs()[0], fillY.getOutputs()[0]);
  }
  return false;
}

/// Whether generic `b` computes what `a` does: the same body and
/// attributes over the same operands (isSameValue).
bool computesSame(linalg::GenericOp a, linalg::GenericOp b) {
  DenseMap<Value, Value> inside;
  return OperationEquivalence::isEquivalentTo(
      a, b,
      [&](Value x, Value y) {
        return success(inside.lookup(x) == y || isSameValue(x, y));
      },
      [&](Value x, Value y) { inside[x] = y; },
      OperationEquivalence::IgnoreLocations);
}

/// A reduction computed again from the same operands, or a generic of
/// several results over such (layer norm's backward recomputing the
/// forward's row sums, mean and rstd), is replaced by its first
/// computation: the statistics are computed once, in the forward, and kept
/// for the backward. Only these: sharing a single-result elementwise
/// generic would give it two users and stop its fusion.
void shareRepeatedReductions(func::FuncOp func) {
  SmallVector<linalg::GenericOp> seen;
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    auto generic = dyn_cast<linalg::GenericOp>(&op);
    if (!generic ||
        (generic.getNumReductionLoops() == 0 && generic->getNumResults() < 2))
      continue;
    auto first = llvm::find_if(seen, [&](linalg::GenericOp earlier) {
      return computesSame(earlier, generic);
    });
    if (first == seen.end()) {
      seen.push_back(generic);
      continue;
    }
    // Its inits (a fill of an empty tensor) die with it: no kernel for them.
    SetVector<Operation *> defs;
    auto addDefs = [&](Operation *op) {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          defs.insert(def);
    };
    addDefs(generic);
    generic->replaceAllUsesWith(*first);
    generic->erase();
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *def : defs) {
        if (!isOpTriviallyDead(def))
          continue;
        addDefs(def);
        defs.remove(def);
        llvm::erase_if(seen, [&](linalg::GenericOp op) { return op == def; });
        def->erase();
        erased = true;
        break;
      }
    }
  }
}

struct MdlFuseElementwisePass
    : modelc::impl::MdlFuseElementwiseBase<MdlFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, isElementwiseChain);
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, isReshapeBetweenElementwise);
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
      if (!func.isExternal())
        shareRepeatedReductions(func);
      for (bool changed = true; changed;) {
        SmallVector<Operation *> ops;
        func.walk([&](Operation *op) {
          if (isa<linalg::GenericOp, tensor::ExpandShapeOp>(op) &&
              !op->getParentOfType<scf::ForOp>())
            ops.push_back(op);
        });
        if (failed(applyOpPatternsAndFold(ops, frozen, config, &changed)))
          return signalPassFailure();
      }
    }
  }
};

} // namespace
