// The row form of a reduction: `out = combine(out, f(ins))` with a known
// combiner and the innermost loop a reduction becomes one warp per point of
// the parallel loops. Each lane folds a strided share of the (flattened)
// reduction loops into a partial that starts at the combiner's identity, a
// butterfly of `gpu.shuffle xor` combines the 32 partials, and lane 0 stores
// combine(out, total): the value the CPU computes, up to the order of the
// combination. A reduction whose fill was folded into it (ReductionInit.h)
// stores combine(init, total) without reading the output.
#include "codegen/gpu/GpuLowering.h"
#include "codegen/linalg/ReductionInit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace modelc {

namespace {

/// The neutral element of `combiner` for `type`: combine(identity, x) = x
/// for every x (NaN for maxnumf/minnumf, which ignore a NaN operand; -0 for
/// addf, since -0 + x = x keeps the sign of a zero x).
std::optional<TypedAttr> getIdentity(Operation *combiner, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    std::optional<APFloat> value =
        llvm::TypeSwitch<Operation *, std::optional<APFloat>>(combiner)
            .Case([&](arith::AddFOp) {
              return APFloat::getZero(semantics, true);
            })
            .Case([&](arith::MulFOp) { return APFloat::getOne(semantics); })
            .Case([&](arith::MaximumFOp) {
              return APFloat::getInf(semantics, true);
            })
            .Case([&](arith::MinimumFOp) { return APFloat::getInf(semantics); })
            .Case<arith::MaxNumFOp, arith::MinNumFOp>(
                [&](Operation *) { return APFloat::getQNaN(semantics); })
            .Default([](Operation *) { return std::nullopt; });
    if (!value)
      return std::nullopt;
    return FloatAttr::get(floatType, *value);
  }
  auto intType = dyn_cast<IntegerType>(type);
  if (!intType)
    return std::nullopt;
  unsigned width = intType.getWidth();
  std::optional<APInt> value =
      llvm::TypeSwitch<Operation *, std::optional<APInt>>(combiner)
          .Case<arith::AddIOp, arith::OrIOp, arith::XOrIOp, arith::MaxUIOp>(
              [&](Operation *) { return APInt::getZero(width); })
          .Case([&](arith::MulIOp) { return APInt(width, 1); })
          .Case([&](arith::MaxSIOp) { return APInt::getSignedMinValue(width); })
          .Case([&](arith::MinSIOp) { return APInt::getSignedMaxValue(width); })
          .Case<arith::MinUIOp, arith::AndIOp>(
              [&](Operation *) { return APInt::getAllOnes(width); })
          .Default([](Operation *) { return std::nullopt; });
  if (!value)
    return std::nullopt;
  return IntegerAttr::get(intType, *value);
}

/// `out = combine(out, x)` (or `combine(x, out)`) as the whole use of the
/// output in the body: the combiner, and whether `out` is its first operand.
/// With a folded fill, `select(first, init, out)` stands for `out`.
struct RowCombiner {
  Operation *op;
  bool outFirst;
  TypedAttr identity;
  std::optional<FirstIterationInit> folded;
};

std::optional<RowCombiner> matchCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumLoops() == 0 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  if (!isa<MemRefType>(init->get().getType()))
    return std::nullopt;
  BlockArgument out = op.getMatchingBlockArgument(init);
  std::optional<FirstIterationInit> folded = matchFirstIterationInit(op, out);
  Value accumulator = folded ? folded->select->getResult(0) : Value(out);
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  Value result = yield.getValues().front();
  Operation *combiner = result.getDefiningOp();
  if (!combiner || combiner->getBlock() != op.getBlock() ||
      combiner->getNumOperands() != 2 || combiner->getNumResults() != 1 ||
      !result.hasOneUse() || !accumulator.hasOneUse() ||
      *accumulator.getUsers().begin() != combiner ||
      combiner->getOperand(0) == combiner->getOperand(1))
    return std::nullopt;
  std::optional<TypedAttr> identity = getIdentity(combiner, out.getType());
  if (!identity || result.getType() != out.getType())
    return std::nullopt;
  return RowCombiner{combiner, combiner->getOperand(0) == accumulator,
                     *identity, folded};
}

/// combine(lhs, rhs) with the combiner's attributes (fastmath flags).
Value combine(KernelBuilder &kb, Operation *combiner, Value lhs, Value rhs) {
  IRMapping operands;
  operands.map(combiner->getOperand(0), lhs);
  operands.map(combiner->getOperand(1), rhs);
  return kb.builder.clone(*combiner, operands)->getResult(0);
}

/// The value of `value` in lane (lane ^ offset): 32-bit values as they are,
/// narrower ones widened, 64-bit ones as two halves (nvvm.shfl moves 32).
Value shuffleXor(KernelBuilder &kb, Value value, int32_t offset) {
  OpBuilder &b = kb.builder;
  Type type = value.getType();
  unsigned width = type.getIntOrFloatBitWidth();
  auto shuffle32 = [&](Value word) {
    return b
        .create<gpu::ShuffleOp>(kb.loc, word, offset, kGpuWarpSize,
                                gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  if (type.isF32() || type.isInteger(32))
    return shuffle32(value);
  Type i32 = b.getI32Type();
  Type bits = b.getIntegerType(width);
  Value raw = isa<FloatType>(type)
                  ? b.create<arith::BitcastOp>(kb.loc, bits, value).getResult()
                  : value;
  Value shuffled;
  if (width < 32) {
    Value wide = b.create<arith::ExtUIOp>(kb.loc, i32, raw);
    shuffled = b.create<arith::TruncIOp>(kb.loc, bits, shuffle32(wide));
  } else {
    Value low = shuffle32(b.create<arith::TruncIOp>(kb.loc, i32, raw));
    Value high = shuffle32(b.create<arith::TruncIOp>(
        kb.loc, i32,
        b.create<arith::ShRUIOp>(
            kb.loc, raw, b.create<arith::ConstantIntOp>(kb.loc, 32, width))));
    shuffled = b.create<arith::OrIOp>(
        kb.loc,
        b.create<arith::ShLIOp>(
            kb.loc, b.create<arith::ExtUIOp>(kb.loc, bits, high),
            b.create<arith::ConstantIntOp>(kb.loc, 32, width)),
        b.create<arith::ExtUIOp>(kb.loc, bits, low));
  }
  return isa<FloatType>(type)
             ? b.create<arith::BitcastOp>(kb.loc, type, shuffled).getResult()
             : shuffled;
}

} // namespace

FailureOr<LaunchShape> emitRowReduction(KernelBuilder &kb, linalg::LinalgOp op,
                                        ArrayRef<int64_t> ranges) {
  std::optional<RowCombiner> row = matchCombiner(op);
  if (!row || !hasIndependentParallelPoints(op))
    return failure();
  OpBuilder &b = kb.builder;
  SmallVector<unsigned> parallel, reduction;
  op.getParallelDims(parallel);
  op.getReductionDims(reduction);
  SmallVector<int64_t> parallelRanges, reductionRanges;
  for (unsigned dim : parallel)
    parallelRanges.push_back(ranges[dim]);
  for (unsigned dim : reduction)
    reductionRanges.push_back(ranges[dim]);
  int64_t rows = computeProduct(parallelRanges);
  // Up to kGpuBlockSize / kGpuWarpSize warps per block, fewer for fewer rows.
  int64_t warpsPerBlock =
      std::clamp<int64_t>(rows, 1, kGpuBlockSize / kGpuWarpSize);

  Value warpSize = kb.index(kGpuWarpSize);
  Value thread = kb.threadId();
  Value lane = b.create<arith::RemUIOp>(kb.loc, thread, warpSize);
  Value warpInBlock = b.create<arith::DivUIOp>(kb.loc, thread, warpSize);
  Value blockStart =
      b.create<arith::MulIOp>(kb.loc, kb.blockId(), kb.index(warpsPerBlock));
  Value firstWarp = b.create<arith::AddIOp>(kb.loc, blockStart, warpInBlock);
  Value warpStep =
      b.create<arith::MulIOp>(kb.loc, kb.gridDim(), kb.index(warpsPerBlock));
  Block *body = op.getBlock();
  BlockArgument out = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  Value combinerInput = row->op->getOperand(row->outFirst ? 1 : 0);

  // All lanes of a warp take the same rows, so the shuffles see the whole
  // warp.
  emitLoop(kb, firstWarp, kb.index(rows), warpStep, [&](Value rowIndex) {
    SmallVector<Value> ivs(ranges.size());
    for (auto [dim, iv] :
         llvm::zip(parallel, delinearize(kb, rowIndex, parallelRanges)))
      ivs[dim] = iv;
    Value identity = b.create<arith::ConstantOp>(kb.loc, row->identity);
    auto lanes = b.create<scf::ForOp>(kb.loc, lane,
                                      kb.index(computeProduct(reductionRanges)),
                                      warpSize, ValueRange{identity});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(lanes.getBody());
      SmallVector<Value> pointIvs = ivs;
      for (auto [dim, iv] :
           llvm::zip(reduction,
                     delinearize(kb, lanes.getInductionVar(), reductionRanges)))
        pointIvs[dim] = iv;
      IRMapping payload = kb.mapping;
      mapPayloadArguments(kb, op, pointIvs, payload, out);
      for (Operation &inner : body->without_terminator())
        if (&inner != row->op && !isa<linalg::IndexOp>(inner) &&
            (!row->folded || &inner != row->folded->select))
          b.clone(inner, payload);
      Value x = payload.lookupOrDefault(combinerInput);
      Value partial = lanes.getRegionIterArg(0);
      b.create<scf::YieldOp>(kb.loc, row->outFirst
                                         ? combine(kb, row->op, partial, x)
                                         : combine(kb, row->op, x, partial));
    }
    Value total = lanes.getResult(0);
    for (int32_t offset = kGpuWarpSize / 2; offset > 0; offset /= 2)
      total = combine(kb, row->op, total, shuffleXor(kb, total, offset));

    Value isLaneZero = b.create<arith::CmpIOp>(kb.loc, arith::CmpIPredicate::eq,
                                               lane, kb.index(0));
    auto ifOp = b.create<scf::IfOp>(kb.loc, isLaneZero);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    // The output map reads only parallel loops: the reduction ones may be
    // anything.
    for (unsigned dim : reduction)
      ivs[dim] = kb.index(0);
    OpOperand *init = op.getDpsInitOperand(0);
    AffineMap map = op.getMatchingIndexingMap(init);
    SmallVector<Value> indices;
    for (AffineExpr expr : map.getResults())
      indices.push_back(ivs[cast<AffineDimExpr>(expr).getPosition()]);
    Value target = kb.mapping.lookupOrDefault(init->get());
    Value initial =
        row->folded
            ? kb.mapping.lookupOrDefault(row->folded->init)
            : b.create<memref::LoadOp>(kb.loc, target, indices).getResult();
    Value result = row->outFirst ? combine(kb, row->op, initial, total)
                                 : combine(kb, row->op, total, initial);
    b.create<memref::StoreOp>(kb.loc, result, target, indices);
  });
  return LaunchShape{
      std::clamp<int64_t>((rows + warpsPerBlock - 1) / warpsPerBlock, 1,
                          kGpuMaxGrid),
      warpsPerBlock * kGpuWarpSize};
}

} // namespace modelc
