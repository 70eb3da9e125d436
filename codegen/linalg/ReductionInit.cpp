// The folded initialisation of a reduction (ReductionInit.h).
#include "codegen/linalg/ReductionInit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace modelc {

namespace {

/// Adds to `dims` the loops whose index `condition` compares to 0, through
/// a tree of `andi`; false when it is anything else.
bool collectZeroIndexTests(Value condition, llvm::SmallBitVector &dims) {
  Operation *def = condition.getDefiningOp();
  if (auto both = dyn_cast_or_null<arith::AndIOp>(def))
    return collectZeroIndexTests(both.getLhs(), dims) &&
           collectZeroIndexTests(both.getRhs(), dims);
  auto compare = dyn_cast_or_null<arith::CmpIOp>(def);
  if (!compare || compare.getPredicate() != arith::CmpIPredicate::eq)
    return false;
  auto index = compare.getLhs().getDefiningOp<linalg::IndexOp>();
  std::optional<int64_t> zero = getConstantIntValue(compare.getRhs());
  if (!index || !zero || *zero != 0 || index.getDim() >= dims.size())
    return false;
  dims.set(index.getDim());
  return true;
}

} // namespace

LogicalResult foldFillIntoReduction(RewriterBase &rewriter,
                                    linalg::GenericOp op, OpOperand &init) {
  auto fill = init.get().getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.hasPureTensorSemantics() || !fill->hasOneUse() ||
      op.getNumReductionLoops() == 0 || !op.isDpsInit(&init))
    return failure();
  BlockArgument out = op.getMatchingBlockArgument(&init);
  if (out.use_empty())
    return failure();
  Location loc = op.getLoc();
  Value value = fill.getInputs().front();
  // The fill's destination: what it holds is never read now.
  Value destination = fill.getOutputs().front();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(op.getBlock());
  Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
  Value first;
  SmallVector<unsigned> reductionDims;
  op.getReductionDims(reductionDims);
  for (unsigned dim : reductionDims) {
    Value index = rewriter.create<linalg::IndexOp>(loc, dim);
    Value atZero = rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                  index, zero);
    first = first ? rewriter.create<arith::AndIOp>(loc, first, atZero) : atZero;
  }
  Value accumulator = rewriter.create<arith::SelectOp>(loc, first, value, out);
  rewriter.replaceAllUsesExcept(out, accumulator, accumulator.getDefiningOp());
  rewriter.modifyOpInPlace(op, [&] { init.set(destination); });
  rewriter.eraseOp(fill);
  return success();
}

std::optional<FirstIterationInit> matchFirstIterationInit(linalg::LinalgOp op,
                                                          BlockArgument out) {
  if (!out.hasOneUse())
    return std::nullopt;
  auto select = dyn_cast<arith::SelectOp>(*out.getUsers().begin());
  if (!select || select.getFalseValue() != out || select.getTrueValue() == out)
    return std::nullopt;
  // The start value comes from outside the body.
  Value init = select.getTrueValue();
  if (op->isAncestor(init.getParentRegion()->getParentOp()))
    return std::nullopt;
  llvm::SmallBitVector tested(op.getNumLoops());
  if (!collectZeroIndexTests(select.getCondition(), tested))
    return std::nullopt;
  llvm::SmallBitVector reductions(op.getNumLoops());
  SmallVector<unsigned> reductionDims;
  op.getReductionDims(reductionDims);
  for (unsigned dim : reductionDims)
    reductions.set(dim);
  if (tested != reductions)
    return std::nullopt;
  return FirstIterationInit{select, init};
}

} // namespace modelc
