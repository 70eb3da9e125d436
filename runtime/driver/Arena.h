// The arena: the one zeroed, 64-byte-aligned allocation that every compiled
// function reads and writes, and typed access to the manifest's buffers in it.
// On a GPU the host arena is the host's view of the device arena: `call`
// uploads the function's inputs and hyperparameters before it runs and
// downloads its outputs after; parameters and optimizer state live on the
// device between `pushPersistent` and `pullPersistent`.
#pragma once

#include "runtime/cuda/Device.h"
#include "runtime/driver/Manifest.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace modelc::rt {

class Arena {
public:
  /// Allocates `bytes` (at least 64) zeroed bytes aligned to 64.
  static Result<Arena> allocate(uint64_t bytes);

  uint8_t *data() { return data_.get(); }
  uint8_t *at(const BufferInfo &b) { return data_.get() + b.offset; }
  uint8_t *at(uint64_t offset) { return data_.get() + offset; }
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

  /// Runs a compiled function: directly on the CPU, or on the device with
  /// the transfers above.
  Status call(modelc_fn fn);

  /// From now on functions run on `device`; copies the persistent region
  /// (parameters, gradients, optimizer state) there now.
  Status useDevice(std::unique_ptr<cuda::Device> device,
                   const Manifest &manifest);
  const cuda::Device *device() const { return device_.get(); }
  /// After the host changed the persistent region (e.g. loaded weights):
  /// copies it to the device. Nothing to do on the CPU.
  Status pushPersistent();
  /// Before the host reads the persistent region (save, checkpoint):
  /// copies it back from the device. Nothing to do on the CPU.
  Status pullPersistent();

private:
  /// What `call` copies for one function on a device.
  struct Range {
    uint64_t offset, bytes;
  };
  struct DeviceFunction {
    modelc_fn fn;
    size_t index;
    std::vector<Range> in, out;
  };

  struct Free {
    void operator()(uint8_t *p) const;
  };
  explicit Arena(uint8_t *data) : data_(data) {}
  std::unique_ptr<uint8_t, Free> data_;
  std::unique_ptr<cuda::Device> device_;
  std::vector<DeviceFunction> functions_;
  uint64_t persistentBytes_ = 0;
};

} // namespace modelc::rt
