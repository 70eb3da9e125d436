// The state the fake libcuda (FakeDriver.cpp) and the fake libcublasLt
// (FakeCublasLt.cpp) share inside one shared library, for testing
// runtime/cuda/ on machines without a GPU (MODELC_LIBCUDA and
// MODELC_CUBLASLT point at it). "Device" memory is host memory; streams run
// everything at once, except while capturing, when launches and matmuls are
// recorded into the graph that cuGraphLaunch replays. Kernel "kN" adds 1 to
// the uint32 at arena offset kFakeCounterOffset; cublasLtMatmul computes
// the column-major GEMM its layouts describe. The test reads the calls it
// saw (fakeCudaLog: launches, matmuls, captures, graph launches, pinned
// allocations, waits for recorded events) and the handles still alive
// (fakeCudaLive). FAKE_CUDA_SM sets the compute capability (default 90).
#pragma once

#include <cublasLt.h>
#include <cuda.h>

#include <functional>
#include <string>
#include <vector>

namespace fake {
/// Appends `what` and a space to the call log.
void note(const std::string &what);
/// Handles created and not yet destroyed.
extern int live;
} // namespace fake

struct CUgraph_st {
  std::vector<std::function<void()>> ops;
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
