// --mdl-elide-copies: an elementwise generic that writes a temporary only to
// copy it into another memref writes that memref instead (Passes.td).
#include "codegen/Passes.h"
#include "codegen/memory/MemRefAliases.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace modelc {
#define GEN_PASS_DEF_MDLELIDECOPIES
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

/// Whether `op` (or an op nested in it) has a memref operand that may share
/// memory with `target`.
bool touches(Operation *op, Value target) {
  WalkResult found = op->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          modelc::mayAlias(operand, target))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// The elementwise generic that writes all of `temp`, a fresh allocation
/// used only by it, by `copy` and by deallocations, when it may write
/// `copy`'s target instead; null otherwise.
linalg::GenericOp findProducer(memref::CopyOp copy) {
  Value temp = copy.getSource(), target = copy.getTarget();
  auto alloc = temp.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != copy->getBlock() ||
      cast<MemRefType>(temp.getType()).getShape() !=
          cast<MemRefType>(target.getType()).getShape())
    return {};
  linalg::GenericOp producer;
  for (Operation *user : temp.getUsers()) {
    if (user == copy || isa<memref::DeallocOp>(user))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || producer)
      return {};
    producer = generic;
  }
  if (!producer || producer->getBlock() != copy->getBlock() ||
      !producer->isBeforeInBlock(copy) ||
      producer.getNumLoops() != producer.getNumParallelLoops())
    return {};
  // `temp` is one init, written at every point (identity map) and not read.
  OpOperand *written = nullptr;
  for (OpOperand &operand : producer->getOpOperands()) {
    if (operand.get() != temp)
      continue;
    if (written || !producer.isDpsInit(&operand))
      return {};
    written = &operand;
  }
  if (!written || !producer.getMatchingIndexingMap(written).isIdentity() ||
      !producer.getMatchingBlockArgument(written).use_empty())
    return {};
  // What else the generic reads or writes of `target`: only `target`
  // itself, element for element where it will write it.
  for (OpOperand &operand : producer->getOpOperands()) {
    if (&operand == written || !modelc::mayAlias(operand.get(), target))
      continue;
    if (operand.get() != target || !producer.isDpsInput(&operand) ||
        !producer.getMatchingIndexingMap(&operand).isIdentity())
      return {};
  }
  // `target` exists before the generic, and nothing in between uses it.
  if (Operation *def = target.getDefiningOp())
    if (def->getBlock() == copy->getBlock() && producer->isBeforeInBlock(def))
      return {};
  for (Operation *op = producer->getNextNode(); op != copy;
       op = op->getNextNode())
    if (touches(op, target))
      return {};
  return producer;
}

struct MdlElideCopiesPass
    : modelc::impl::MdlElideCopiesBase<MdlElideCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (isa<func::FuncOp>(copy->getParentOp()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      linalg::GenericOp producer = findProducer(copy);
      if (!producer)
        continue;
      Value temp = copy.getSource();
      producer->replaceUsesOfWith(temp, copy.getTarget());
      copy.erase();
      for (Operation *user : llvm::make_early_inc_range(temp.getUsers()))
        user->erase(); // deallocations
      temp.getDefiningOp()->erase();
    }
  }
};

} // namespace
