// Elementwise ops: NumPy broadcasting, its verifier, and gelu.
#include "dialects/mdl/MdlOps.h"
#include "dialects/mdl/ShapeRules.h"

using namespace mlir;
using namespace mlir::mdl;

std::optional<SmallVector<int64_t>>
mlir::mdl::inferBroadcastShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  std::optional<std::vector<int64_t>> result =
      modelc::shape_rules::broadcastShapes(lhs.vec(), rhs.vec());
  if (!result)
    return std::nullopt;
  return SmallVector<int64_t>(result->begin(), result->end());
}

Type mlir::mdl::inferBroadcastType(ArrayRef<Value> operands, Type elementType) {
  auto first = cast<RankedTensorType>(operands.front().getType());
  if (!elementType)
    elementType = first.getElementType();
  SmallVector<int64_t> shape(first.getShape());
  for (Value operand : operands.drop_front()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    std::optional<SmallVector<int64_t>> next =
        type ? inferBroadcastShape(shape, type.getShape()) : std::nullopt;
    if (!next)
      return first.clone(elementType);
    shape = std::move(*next);
  }
  return RankedTensorType::get(shape, elementType);
}

LogicalResult mlir::mdl::verifyBroadcastingOp(Operation *op) {
  SmallVector<int64_t> shape;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    ArrayRef<int64_t> operandShape =
        cast<RankedTensorType>(operand.getType()).getShape();
    if (index == 0) {
      shape.assign(operandShape.begin(), operandShape.end());
      continue;
    }
    std::optional<SmallVector<int64_t>> next =
        inferBroadcastShape(shape, operandShape);
    if (!next)
      return op->emitOpError("operands are not broadcast-compatible: ")
             << formatShape(shape) << " and " << formatShape(operandShape)
             << " (operand #" << index << ")";
    shape = std::move(*next);
  }
  ArrayRef<int64_t> resultShape =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  if (resultShape != ArrayRef<int64_t>(shape))
    return op->emitOpError("result shape ")
           << formatShape(resultShape) << " is not the broadcast shape "
           << formatShape(shape) << " of the operands";
  return success();
}

LogicalResult GeluOp::verify() {
  StringRef approximate = getApproximate();
  if (approximate != "none" && approximate != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << approximate << "\"";
  return success();
}
