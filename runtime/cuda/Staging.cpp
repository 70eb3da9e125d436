// Pinned staging slots for uploads and downloads (Staging.h).
#include "runtime/cuda/Staging.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace modelc::rt::cuda {

namespace {
/// The smallest slot: most uploads are a batch of inputs or a scalar.
constexpr uint64_t kMinSlotBytes = uint64_t(1) << 20;
} // namespace

Staging::~Staging() {
  for (Slot &slot : slots_) {
    if (slot.host)
      api_.memFreeHost(slot.host);
    if (slot.done)
      api_.eventDestroy(slot.done);
  }
}

Status Staging::init() {
  for (Slot &slot : slots_)
    MODELC_RETURN_IF_ERROR(
        api_.check(api_.eventCreate(&slot.done, CU_EVENT_DISABLE_TIMING),
                   "cuEventCreate", "staging event"));
  return Status();
}

Result<uint8_t *> Staging::reserve(uint64_t bytes) {
  Slot *slot = &slots_[current_];
  if (!slot->host || slot->bytes - slot->used < bytes) {
    current_ = (current_ + 1) % 2;
    slot = &slots_[current_];
    // An event never recorded counts as complete.
    MODELC_RETURN_IF_ERROR(api_.check(api_.eventSynchronize(slot->done),
                                      "cuEventSynchronize", "staging slot"));
    slot->used = 0;
    if (slot->bytes < bytes) {
      uint64_t grown = std::max(kMinSlotBytes, slot->bytes);
      while (grown < bytes)
        grown *= 2;
      grown = std::min(grown, kMaxSlotBytes);
      if (slot->host)
        api_.memFreeHost(slot->host);
      slot->host = nullptr;
      slot->bytes = 0;
      void *host = nullptr;
      MODELC_RETURN_IF_ERROR(
          api_.check(api_.memHostAlloc(&host, grown, 0), "cuMemHostAlloc",
                     fmt::format("{} bytes of pinned staging memory", grown)));
      slot->host = static_cast<uint8_t *>(host);
      slot->bytes = grown;
    }
  }
  uint8_t *region = slot->host + slot->used;
  // Each copy starts 64-byte aligned, as the arena's buffers do.
  slot->used = std::min(slot->bytes, slot->used + (bytes + 63) / 64 * 64);
  return region;
}

Status Staging::recordCopy(CUstream stream) {
  return api_.check(api_.eventRecord(slots_[current_].done, stream),
                    "cuEventRecord", "staging slot");
}

Status Staging::upload(CUdeviceptr dst, const void *src, uint64_t bytes,
                       CUstream stream) {
  const auto *from = static_cast<const uint8_t *>(src);
  for (uint64_t done = 0; done < bytes;) {
    uint64_t chunk = std::min(bytes - done, kMaxSlotBytes);
    Result<uint8_t *> region = reserve(chunk);
    if (!region)
      return region.status();
    std::memcpy(*region, from + done, chunk);
    MODELC_RETURN_IF_ERROR(
        api_.check(api_.memcpyHtoDAsync(dst + done, *region, chunk, stream),
                   "cuMemcpyHtoDAsync", fmt::format("{} bytes", chunk)));
    MODELC_RETURN_IF_ERROR(recordCopy(stream));
    done += chunk;
  }
  return Status();
}

Status Staging::download(void *dst, CUdeviceptr src, uint64_t bytes,
                         CUstream stream) {
  auto *to = static_cast<uint8_t *>(dst);
  for (uint64_t done = 0; done < bytes;) {
    uint64_t chunk = std::min(bytes - done, kMaxSlotBytes);
    Result<uint8_t *> region = reserve(chunk);
    if (!region)
      return region.status();
    MODELC_RETURN_IF_ERROR(
        api_.check(api_.memcpyDtoHAsync(*region, src + done, chunk, stream),
                   "cuMemcpyDtoHAsync", fmt::format("{} bytes", chunk)));
    MODELC_RETURN_IF_ERROR(recordCopy(stream));
    // Errors of earlier kernels surface here, after the copy was queued.
    MODELC_RETURN_IF_ERROR(
        api_.check(api_.eventSynchronize(slots_[current_].done),
                   "cuEventSynchronize", "waiting for the GPU's results"));
    std::memcpy(to + done, *region, chunk);
    done += chunk;
  }
  return Status();
}

} // namespace modelc::rt::cuda
