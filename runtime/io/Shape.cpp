// Overflow-checked shape sizes and their spelling in messages.
#include "runtime/io/Shape.h"

#include <fmt/format.h>

namespace modelc::rt {

namespace {
constexpr uint64_t kMaxBytes = uint64_t(1) << 62;
} // namespace

std::optional<uint64_t> checkedElementCount(const std::vector<int64_t> &dims) {
  uint64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0)
      return std::nullopt;
    if (dim != 0 && count > kMaxBytes / uint64_t(dim))
      return std::nullopt;
    count *= uint64_t(dim);
  }
  return count;
}

std::optional<uint64_t> checkedByteSize(const std::vector<int64_t> &dims,
                                        DType dtype) {
  std::optional<uint64_t> count = checkedElementCount(dims);
  if (!count || *count > kMaxBytes / dtypeSize(dtype))
    return std::nullopt;
  return *count * dtypeSize(dtype);
}

std::string formatShape(const std::vector<int64_t> &dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

} // namespace modelc::rt
