// The byte ranges of ArenaRanges.h: a memref's elements bounded by the
// static layout of some memref on its view chain, shifted by the byte offset
// of the memref.view that cuts it out of the arena.
#include "codegen/memory/ArenaRanges.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace modelc {

namespace {

/// The bytes a memref of static shape and layout addresses, relative to its
/// aligned pointer (which every view op but memref.view keeps). Booleans
/// take a byte each, as LLVM stores i1.
std::optional<ArenaRange> getStaticExtent(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.hasStaticShape() ||
      !type.getElementType().isIntOrIndexOrFloat() ||
      type.getElementType().isIndex())
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  int64_t elementBytes =
      (type.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  if (type.getNumElements() == 0)
    return ArenaRange{offset * elementBytes, offset * elementBytes};
  int64_t first = offset, last = offset;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides))
    (stride < 0 ? first : last) += (size - 1) * stride;
  return ArenaRange{first * elementBytes, (last + 1) * elementBytes};
}

} // namespace

std::optional<ArenaRange> getArenaRange(Value memref, Value arena) {
  // The most derived static memref bounds the elements best; every view op
  // but reinterpret_cast addresses a subset of its source, so a static
  // ancestor bounds a dynamic view too.
  std::optional<ArenaRange> extent;
  Value value = memref;
  while (true) {
    if (!extent)
      extent = getStaticExtent(value);
    if (value == arena)
      return extent;
    Operation *def = value.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      if (view.getSource() != arena || !shift || !extent)
        return std::nullopt;
      return ArenaRange{*shift + extent->begin, *shift + extent->end};
    }
    if (isa<memref::ReinterpretCastOp>(def) && !extent)
      return std::nullopt;
    // memref.transpose is a view without the view interface in MLIR 19.
    if (auto transpose = dyn_cast<memref::TransposeOp>(def)) {
      value = transpose.getIn();
      continue;
    }
    auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
    if (!viewLike)
      return std::nullopt;
    value = viewLike.getViewSource();
  }
}

std::optional<SmallVector<ArenaRange>> getWrittenArenaRanges(Operation *op,
                                                             Value arena) {
  SmallVector<ArenaRange> ranges;
  WalkResult walk = op->walk([&](Operation *nested) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects)
      return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &instance : instances) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(instance.getEffect()))
        continue;
      Value written = instance.getValue();
      std::optional<ArenaRange> range =
          written ? getArenaRange(written, arena) : std::nullopt;
      if (!range)
        return WalkResult::interrupt();
      if (auto type = dyn_cast<MemRefType>(written.getType()))
        range->element = type.getElementType();
      ranges.push_back(*range);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return ranges;
}

} // namespace modelc
