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
  if (!hasStaticLayout(type) ||
      failed(getStridesAndOffset(type, strides, offset)))
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

bool hasStaticLayout(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(type, strides, offset)) &&
         !ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic);
}

std::optional<BasedRange> getBasedRange(Value memref) {
  // The most derived static memref bounds the elements best; every view op
  // but reinterpret_cast addresses a subset of its source, so a static
  // ancestor bounds a dynamic view too. memref.view moves the aligned
  // pointer by its byte shift; every other view op keeps it.
  std::optional<ArenaRange> extent;
  int64_t shift = 0;
  Value value = memref;
  while (true) {
    if (!extent)
      extent = getStaticExtent(value);
    if (isa<BlockArgument>(value)) {
      if (!extent)
        return std::nullopt;
      return BasedRange{value,
                        ArenaRange{shift + extent->begin, shift + extent->end}};
    }
    Operation *def = value.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> byteShift =
          getConstantIntValue(view.getByteShift());
      if (!byteShift || !extent)
        return std::nullopt;
      shift += *byteShift;
      value = view.getSource();
      continue;
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

std::optional<ArenaRange> getArenaRange(Value memref, Value arena) {
  std::optional<BasedRange> based = getBasedRange(memref);
  if (!based || based->base != arena)
    return std::nullopt;
  return based->range;
}

std::optional<SmallVector<BasedRange>> getWrittenBasedRanges(Operation *op) {
  SmallVector<BasedRange> ranges;
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
      std::optional<BasedRange> range =
          written ? getBasedRange(written) : std::nullopt;
      if (!range)
        return WalkResult::interrupt();
      if (auto type = dyn_cast<MemRefType>(written.getType()))
        range->range.element = type.getElementType();
      ranges.push_back(*range);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return ranges;
}

std::optional<SmallVector<ArenaRange>> getWrittenArenaRanges(Operation *op,
                                                             Value arena) {
  std::optional<SmallVector<BasedRange>> based = getWrittenBasedRanges(op);
  if (!based)
    return std::nullopt;
  SmallVector<ArenaRange> ranges;
  for (const BasedRange &range : *based) {
    if (range.base != arena)
      return std::nullopt;
    ranges.push_back(range.range);
  }
  return ranges;
}

} // namespace modelc
