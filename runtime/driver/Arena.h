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
  const uint8_t *at(uint64_t offset) const { return data_.get() + offset; }

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
  /// the transfers above. The same as launch, then finish.
  Status call(modelc_fn fn);

  /// Starts a compiled function. On the CPU it runs now. On a device its
  /// hyperparameters and (unless stageInputs already sent them) its inputs
  /// are uploaded and its steps queued; the host may then change any
  /// buffer of the host arena, since uploads copy what they send at once.
  Status launch(modelc_fn fn);
  /// On a device, uploads `fn`'s input buffers (a batch) now, in stream
  /// order after everything launched so far, so that the next launch of
  /// `fn` sends only its hyperparameters: the host prepares the next batch
  /// while the device still runs the current step. Nothing to do on the
  /// CPU.
  Status stageInputs(modelc_fn fn);
  /// On a device, waits for `fn`'s last launch and downloads its outputs
  /// (loss, metrics, results) into the host arena. Nothing to do on the
  /// CPU. Downloads are in stream order, so any finish sees the work of
  /// every earlier launch.
  Status finish(modelc_fn fn);

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
    std::vector<Range> inputs, hypers, outputs;
    /// stageInputs sent the inputs that the next launch would send.
    bool staged = false;
  };
  /// The device function of `fn`, or an internal error.
  Result<DeviceFunction *> deviceFunction(modelc_fn fn);
  Status upload(const std::vector<Range> &ranges);

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
