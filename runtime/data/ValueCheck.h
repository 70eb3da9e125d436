// The compiler's checks on the values of data fields and infer inputs
// (schema/manifest.fbs, table ValueCheck; docs/codegen/value-checks.md):
// the elements that reach an embedding as ids or a cross_entropy as labels
// must be in range. The kernels would clamp a bad one; the runtime refuses
// the data instead, naming the file and the element.
#pragma once

#include "runtime/io/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace modelc::rt {

struct ValueCheck {
  size_t input = 0; // an infer entry's input index; 0 for a field
  // Along axis i of a sample: starts[i], starts[i] + strides[i], ... below
  // limits[i].
  std::vector<int64_t> starts, limits, strides;
  int64_t min = 0, end = 0;
  std::optional<int64_t> ignore;
  std::string use; // "the ids of embedding (256 rows) at f.mdl:27:16"

  /// Whether the box fits a sample of `shape`: Manifest::load refuses a
  /// check that does not, and findBadValue relies on it.
  bool fits(const std::vector<int64_t> &shape) const;
  /// "[0, 10)", or "[0, 10) or -100".
  std::string rangeText() const;
};

/// The first element of the box of one sample (`shape` of `dtype`, at
/// `sample`) that fails `check`: its flat index in the sample and its value.
struct BadValue {
  int64_t element;
  int64_t value;
};
std::optional<BadValue> findBadValue(const ValueCheck &check, DType dtype,
                                     const std::vector<int64_t> &shape,
                                     const uint8_t *sample);

/// "[3, 17]": the multi-index of flat element `element` of `shape`.
std::string formatIndex(int64_t element, const std::vector<int64_t> &shape);

/// "element E (SAMPLE, index [i, j]SUFFIX) is V, outside [0, 10) for USE":
/// `bad` in a sample of `shape` whose first element is element `first` of
/// the file's array; `sample` names it ("sample 3", "row 3").
std::string badValueText(const ValueCheck &check, const BadValue &bad,
                         const std::vector<int64_t> &shape, int64_t first,
                         const std::string &sample, const std::string &suffix);

} // namespace modelc::rt
