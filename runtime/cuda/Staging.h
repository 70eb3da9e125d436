// Pinned host memory between host buffers and the device arena: two slots
// used in turn, each filled from its start by consecutive copies and with
// an event recorded after each copy from or to it. A copy goes into the
// current slot while it has room, so the many small uploads of one step
// (inputs, hyperparameters) wait for nothing; only when the slot is full
// does staging switch to the other slot, after waiting for that slot's
// last copy. The host thus fills one slot (the next step's inputs) while
// the GPU still reads from the other, and the caller's buffer is free
// again as soon as upload returns.
#pragma once

#include "runtime/cuda/CudaApi.h"

#include <cstdint>

namespace modelc::rt::cuda {

class Staging {
public:
  /// Copies larger than this go through the slots in chunks.
  static constexpr uint64_t kMaxSlotBytes = uint64_t(64) << 20;

  explicit Staging(const DriverApi &api) : api_(api) {}
  /// Frees the pinned memory and the events; the caller has synchronised
  /// the stream and made the context current. Never throws.
  ~Staging();
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;

  /// Creates the events; the context must be current.
  Status init();
  /// Queues a copy of src[0, bytes) to `dst` on `stream`; returns once
  /// `src` has been copied to pinned memory.
  Status upload(CUdeviceptr dst, const void *src, uint64_t bytes,
                CUstream stream);
  /// Copies `src` to dst[0, bytes) after everything queued on `stream`;
  /// returns when `dst` holds it.
  Status download(void *dst, CUdeviceptr src, uint64_t bytes, CUstream stream);

private:
  struct Slot {
    uint8_t *host = nullptr;
    uint64_t bytes = 0, used = 0;
    CUevent done = nullptr; // recorded after each copy from or to `host`
  };
  /// `bytes` (at most kMaxSlotBytes) of pinned memory no queued copy uses,
  /// in the current slot.
  Result<uint8_t *> reserve(uint64_t bytes);
  /// Records the current slot's event after the copy just queued.
  Status recordCopy(CUstream stream);

  const DriverApi &api_;
  Slot slots_[2];
  unsigned current_ = 0;
};

} // namespace modelc::rt::cuda
