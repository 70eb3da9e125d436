// The loop body of a linalg op at one point of its iteration space, as
// explicit loads, the cloned payload and stores: what every thread mapping
// of --mdl-lower-to-gpu runs per point, and the index helpers they share.
#include "codegen/gpu/GpuLowering.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace modelc {

Value KernelBuilder::index(int64_t value) {
  return builder.create<arith::ConstantIndexOp>(loc, value);
}

Value KernelBuilder::threadId() {
  return builder.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
}

Value KernelBuilder::blockId() {
  return builder.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
}

Value KernelBuilder::gridDim() {
  return builder.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
}

SmallVector<Value> delinearize(KernelBuilder &kb, Value linear,
                               ArrayRef<int64_t> ranges) {
  SmallVector<Value> ivs(ranges.size());
  for (int64_t d = int64_t(ranges.size()) - 1; d >= 0; --d) {
    if (ranges[d] == 1) {
      ivs[d] = kb.index(0);
      continue;
    }
    // The outermost coordinate is what is left: linear < the product.
    if (d == 0) {
      ivs[d] = linear;
      break;
    }
    Value range = kb.index(ranges[d]);
    ivs[d] = kb.builder.create<arith::RemUIOp>(kb.loc, linear, range);
    linear = kb.builder.create<arith::DivUIOp>(kb.loc, linear, range);
  }
  return ivs;
}

FailureOr<SmallVector<int64_t>> getStaticRanges(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return op->emitError("a dynamic iteration space has no GPU mapping");
  return ranges;
}

namespace {

/// The coordinates `map` gives at loop coordinates `ivs`.
SmallVector<Value> applyMap(KernelBuilder &kb, AffineMap map, ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(ivs[dim.getPosition()]);
    else if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      indices.push_back(kb.index(constant.getValue()));
    else
      indices.push_back(kb.builder.create<affine::AffineApplyOp>(
          kb.loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
  }
  return indices;
}

} // namespace

void mapPayloadArguments(KernelBuilder &kb, linalg::LinalgOp op, ValueRange ivs,
                         IRMapping &payload, BlockArgument skip) {
  Block *body = op.getBlock();
  for (OpOperand &operand : op->getOpOperands()) {
    // The payload has an argument per operand, in operand order, except
    // linalg.map's, which has none for its init (a tensor.pad's fill, say):
    // getMatchingBlockArgument would index past its arguments.
    if (operand.getOperandNumber() >= body->getNumArguments())
      continue;
    BlockArgument argument = body->getArgument(operand.getOperandNumber());
    if (argument == skip || argument.use_empty())
      continue;
    Value value = kb.mapping.lookupOrDefault(operand.get());
    if (isa<MemRefType>(value.getType()))
      value = kb.builder.create<memref::LoadOp>(
          kb.loc, value,
          applyMap(kb, op.getMatchingIndexingMap(&operand), ivs));
    payload.map(argument, value);
  }
  for (auto index : body->getOps<linalg::IndexOp>())
    payload.map(index.getResult(), ivs[index.getDim()]);
}

void emitLinalgPoint(KernelBuilder &kb, linalg::LinalgOp op, ValueRange ivs) {
  IRMapping payload = kb.mapping;
  mapPayloadArguments(kb, op, ivs, payload);
  Block *body = op.getBlock();
  for (Operation &inner : body->without_terminator())
    if (!isa<linalg::IndexOp>(inner))
      kb.builder.clone(inner, payload);
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  for (auto [value, init] :
       llvm::zip(yield.getValues(), op.getDpsInitsMutable()))
    kb.builder.create<memref::StoreOp>(
        kb.loc, payload.lookupOrDefault(value),
        kb.mapping.lookupOrDefault(init.get()),
        applyMap(kb, op.getMatchingIndexingMap(&init), ivs));
}

void emitCopyPoint(KernelBuilder &kb, memref::CopyOp copy, ValueRange ivs) {
  Value element = kb.builder.create<memref::LoadOp>(
      kb.loc, kb.mapping.lookupOrDefault(copy.getSource()), ivs);
  kb.builder.create<memref::StoreOp>(
      kb.loc, element, kb.mapping.lookupOrDefault(copy.getTarget()), ivs);
}

bool hasIndependentParallelPoints(linalg::LinalgOp op) {
  SmallVector<unsigned> parallel;
  op.getParallelDims(parallel);
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (!map.isProjectedPermutation() || map.getNumResults() != parallel.size())
      return false;
    for (unsigned dim : parallel)
      if (!map.isFunctionOfDim(dim))
        return false;
    // An input that is the output seen through another map reads what
    // other points write.
    for (OpOperand *input : op.getDpsInputOperands())
      if (input->get() == init.get() && op.getMatchingIndexingMap(input) != map)
        return false;
  }
  return true;
}

void emitLoop(KernelBuilder &kb, Value lb, Value ub, Value step,
              function_ref<void(Value)> body) {
  auto loop = kb.builder.create<scf::ForOp>(kb.loc, lb, ub, step);
  OpBuilder::InsertionGuard guard(kb.builder);
  kb.builder.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

void emitSerialLoops(KernelBuilder &kb, ArrayRef<int64_t> ranges,
                     ArrayRef<unsigned> dims, SmallVectorImpl<Value> &ivs,
                     function_ref<void()> body) {
  if (dims.empty())
    return body();
  unsigned dim = dims.front();
  emitLoop(kb, kb.index(0), kb.index(ranges[dim]), kb.index(1), [&](Value iv) {
    ivs[dim] = iv;
    emitSerialLoops(kb, ranges, dims.drop_front(), ivs, body);
  });
}

} // namespace modelc
