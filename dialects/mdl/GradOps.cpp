// Verifiers of the gradient ops: each checks that running the forward op's
// shape rule on the op's result (or forward input) gives the adjoint's shape.
#include "dialects/mdl/MdlOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::mdl;

namespace {
ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// `expected` (a forward shape rule's answer) must be `actual`'s shape.
LogicalResult checkShape(Operation *op, StringRef what,
                         std::optional<SmallVector<int64_t>> expected,
                         Value actual) {
  if (!expected)
    return op->emitOpError(
        "operand shapes and attributes do not describe a valid forward op");
  if (ArrayRef<int64_t>(*expected) != shapeOf(actual))
    return op->emitOpError()
           << what << " has type " << actual.getType()
           << " but the forward op gives shape ["
           << llvm::make_range(expected->begin(), expected->end()) << "]";
  return success();
}

LogicalResult checkElementType(Operation *op, Value a, Value b) {
  if (getElementTypeOrSelf(a.getType()) != getElementTypeOrSelf(b.getType()))
    return op->emitOpError("operands and result must have one element type");
  return success();
}
} // namespace

LogicalResult Conv2dGradInputOp::verify() {
  if (failed(checkElementType(*this, getGrad(), getWeight())) ||
      failed(checkElementType(*this, getGrad(), getResult())))
    return failure();
  return checkShape(*this, "grad",
                    inferConv2dShape(shapeOf(getResult()), shapeOf(getWeight()),
                                     getStride(), getPadding(), getDilation(),
                                     getGroups()),
                    getGrad());
}

LogicalResult Conv2dGradWeightOp::verify() {
  if (failed(checkElementType(*this, getGrad(), getInput())) ||
      failed(checkElementType(*this, getGrad(), getResult())))
    return failure();
  return checkShape(*this, "grad",
                    inferConv2dShape(shapeOf(getInput()), shapeOf(getResult()),
                                     getStride(), getPadding(), getDilation(),
                                     getGroups()),
                    getGrad());
}

LogicalResult MaxPool2dGradOp::verify() {
  if (getInput().getType() != getResult().getType())
    return emitOpError("result type must be the input type");
  if (failed(checkElementType(*this, getGrad(), getInput())))
    return failure();
  return checkShape(*this, "grad",
                    inferPool2dShape(shapeOf(getInput()), getKernel(),
                                     getStride(), getPadding()),
                    getGrad());
}

LogicalResult AvgPool2dGradOp::verify() {
  if (failed(checkElementType(*this, getGrad(), getResult())))
    return failure();
  return checkShape(*this, "grad",
                    inferPool2dShape(shapeOf(getResult()), getKernel(),
                                     getStride(), getPadding()),
                    getGrad());
}

LogicalResult EmbeddingGradOp::verify() {
  if (failed(checkElementType(*this, getGrad(), getResult())))
    return failure();
  return checkShape(
      *this, "grad",
      inferEmbeddingShape(shapeOf(getIds()), shapeOf(getResult())), getGrad());
}

LogicalResult GeluGradOp::verify() {
  StringRef approximate = getApproximate();
  if (approximate != "none" && approximate != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << approximate << "\"";
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (input.empty())
    return emitOpError("input must have rank at least 1");
  SmallVector<int64_t> expected = {input.back()};
  if (shapeOf(getWeight()) != ArrayRef<int64_t>(expected))
    return emitOpError("weight must have shape ")
           << formatShape(expected) << " (the last axis of the input), got "
           << formatShape(shapeOf(getWeight()));
  if (getElementTypeOrSelf(getWeight().getType()) !=
      getElementTypeOrSelf(getInput().getType()))
    return emitOpError("weight and input must have one element type");
  if (!(getEps().convertToDouble() > 0))
    return emitOpError("eps must be positive");
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  if (getLogits().getType() != getResult().getType())
    return emitOpError("result type must be the logits type");
  ArrayRef<int64_t> logits = shapeOf(getLogits());
  if (logits.empty() || logits.drop_back() != shapeOf(getLabels()))
    return emitOpError("labels must have the logits' shape without its last "
                       "(class) axis");
  return success();
}

LogicalResult SliceGradOp::verify() {
  return checkShape(*this, "grad",
                    inferSliceShape(shapeOf(getResult()), getStarts(),
                                    getLimits(), getStrides()),
                    getGrad());
}

LogicalResult LstmScanGradOp::verify() {
  std::pair<StringRef, Value> sequences[] = {{"input_grad", getInputGrad()}};
  std::pair<StringRef, Value> states[] = {{"h0_grad", getH0Grad()},
                                          {"c0_grad", getC0Grad()}};
  std::pair<StringRef, Value> steps[] = {{"hidden_grad", getHiddenGrad()},
                                         {"cell_grad", getCellGrad()},
                                         {"cell", getCell()}};
  return verifyRecurrentShapes(*this, 4, getGates(), getWeightHh(),
                               {sequences, {}, states, steps, {}});
}

LogicalResult GruScanGradOp::verify() {
  std::pair<StringRef, Value> sequences[] = {
      {"input_grad", getInputGrad()}, {"recurrent_grad", getRecurrentGrad()}};
  std::pair<StringRef, Value> units[] = {{"recurrent_n", getRecurrentN()}};
  std::pair<StringRef, Value> states[] = {{"h0_grad", getH0Grad()}};
  std::pair<StringRef, Value> steps[] = {{"hidden_grad", getHiddenGrad()},
                                         {"hidden", getHidden()}};
  return verifyRecurrentShapes(*this, 3, getGates(), getWeightHh(),
                               {sequences, units, states, steps, {}});
}
