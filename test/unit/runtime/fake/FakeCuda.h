// The state the fake libcuda (FakeDriver.cpp) and the fake libcublasLt
// (FakeCublasLt.cpp) share inside one shared library, for testing
// runtime/cuda/ on machines without a GPU (MODELC_LIBCUDA and
// MODELC_CUBLASLT point at it). "Device" memory is host memory; streams run
// everything at once, except while capturing, when launches and matmuls are
// recorded into the graph that cuGraphLaunch replays (a stream that waits
// for an event recorded during a capture joins it, as CUDA's fork and join
// of streams in a capture). Kernel "kN" takes the `.param`s that its
// `.entry kN(...)` in the module's text declares (none without one), logs
// `kN<grid,block>(args)` (an argument inside a device allocation as
// `@offset`) and adds 1 to the uint32 at its first argument plus
// kFakeCounterOffset; cublasLtMatmul computes
// the column-major GEMM its layouts describe. The test reads the calls it
// saw (fakeCudaLog: launches, matmuls, captures, graph launches, pinned
// allocations, waits for recorded events) and the handles still alive
// (fakeCudaLive). FAKE_CUDA_SM sets the compute capability (default 90),
// FAKE_CUDA_DEVICES the number of GPUs (default 1).
#pragma once

#include <cublasLt.h>
#include <cuda.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace fake {
/// Appends `what` and a space to the call log (any thread: GPU ranks are
/// threads).
void note(const std::string &what);
/// Handles created and not yet destroyed.
extern std::atomic<int> live;
} // namespace fake

struct CUstream_st;
struct CUgraph_st {
  std::vector<std::function<void()>> ops;
  /// Streams that joined the capture by waiting for an event recorded in it
  /// (a fork); cuStreamEndCapture on the origin ends theirs too.
  std::vector<CUstream_st *> forked;
};
struct CUstream_st {
  CUgraph_st *capturing = nullptr;
  void run(std::function<void()> op) {
    if (capturing)
      capturing->ops.push_back(std::move(op));
    else
      op();
  }
};
