// Reductions: sum, mean, max, min over sorted axes, and argmax.
#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::mdl;

std::optional<SmallVector<int64_t>>
mlir::mdl::inferReduceShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes,
                            bool keepdim, EmitErrorFn emitError) {
  int64_t rank = shape.size();
  if (axes.empty())
    return reportInvalid(emitError, "expects at least one axis to reduce");
  for (auto [index, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= rank)
      return reportInvalid(emitError, "axis ", axis,
                           " is out of range for rank ", rank,
                           " (axes are normalised to 0 .. rank - 1)");
    if (index > 0 && axes[index - 1] >= axis)
      return reportInvalid(emitError, "axes must be sorted and distinct, got ",
                           formatShape(axes));
  }
  SmallVector<int64_t> result;
  for (int64_t i = 0; i < rank; ++i) {
    if (!llvm::is_contained(axes, i))
      result.push_back(shape[i]);
    else if (keepdim)
      result.push_back(1);
  }
  return result;
}

Type mlir::mdl::inferReduceType(Type input, ArrayRef<int64_t> axes,
                                bool keepdim) {
  auto type = cast<RankedTensorType>(input);
  std::optional<SmallVector<int64_t>> shape =
      inferReduceShape(type.getShape(), axes, keepdim);
  return shape ? type.clone(*shape) : type;
}

LogicalResult mlir::mdl::verifyReduceOp(Operation *op, ArrayRef<int64_t> axes,
                                        bool keepdim) {
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  std::optional<SmallVector<int64_t>> shape = inferReduceShape(
      input.getShape(), axes, keepdim, [&] { return op->emitOpError(); });
  if (!shape)
    return failure();
  return verifyTensorType(op, "result", op->getResult(0).getType(), *shape,
                          input.getElementType());
}

void ArgmaxOp::build(OpBuilder &builder, OperationState &state, Value input,
                     int64_t axis, bool keepdim) {
  auto type = cast<RankedTensorType>(input.getType());
  std::optional<SmallVector<int64_t>> shape =
      inferReduceShape(type.getShape(), {axis}, keepdim);
  ArrayRef<int64_t> resultShape =
      shape ? ArrayRef<int64_t>(*shape) : type.getShape();
  build(builder, state,
        RankedTensorType::get(resultShape, builder.getI64Type()), input, axis,
        keepdim);
}

LogicalResult ArgmaxOp::verify() {
  RankedTensorType input = getInput().getType();
  std::optional<SmallVector<int64_t>> shape =
      inferReduceShape(input.getShape(), {getAxis()}, getKeepdim(),
                       [&] { return emitOpError(); });
  if (!shape)
    return failure();
  return verifyTensorType(*this, "result", getType(), *shape,
                          IntegerType::get(getContext(), 64));
}
