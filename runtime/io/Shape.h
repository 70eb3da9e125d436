// Shapes as the loaders see them: sizes computed without overflow, and the
// spelling used in error messages.
#pragma once

#include "runtime/io/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace modelc::rt {

/// The product of `dims`, or nullopt when a dimension is negative or the
/// product does not fit in 62 bits (no file can be that large).
std::optional<uint64_t> checkedElementCount(const std::vector<int64_t> &dims);

/// The bytes of a tensor of `dims` and `dtype`, or nullopt as above.
std::optional<uint64_t> checkedByteSize(const std::vector<int64_t> &dims,
                                        DType dtype);

/// "[2, 3]"; "[]" for a scalar.
std::string formatShape(const std::vector<int64_t> &dims);

} // namespace modelc::rt
