// The arena: the one zeroed, 64-byte-aligned allocation that every compiled
// function reads and writes, and typed access to the manifest's buffers in it.
#pragma once

#include "runtime/driver/Manifest.h"

#include <cstdint>
#include <memory>

namespace modelc::rt {

class Arena {
public:
  /// Allocates `bytes` (at least 64) zeroed bytes aligned to 64.
  static Result<Arena> allocate(uint64_t bytes);

  uint8_t *data() { return data_.get(); }
  uint8_t *at(const BufferInfo &b) { return data_.get() + b.offset; }
  const uint8_t *at(const BufferInfo &b) const {
    return data_.get() + b.offset;
  }

  /// The first element of an f32 or f64 buffer, as a double.
  double readScalar(const BufferInfo &b) const { return readElement(b, 0); }
  /// Writes an f64 scalar (hyper) buffer; f32 buffers are rounded.
  void writeScalar(const BufferInfo &b, double value) {
    writeElement(b, 0, value);
  }
  /// Element `i` of an f32 or f64 buffer, as a double.
  double readElement(const BufferInfo &b, uint64_t i) const;
  /// Writes element `i` of an f32 or f64 buffer; f32 elements are rounded.
  void writeElement(const BufferInfo &b, uint64_t i, double value);

  void call(modelc_fn fn) { fn(data_.get()); }

private:
  struct Free {
    void operator()(uint8_t *p) const;
  };
  explicit Arena(uint8_t *data) : data_(data) {}
  std::unique_ptr<uint8_t, Free> data_;
};

} // namespace modelc::rt
