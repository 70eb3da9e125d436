// The launch arguments of KernelArguments.h: a call's operands traced to
// byte offsets in the arena, and a kernel's writes moved from its
// arguments into the arena.
#include "codegen/memory/KernelArguments.h"
#include "codegen/memory/KernelForm.h"

#include "dialects/mdlrt/MdlrtOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace modelc {

int64_t getBufferBytes(MemRefType type) {
  Type element = type.getElementType();
  int64_t elementBytes =
      element.isIntOrFloat() ? (element.getIntOrFloatBitWidth() + 7) / 8 : 8;
  return type.getNumElements() * elementBytes;
}

std::optional<SmallVector<LaunchArgument>> getLaunchArguments(func::CallOp call,
                                                              Value arena) {
  SmallVector<LaunchArgument> arguments;
  for (Value operand : call.getOperands()) {
    if (operand.getType().isInteger(64)) {
      auto constant = operand.getDefiningOp<mdlrt::LaunchConstantOp>();
      if (!constant)
        return std::nullopt;
      arguments.push_back(
          {LaunchArgument::Kind::Scalar, int64_t(constant.getValue()), 8});
      continue;
    }
    if (!isBarePointerMemRef(operand.getType()))
      return std::nullopt;
    std::optional<ArenaRange> range = getArenaRange(operand, arena);
    if (!range)
      return std::nullopt;
    // An identity layout starts at its aligned pointer: the range's first
    // byte is the offset of the pointer the kernel gets.
    arguments.push_back({LaunchArgument::Kind::Buffer, range->begin,
                         getBufferBytes(cast<MemRefType>(operand.getType()))});
  }
  return arguments;
}

void materializeLaunchConstants(Operation *root) {
  root->walk([](mdlrt::LaunchConstantOp constant) {
    OpBuilder builder(constant);
    constant.replaceAllUsesWith(
        builder
            .create<arith::ConstantOp>(constant.getLoc(),
                                       constant.getValueAttr())
            .getResult());
    constant.erase();
  });
}

std::optional<SmallVector<ArgumentWrite>> getKernelWrites(func::FuncOp kernel) {
  Block &body = kernel.getBody().front();
  SmallVector<ArgumentWrite> writes;
  for (Operation &op : body) {
    std::optional<SmallVector<BasedRange>> ranges = getWrittenBasedRanges(&op);
    if (!ranges)
      return std::nullopt;
    for (const BasedRange &range : *ranges) {
      auto argument = dyn_cast<BlockArgument>(range.base);
      if (!argument || argument.getOwner() != &body)
        return std::nullopt;
      writes.push_back({argument.getArgNumber(), range.range});
    }
  }
  return writes;
}

SmallVector<ArenaRange> placeWrites(ArrayRef<ArgumentWrite> writes,
                                    ArrayRef<LaunchArgument> arguments) {
  SmallVector<ArenaRange> ranges;
  for (const ArgumentWrite &write : writes) {
    int64_t base = arguments[write.argument].value;
    ranges.push_back({base + write.range.begin, base + write.range.end,
                      write.range.element});
  }
  return ranges;
}

} // namespace modelc
