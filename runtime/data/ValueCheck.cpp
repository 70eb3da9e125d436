// Reading the checked elements of a sample and comparing them with the range.
#include "runtime/data/ValueCheck.h"

#include "runtime/io/Shape.h"

#include <cstring>
#include <fmt/format.h>

namespace modelc::rt {

namespace {

/// The scan of findBadValue for elements of type T: the outer axes of the
/// box index by index, the last one in a tight loop.
template <typename T>
std::optional<BadValue> scan(const ValueCheck &check,
                             const std::vector<int64_t> &shape,
                             const uint8_t *sample) {
  size_t rank = shape.size();
  auto bad = [&](int64_t flat) -> std::optional<BadValue> {
    T raw;
    std::memcpy(&raw, sample + flat * sizeof(T), sizeof(T));
    int64_t value = int64_t(raw);
    if ((value >= check.min && value < check.end) ||
        (check.ignore && value == *check.ignore))
      return std::nullopt;
    return BadValue{flat, value};
  };
  if (rank == 0)
    return bad(0);
  // Row-major strides of the sample, in elements.
  std::vector<int64_t> pitch(rank, 1);
  for (size_t i = rank; i-- > 1;)
    pitch[i - 1] = pitch[i] * shape[i];
  size_t last = rank - 1;
  std::vector<int64_t> index(check.starts);
  while (true) {
    int64_t base = 0;
    for (size_t i = 0; i < last; ++i)
      base += index[i] * pitch[i];
    for (int64_t j = check.starts[last]; j < check.limits[last];
         j += check.strides[last])
      if (std::optional<BadValue> found = bad(base + j))
        return found;
    // The next index of the outer axes.
    size_t axis = last;
    while (true) {
      if (axis == 0)
        return std::nullopt;
      --axis;
      index[axis] += check.strides[axis];
      if (index[axis] < check.limits[axis])
        break;
      index[axis] = check.starts[axis];
    }
  }
}

} // namespace

bool ValueCheck::fits(const std::vector<int64_t> &shape) const {
  if (starts.size() != shape.size() || limits.size() != shape.size() ||
      strides.size() != shape.size() || end <= min)
    return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (starts[i] < 0 || starts[i] >= limits[i] || limits[i] > shape[i] ||
        strides[i] < 1)
      return false;
  return true;
}

std::string ValueCheck::rangeText() const {
  std::string text = fmt::format("[{}, {})", min, end);
  return ignore ? fmt::format("{} or {}", text, *ignore) : text;
}

std::optional<BadValue> findBadValue(const ValueCheck &check, DType dtype,
                                     const std::vector<int64_t> &shape,
                                     const uint8_t *sample) {
  switch (dtype) {
  case DType::U8:
    return scan<uint8_t>(check, shape, sample);
  case DType::U16:
    return scan<uint16_t>(check, shape, sample);
  case DType::I32:
    return scan<int32_t>(check, shape, sample);
  case DType::I64:
    return scan<int64_t>(check, shape, sample);
  default:
    return std::nullopt; // not an integer field: nothing to check
  }
}

std::string formatIndex(int64_t element, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = shape[i] ? element % shape[i] : 0;
    element = shape[i] ? element / shape[i] : 0;
  }
  return formatShape(index);
}

std::string badValueText(const ValueCheck &check, const BadValue &bad,
                         const std::vector<int64_t> &shape, int64_t first,
                         const std::string &sample, const std::string &suffix) {
  return fmt::format(
      "element {} ({}{}{}) is {}, outside {} for {}", first + bad.element,
      sample,
      shape.empty() ? "" : ", index " + formatIndex(bad.element, shape),
      suffix, bad.value, check.rangeText(), check.use);
}

} // namespace modelc::rt
