// The arena's allocation and scalar access (see Arena.h).
#include "runtime/driver/Arena.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace modelc::rt {

void Arena::Free::operator()(uint8_t *p) const { std::free(p); }

Result<Arena> Arena::allocate(uint64_t bytes) {
  uint64_t rounded = bytes < 64 ? 64 : (bytes + 63) / 64 * 64;
  if (rounded < bytes)
    return Status::error("internal error: the arena size overflows",
                         kExitInternal);
  void *p = std::aligned_alloc(64, size_t(rounded));
  if (!p)
    return Status::error(
        fmt::format("cannot allocate the program's arena of {} bytes", bytes),
        kExitInternal);
  std::memset(p, 0, size_t(rounded));
  return Arena(static_cast<uint8_t *>(p));
}

double Arena::readElement(const BufferInfo &b, uint64_t i) const {
  if (b.dtype == DType::F64) {
    double v;
    std::memcpy(&v, at(b) + i * sizeof v, sizeof v);
    return v;
  }
  float v;
  std::memcpy(&v, at(b) + i * sizeof v, sizeof v);
  return v;
}

void Arena::writeElement(const BufferInfo &b, uint64_t i, double value) {
  if (b.dtype == DType::F64) {
    std::memcpy(at(b) + i * sizeof value, &value, sizeof value);
    return;
  }
  float v = float(value);
  std::memcpy(at(b) + i * sizeof v, &v, sizeof v);
}

} // namespace modelc::rt
