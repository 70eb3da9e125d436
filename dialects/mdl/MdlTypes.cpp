// Shape helpers shared by every op family: formatting, axes, windows.
#include "dialects/mdl/MdlOps.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mdl;

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
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t room = size + 2 * padding - span;
  if (kernel < 1 || stride < 1 || room < 0)
    return std::nullopt;
  return room / stride + 1;
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
