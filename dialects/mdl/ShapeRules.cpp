// The size arithmetic of the built-in ops (see ShapeRules.h).
#include "dialects/mdl/ShapeRules.h"

#include <algorithm>
#include <limits>

namespace modelc::shape_rules {

static constexpr WideSize kMaxSize = std::numeric_limits<int64_t>::max();

std::optional<int64_t> getElementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    if (__builtin_mul_overflow(count, size, &count))
      return std::nullopt;
  return count;
}

std::optional<std::vector<int64_t>>
broadcastShapes(const std::vector<int64_t> &lhs,
                const std::vector<int64_t> &rhs) {
  // Align from the right; the shorter shape counts as padded with 1s.
  size_t rank = std::max(lhs.size(), rhs.size());
  std::vector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1)
      return std::nullopt;
    result[rank - 1 - i] = l == 1 ? r : l;
  }
  return result;
}

MatmulShapes inferMatmulShapes(const std::vector<int64_t> &lhs,
                               const std::vector<int64_t> &rhs) {
  std::vector<int64_t> left = lhs, right = rhs;
  bool rowVector = left.size() == 1, columnVector = right.size() == 1;
  if (rowVector)
    left.insert(left.begin(), 1);
  if (columnVector)
    right.push_back(1);
  MatmulShapes shapes;
  shapes.lhsK = left.back();
  shapes.rhsK = right[right.size() - 2];
  shapes.lhsBatch.assign(left.begin(), left.end() - 2);
  shapes.rhsBatch.assign(right.begin(), right.end() - 2);
  if (shapes.lhsK != shapes.rhsK)
    return shapes;
  shapes.result = broadcastShapes(shapes.lhsBatch, shapes.rhsBatch);
  if (!shapes.result)
    return shapes;
  if (!rowVector)
    shapes.result->push_back(left[left.size() - 2]);
  if (!columnVector)
    shapes.result->push_back(right.back());
  return shapes;
}

WideSize getPaddedSize(int64_t size, int64_t padding) {
  return static_cast<WideSize>(size) + 2 * static_cast<WideSize>(padding);
}

WideSize getDilatedExtent(int64_t kernel, int64_t dilation) {
  // Every factor is below 2^64 in magnitude, so nothing here can wrap.
  return static_cast<WideSize>(dilation) * (static_cast<WideSize>(kernel) - 1) +
         1;
}

std::optional<WideSize> getWideWindowCount(int64_t size, int64_t kernel,
                                           int64_t stride, int64_t padding,
                                           int64_t dilation) {
  WideSize room =
      getPaddedSize(size, padding) - getDilatedExtent(kernel, dilation);
  if (stride < 1 || room < 0)
    return std::nullopt;
  return room / stride + 1;
}

std::optional<int64_t> getWindowCount(int64_t size, int64_t kernel,
                                      int64_t stride, int64_t padding,
                                      int64_t dilation) {
  if (kernel < 1 || stride < 1 || padding < 0 || dilation < 1 ||
      getPaddedSize(size, padding) > kMaxSize ||
      getDilatedExtent(kernel, dilation) > kMaxSize)
    return std::nullopt;
  std::optional<WideSize> count =
      getWideWindowCount(size, kernel, stride, padding, dilation);
  if (!count)
    return std::nullopt;
  return static_cast<int64_t>(*count);
}

} // namespace modelc::shape_rules
