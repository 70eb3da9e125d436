// GPU ranks on NCCL (docs/runtime/nccl.md): libnccl.so.2 loaded at run time
// into a table of functions (as runtime/cuda/CudaApi.h loads libcuda), the
// unique id a rendezvous passes from rank 0 to the others, the Communicator
// over an NCCL communicator on one GPU's stream (with the gradient buckets'
// scaled all-reduce), and the Communicator of host memory over it.
#pragma once

#include "runtime/dist/Communicator.h"

#include <cuda.h>
#include <nccl.h>

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace modelc::rt::dist {

/// The oldest NCCL the runtime accepts: ncclMemAlloc, which the barrier's
/// scratch element comes from, is new in 2.19 (NCCL_VERSION(2, 19, 0)).
constexpr int kMinNcclVersion = 21900;

// The NCCL functions the runtime uses: (member, symbol); each member has the
// type of nccl.h's prototype of `symbol`.
#define MODELC_NCCL_FUNCTIONS(X)                                               \
  X(getUniqueId, ncclGetUniqueId)                                              \
  X(commInitRank, ncclCommInitRank)                                            \
  X(commCuDevice, ncclCommCuDevice)                                            \
  X(commDestroy, ncclCommDestroy)                                              \
  X(commAbort, ncclCommAbort)                                                  \
  X(commGetAsyncError, ncclCommGetAsyncError)                                  \
  X(getErrorString, ncclGetErrorString)                                        \
  X(getLastError, ncclGetLastError)                                            \
  X(allReduce, ncclAllReduce)                                                  \
  X(broadcast, ncclBroadcast)                                                  \
  X(memAlloc, ncclMemAlloc)                                                    \
  X(memFree, ncclMemFree)                                                      \
  X(groupStart, ncclGroupStart)                                                \
  X(groupEnd, ncclGroupEnd)                                                    \
  X(redOpCreatePreMulSum, ncclRedOpCreatePreMulSum)                            \
  X(redOpDestroy, ncclRedOpDestroy)

#define MODELC_NCCL_MEMBER(member, symbol) decltype(&symbol) member = nullptr;

/// libnccl, loaded once per process (per MODELC_LIBNCCL value) and never
/// unloaded.
struct NcclApi {
  std::string path; // what dlopen was given
  int version = 0;  // ncclGetVersion(), e.g. 22809 for 2.28.9
  MODELC_NCCL_FUNCTIONS(MODELC_NCCL_MEMBER)

  /// "ncclInvalidUsage (invalid usage ...)" for a result code.
  std::string describe(ncclResult_t result) const;
};

#undef MODELC_NCCL_MEMBER

/// "2.28.9" for ncclGetVersion's 22809 (and "2.8.4" for the pre-2.9 2804).
std::string ncclVersionText(int version);

/// Loads libnccl: $MODELC_LIBNCCL when set (and only it), else the first of
/// ncclCandidates() that opens and is at least kMinNcclVersion. The error
/// is a usage error (exit 2) of one line naming what was missing and the
/// package to install.
Result<const NcclApi *> loadNccl();

/// Where libnccl is looked for when MODELC_LIBNCCL is not set, in order:
/// the loader's path (libnccl.so.2), the CUDA toolkit ($CUDA_HOME,
/// $CUDA_PATH, /usr/local/cuda), then the nvidia-nccl pip packages of
/// Python environments under /opt and /usr/local (glob patterns).
std::vector<std::string> ncclCandidates();

/// The bytes of an ncclUniqueId: rank 0 makes one, the rendezvous carries
/// it to every other rank, and all pass it to NcclCommunicator::connect.
using NcclId = std::array<char, NCCL_UNIQUE_ID_BYTES>;

/// A fresh id from ncclGetUniqueId (loads libnccl).
Result<NcclId> createNcclId();

/// One buffer of a gradient bucket: `count` f32 or f64 elements of device
/// memory.
struct NcclBuffer {
  void *data = nullptr;
  size_t count = 0;
  bool f64 = false;
};

/// One rank of a group of GPUs. Its collectives take DEVICE pointers and
/// are queued on `stream` (they return once queued, as NCCL's do): their
/// results are there for whatever is queued after them on that stream.
/// One thread uses a communicator at a time, except abort().
class NcclCommunicator : public Communicator {
public:
  /// Rank `rank` of `size` joins the group of `id` (ncclCommInitRank, which
  /// waits for every rank). The calling thread must have made GPU `device`'s
  /// context current (NCCL takes the current device): a communicator on
  /// another GPU is an internal error naming both.
  static Result<std::unique_ptr<NcclCommunicator>>
  connect(const NcclId &id, int rank, int size, int device, CUstream stream);
  /// ncclRedOpDestroy of the scaled sums and ncclCommDestroy, or
  /// ncclCommAbort when a call has failed (destroy would wait for work that
  /// never finishes; it frees the scaled sums too).
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int device() const { return device_; }
  CUstream stream() const { return stream_; }
  /// The libnccl this communicator calls.
  const NcclApi &api() const { return *api_; }

  Status allReduceSum(float *data, size_t count) override;
  Status allReduceSum(double *data, size_t count) override;
  Status broadcast(void *data, size_t bytes, int root) override;
  /// An all-reduce of one element, then a wait for the stream: when it
  /// returns, every rank has queued everything before its barrier and this
  /// rank's GPU has finished it.
  Status barrier() override;

  /// Queues on `stream` (which may differ from the communicator's own
  /// stream; a CUDA graph may be capturing it) one NCCL group
  /// (ncclGroupStart ... ncclGroupEnd) with one in-place ncclAllReduce per
  /// buffer: each buffer becomes `scale` times its sum over the ranks. The
  /// reduction is a PreMulSum (ncclRedOpCreatePreMulSum with
  /// ncclScalarHostImmediate; one op per element type and scale, created on
  /// first use and kept until the communicator is destroyed), or ncclSum
  /// when `scale` is 1. Errors as the other calls (sticky, asynchronous
  /// checks).
  Status allReduceScaled(const std::vector<NcclBuffer> &buffers, double scale,
                         CUstream stream);

  /// ncclCommAbort: ends this rank's part in the group now. Any thread may
  /// call it, also while another is blocked in a call of this communicator,
  /// which then fails; every later call fails without touching NCCL, and
  /// the other ranks' calls fail instead of waiting for this one. It is how
  /// a rank that learns another is gone (a timeout, a lost connection)
  /// stops waiting for it: a lost rank must never hang the others.
  void abort();

  /// The sticky error, an abort, or an asynchronous error NCCL saw: after
  /// a wait for work queued on this communicator, whether that work really
  /// ran (an abort ends NCCL's kernels without a CUDA error).
  Status healthy(std::string_view when) { return asyncError(when); }

private:
  NcclCommunicator(const NcclApi *api, ncclComm_t comm, int rank, int size,
                   int device, CUstream stream)
      : api_(api), comm_(comm), rank_(rank), size_(size), device_(device),
        stream_(stream) {}
  /// The error of `call` (its result, else NCCL's asynchronous error
  /// afterwards). The first error sticks: every later call returns it.
  Status check(ncclResult_t result, std::string_view call);
  /// The sticky error, or an asynchronous error NCCL saw before `call`.
  Status ready(std::string_view call);
  /// ncclCommGetAsyncError's error as a Status; `when` says when it was
  /// seen ("during the barrier").
  Status asyncError(std::string_view when);
  Status fail(std::string message);
  Status allReduce(void *data, size_t count, ncclDataType_t type);
  /// The reduction that sums `scale` times each element of the type:
  /// ncclSum for 1, else the PreMulSum made on first use.
  Result<ncclRedOp_t> scaledSum(bool f64, double scale);

  const NcclApi *api_;
  ncclComm_t comm_;
  int rank_, size_, device_;
  CUstream stream_;
  std::atomic<bool> aborted_{false};
  Status error_;
  /// The barrier's one device element (ncclMemAlloc), made on first use.
  float *barrierElement_ = nullptr;
  /// The PreMulSum reductions by (f64, scale), destroyed with the
  /// communicator.
  std::map<std::pair<bool, double>, ncclRedOp_t> scaledSums_;
};

/// The Communicator of HOST memory for a GPU rank (the trainer's loss,
/// metrics, stop flags, eval sums): each call copies the host data to a
/// device scratch (ncclMemAlloc, grown as needed), runs the NCCL collective
/// on the device communicator's own stream, copies the result back and
/// waits for the stream (cuStreamSynchronize), so it returns with the host
/// data final. The calling thread must have the GPU's context current, as
/// for the device communicator, which must outlive this one. barrier() is
/// the device communicator's. A failed CUDA call sticks as NCCL's errors
/// do.
class NcclHostCommunicator : public Communicator {
public:
  explicit NcclHostCommunicator(NcclCommunicator &device) : device_(device) {}
  /// Frees the scratch.
  ~NcclHostCommunicator() override;
  NcclHostCommunicator(const NcclHostCommunicator &) = delete;
  NcclHostCommunicator &operator=(const NcclHostCommunicator &) = delete;

  int rank() const override { return device_.rank(); }
  int size() const override { return device_.size(); }

  Status allReduceSum(float *data, size_t count) override;
  Status allReduceSum(double *data, size_t count) override;
  Status broadcast(void *data, size_t bytes, int root) override;
  Status barrier() override { return device_.barrier(); }

private:
  /// Copies `bytes` of `data` to the scratch (when `upload`), runs
  /// `collective` on the scratch, copies the result back into `data` and
  /// waits for the stream. `what` names the call in errors.
  template <typename Collective>
  Status throughScratch(void *data, size_t bytes, bool upload,
                        std::string_view what, Collective collective);
  Status fail(std::string message);

  NcclCommunicator &device_;
  void *scratch_ = nullptr; // ncclMemAlloc'd
  size_t capacity_ = 0;
  Status error_;
};

} // namespace modelc::rt::dist
