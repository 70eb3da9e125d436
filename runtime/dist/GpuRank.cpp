#include "runtime/dist/GpuRank.h"

#include <algorithm>

namespace modelc::rt::dist {

Status NcclBucketReducer::reduce(const std::vector<cuda::BucketBuffer> &buffers,
                                 CUstream_st *stream) {
  std::vector<NcclBuffer> nccl;
  nccl.reserve(buffers.size());
  for (const cuda::BucketBuffer &b : buffers)
    nccl.push_back({reinterpret_cast<void *>(uintptr_t(b.address)),
                    size_t(b.count), b.f64});
  return comm_.allReduceScaled(nccl, 1.0 / context_.divisor(), stream);
}

Result<GpuRankComms> connectGpuRank(const NcclId &id, int rank, int size,
                                    const cuda::Device &gpu) {
  MODELC_RETURN_IF_ERROR(gpu.makeCurrent());
  Result<std::unique_ptr<NcclCommunicator>> device =
      NcclCommunicator::connect(id, rank, size, gpu.ordinal(), gpu.stream());
  if (!device)
    return device.status();
  GpuRankComms comms;
  comms.device = std::shared_ptr<NcclCommunicator>(device.take());
  comms.host = std::make_unique<NcclHostCommunicator>(*comms.device);
  return comms;
}

bool GpuRankGroup::opened(bool ok) {
  std::unique_lock<std::mutex> lock(mutex_);
  failedToOpen_ |= !ok;
  if (++arrived_ == ranks_ && !failedToOpen_) {
    if (allOpened_) {
      lock.unlock();
      Status step = allOpened_();
      lock.lock();
      if (!step.ok()) {
        failedToOpen_ = true;
        error_ = std::move(step);
      }
    }
    released_ = true;
  }
  changed_.notify_all();
  changed_.wait(lock, [&] { return released_ || failedToOpen_; });
  return !failedToOpen_;
}

Status GpuRankGroup::error() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

void GpuRankGroup::add(std::shared_ptr<NcclCommunicator> comm) {
  std::unique_lock<std::mutex> lock(mutex_);
  comms_.push_back(comm);
  if (aborted_) {
    lock.unlock();
    comm->abort();
  }
}

void GpuRankGroup::remove(const NcclCommunicator *comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  comms_.erase(std::remove_if(comms_.begin(), comms_.end(),
                              [&](const std::shared_ptr<NcclCommunicator> &c) {
                                return c.get() == comm;
                              }),
               comms_.end());
}

void GpuRankGroup::abortAll() {
  std::vector<std::shared_ptr<NcclCommunicator>> comms;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    comms = comms_;
  }
  for (const std::shared_ptr<NcclCommunicator> &comm : comms)
    comm->abort();
}

} // namespace modelc::rt::dist
