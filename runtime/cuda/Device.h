// The CUDA path of the runtime (docs/runtime/cuda.md): one GPU, its arena
// and the program's GPU step lists. The CUDA driver API and cuBLASLt are
// loaded with dlopen on first use, so a program that never touches a GPU
// needs no CUDA library. Every CUDA call is checked; a failure becomes a
// Status naming the call, the error and what to do.
#pragma once

#include "runtime/driver/Manifest.h"
#include "runtime/support/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct CUstream_st;

namespace modelc::rt::cuda {

/// One buffer of a gradient bucket: `count` f32 or f64 elements at a device
/// address.
struct BucketBuffer {
  uint64_t address = 0, count = 0;
  bool f64 = false;
};

/// How a data-parallel run reduces the program's gradient buckets (its
/// AllReduce steps, docs/passes/data-parallel.md) on one GPU: the trainer
/// of each rank gives its device one (runtime/dist/GpuRank.h, over NCCL).
class BucketReducer {
public:
  virtual ~BucketReducer() = default;
  /// Whether the functions run from now on reduce their buckets: only the
  /// fwd_bwd of a step's last micro-batch does.
  virtual bool reducing() const = 0;
  /// Queues on `stream` the reduction of one bucket: each buffer becomes
  /// its mean over the ranks. `stream` may be capturing a CUDA graph.
  virtual Status reduce(const std::vector<BucketBuffer> &buffers,
                        CUstream_st *stream) = 0;
};

/// What the machine has: `problem` says why no GPU can be used (libcuda not
/// found, cuInit failed, no device), empty when `devices` > 0. Never fails
/// hard and loads nothing but libcuda.
struct Probe {
  int devices = 0;
  std::string problem;
};
Probe probe();

class Device {
public:
  /// Opens GPU `ordinal` for `manifest`'s GpuProgram: verifies that section
  /// (offsets inside the arena, kernel indices, one GpuFunction per
  /// function), loads libcublasLt (when the program has GEMMs), picks and
  /// loads the image for the device's architecture, allocates the device
  /// arena (zeroed), a stream, pinned staging memory and the cuBLASLt
  /// handle. A usage error (exit 2) for a program without the cuda target,
  /// a machine without a usable driver, device or cuBLASLt, a bad ordinal
  /// or an image that cannot run on the device; an internal error
  /// otherwise.
  static Result<std::unique_ptr<Device>> open(int ordinal,
                                              const Manifest &manifest);
  virtual ~Device() = default;

  /// e.g. "GPU 0: NVIDIA H200 (sm_90, 139.8 GiB)".
  virtual std::string description() const = 0;
  virtual uint64_t arenaBytes() const = 0;
  virtual size_t kernelCount() const = 0;

  /// Copies host bytes to arena[offset, offset + bytes) in stream order,
  /// through pinned staging memory: `src` may be reused when it returns.
  virtual Status upload(uint64_t offset, const void *src, uint64_t bytes) = 0;
  /// Copies arena[offset, offset + bytes) to `dst` after all work queued so
  /// far; returns when `dst` holds it.
  virtual Status download(uint64_t offset, void *dst, uint64_t bytes) = 0;
  /// Queues Program.functions[index]'s GPU steps. The first run of a
  /// function launches them one by one; the second captures them as a CUDA
  /// graph, and later runs replay it.
  virtual Status run(size_t functionIndex) = 0;
  /// Queues step `stepIndex` of Program.functions[functionIndex] alone,
  /// eagerly (never captured), for checking one kernel or GEMM at a time.
  virtual Status runStep(size_t functionIndex, size_t stepIndex) = 0;
  /// Waits for everything queued; reports asynchronous kernel errors.
  virtual Status synchronize() = 0;

  /// From now on AllReduce steps go to `reducer` (null: they do nothing,
  /// one GPU alone). A reducing run queues each bucket on a communication
  /// stream of its own once the backward has written it (an event), so
  /// that it overlaps the backward of earlier layers, and the function's
  /// end waits for them; reducing and non-reducing runs are captured as
  /// CUDA graphs of their own.
  virtual Status setReducer(BucketReducer *reducer) = 0;
  /// For a communicator on this GPU (NCCL): the device's ordinal, its
  /// stream (every function runs on it), the arena's device address, and
  /// making its context current on the calling thread.
  virtual int ordinal() const = 0;
  virtual CUstream_st *stream() const = 0;
  virtual uint64_t arenaAddress() const = 0;
  virtual Status makeCurrent() const = 0;
};

} // namespace modelc::rt::cuda
