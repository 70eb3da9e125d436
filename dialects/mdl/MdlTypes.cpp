// Shape helpers shared by every op family: formatting, axes, windows.
#include "dialects/mdl/MdlOps.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

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
  if (kernel < 1 || stride < 1 || padding < 0 || dilation < 1)
    return std::nullopt;
  // Exact in 128 bits: every term is below 2^63, so nothing here can wrap.
  __int128 span = static_cast<__int128>(dilation) * (kernel - 1) + 1;
  __int128 padded =
      static_cast<__int128>(size) + 2 * static_cast<__int128>(padding);
  __int128 room = padded - span;
  if (room < 0 || padded > std::numeric_limits<int64_t>::max() ||
      span > std::numeric_limits<int64_t>::max())
    return std::nullopt;
  return static_cast<int64_t>(room / stride + 1);
}

std::optional<int64_t> mlir::mdl::getElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape) {
    std::optional<int64_t> next = llvm::checkedMul(count, size);
    if (!next)
      return std::nullopt;
    count = *next;
  }
  return count;
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
