// Shape helpers shared by every op family: formatting, axes, windows.
#include "dialects/mdl/MdlOps.h"
#include "dialects/mdl/ShapeRules.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mdl;
namespace shape_rules = modelc::shape_rules;

std::string mlir::mdl::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return text;
}

std::optional<int64_t> mlir::mdl::inferWindowCount(int64_t size, int64_t kernel,
                                                   int64_t stride,
                                                   int64_t padding,
                                                   int64_t dilation) {
  return shape_rules::getWindowCount(size, kernel, stride, padding, dilation);
}

std::optional<int64_t> mlir::mdl::getElementCount(ArrayRef<int64_t> shape) {
  return shape_rules::getElementCount(shape.vec());
}

LogicalResult mlir::mdl::verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank
           << " (axes are normalised to 0 .. rank - 1)";
  return success();
}

LogicalResult mlir::mdl::verifyTensorType(Operation *op, StringRef what,
                                          Type actual, ArrayRef<int64_t> shape,
                                          Type elementType) {
  auto expected = RankedTensorType::get(shape, elementType);
  if (actual != expected)
    return op->emitOpError() << what << " type " << actual
                             << " does not match the expected " << expected;
  return success();
}
