// What a data-parallel rank on a GPU adds to its device
// (docs/runtime/distributed.md, "GPU ranks"): the NCCL communicator on the
// device's stream, the host-memory communicator over it that the training
// loop talks through, and the reducer of the program's gradient buckets.
#pragma once

#include "runtime/cuda/Device.h"
#include "runtime/dist/Nccl.h"
#include "runtime/dist/RankContext.h"

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace modelc::rt::dist {

/// The program's AllReduce steps over NCCL: on the fwd_bwd of a step's last
/// micro-batch (the rank context's reducing()), each bucket becomes its sum
/// over the ranks divided by the context's divisor (the rank count, or what
/// a changed accumulation asks), as one NCCL group of PreMulSum
/// all-reduces. It reduces also with one rank, so that `--gpus 1` runs the
/// same path as `--gpus 8`.
class NcclBucketReducer final : public cuda::BucketReducer {
public:
  NcclBucketReducer(NcclCommunicator &comm, const RankContext &context)
      : comm_(comm), context_(context) {}
  bool reducing() const override { return context_.reducing(); }
  Status reduce(const std::vector<cuda::BucketBuffer> &buffers,
                CUstream_st *stream) override;

private:
  NcclCommunicator &comm_;
  const RankContext &context_;
};

/// One GPU rank's communicators: `device` for device memory (the program's
/// buckets, module buffers in the arena) and `host` for the loop's host
/// values, both on the device's stream.
struct GpuRankComms {
  /// Shared with the rank's GpuRankGroup, which may abort it from another
  /// thread while the rank lets it go.
  std::shared_ptr<NcclCommunicator> device;
  std::unique_ptr<NcclHostCommunicator> host;
};

/// Joins rank `rank` of `size` to the group of `id` on `gpu`, whose context
/// it makes current on the calling thread first.
Result<GpuRankComms> connectGpuRank(const NcclId &id, int rank, int size,
                                    const cuda::Device &gpu);

/// The GPU ranks of one process, as threads: NCCL waits for every rank
/// without a timeout, so a rank that fails must not leave the others
/// waiting, neither to join (ncclCommInitRank) nor in a collective.
class GpuRankGroup {
public:
  /// `allOpened`, when given, runs once every rank has opened its GPU and
  /// before any joins NCCL: a run of several processes waits there for the
  /// other processes' GPUs. Its error stops every rank of the group.
  explicit GpuRankGroup(int ranks, std::function<Status()> allOpened = {})
      : ranks_(ranks), allOpened_(std::move(allOpened)) {}
  /// Each rank says whether it opened its GPU, then waits for the others:
  /// false when one of them could not, or allOpened failed (no rank joins
  /// NCCL then).
  bool opened(bool ok);
  /// allOpened's error, once opened() has returned.
  Status error();
  /// A rank's communicator, aborted by abortAll() until it is removed.
  /// Added after abortAll(), it is aborted now.
  void add(std::shared_ptr<NcclCommunicator> comm);
  void remove(const NcclCommunicator *comm);
  /// A rank failed: every communicator of the group is aborted, so that
  /// the other ranks' collectives fail instead of waiting for it. The
  /// aborts run outside the group's lock (NCCL's may wait for the other
  /// ranks' graphs to go), on references of the group's own.
  void abortAll();

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int ranks_, arrived_ = 0;
  std::function<Status()> allOpened_;
  Status error_;
  bool released_ = false, failedToOpen_ = false, aborted_ = false;
  std::vector<std::shared_ptr<NcclCommunicator>> comms_;
};

} // namespace modelc::rt::dist
