// What the runtime's fuzz targets share: inputs as Blobs, the rule that a
// bad file is a usage error (exit 2) and nothing else, and reading every
// byte a loader hands out, so that the sanitizers see any read past it.
#pragma once

#include "runtime/data/Loaders.h"
#include "runtime/io/Files.h"
#include "runtime/support/Status.h"

#include <vector>

namespace modelc::rt::fuzz {

inline std::shared_ptr<const Blob> blobOf(const uint8_t *data, size_t size) {
  return makeBlob(std::vector<uint8_t>(data, data + size));
}

/// A malformed file is the user's error, reported with exit status 2; any
/// other status (an internal error) is a finding.
inline void expectUsageError(const Status &status) {
  if (!status.ok() && status.exitCode() != kExitUsage)
    __builtin_trap();
}
template <typename T> void expectUsageError(const Result<T> &result) {
  if (!result)
    expectUsageError(result.status());
}

inline void touch(const Blob &blob, size_t offset, uint64_t bytes) {
  if (offset > blob.size() || bytes > blob.size() - offset)
    __builtin_trap();
  volatile uint8_t sum = 0;
  for (uint64_t i = 0; i < bytes; ++i)
    sum = sum + blob.data()[offset + i];
}

/// Every element of a loaded array; `elementSize` 0 for none.
inline void touch(const LoadedArray &array, size_t elementSize) {
  uint64_t count = 1;
  for (int64_t dim : array.shape) {
    if (dim < 0)
      __builtin_trap();
    count *= uint64_t(dim);
  }
  touch(*array.blob, array.offset, count * elementSize);
}

} // namespace modelc::rt::fuzz
