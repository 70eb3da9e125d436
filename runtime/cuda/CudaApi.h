// The CUDA driver API and cuBLASLt as tables of function pointers, filled at
// run time with dlopen/dlsym (cuGetProcAddress for the driver), so that no
// program links a CUDA library. The official headers give the types and
// constants only. Every call's result goes through check(), which names the
// call, the error and what to do.
#pragma once

#include "runtime/support/Status.h"

#include <cublasLt.h>
#include <cuda.h>

#include <string>
#include <string_view>
#include <vector>

namespace modelc::rt::cuda {

// The driver functions the runtime uses: (member, symbol). The member's type
// is the header's prototype of `symbol` for CUDA_VERSION (cuda.h maps e.g.
// cuMemAlloc to cuMemAlloc_v2), and cuGetProcAddress is asked for `symbol`
// at that ABI version (or the driver's, when older: these functions kept
// their prototypes since CUDA 12.0), so the pointer and its type agree.
#define MODELC_CUDA_DRIVER_FUNCTIONS(X)                                        \
  X(init, cuInit)                                                              \
  X(deviceGetCount, cuDeviceGetCount)                                          \
  X(deviceGet, cuDeviceGet)                                                    \
  X(deviceGetName, cuDeviceGetName)                                            \
  X(deviceGetAttribute, cuDeviceGetAttribute)                                  \
  X(deviceTotalMem, cuDeviceTotalMem)                                          \
  X(primaryCtxRetain, cuDevicePrimaryCtxRetain)                                \
  X(primaryCtxRelease, cuDevicePrimaryCtxRelease)                              \
  X(ctxSetCurrent, cuCtxSetCurrent)                                            \
  X(moduleLoadDataEx, cuModuleLoadDataEx)                                      \
  X(moduleUnload, cuModuleUnload)                                              \
  X(moduleGetFunction, cuModuleGetFunction)                                    \
  X(memAlloc, cuMemAlloc)                                                      \
  X(memFree, cuMemFree)                                                        \
  X(memsetD8Async, cuMemsetD8Async)                                            \
  X(memHostAlloc, cuMemHostAlloc)                                              \
  X(memFreeHost, cuMemFreeHost)                                                \
  X(memcpyHtoDAsync, cuMemcpyHtoDAsync)                                        \
  X(memcpyDtoHAsync, cuMemcpyDtoHAsync)                                        \
  X(streamCreate, cuStreamCreate)                                              \
  X(streamDestroy, cuStreamDestroy)                                            \
  X(streamSynchronize, cuStreamSynchronize)                                    \
  X(streamBeginCapture, cuStreamBeginCapture)                                  \
  X(streamEndCapture, cuStreamEndCapture)                                      \
  X(eventCreate, cuEventCreate)                                                \
  X(eventRecord, cuEventRecord)                                                \
  X(eventSynchronize, cuEventSynchronize)                                      \
  X(streamWaitEvent, cuStreamWaitEvent)                                        \
  X(eventDestroy, cuEventDestroy)                                              \
  X(launchKernel, cuLaunchKernel)                                              \
  X(graphInstantiate, cuGraphInstantiateWithFlags)                             \
  X(graphLaunch, cuGraphLaunch)                                                \
  X(graphExecDestroy, cuGraphExecDestroy)                                      \
  X(graphDestroy, cuGraphDestroy)

#define MODELC_CUBLASLT_FUNCTIONS(X)                                           \
  X(create, cublasLtCreate)                                                    \
  X(destroy, cublasLtDestroy)                                                  \
  X(getVersion, cublasLtGetVersion)                                            \
  X(getStatusName, cublasLtGetStatusName)                                      \
  X(getStatusString, cublasLtGetStatusString)                                  \
  X(matmulDescCreate, cublasLtMatmulDescCreate)                                \
  X(matmulDescDestroy, cublasLtMatmulDescDestroy)                              \
  X(matmulDescSetAttribute, cublasLtMatmulDescSetAttribute)                    \
  X(matrixLayoutCreate, cublasLtMatrixLayoutCreate)                            \
  X(matrixLayoutDestroy, cublasLtMatrixLayoutDestroy)                          \
  X(matrixLayoutSetAttribute, cublasLtMatrixLayoutSetAttribute)                \
  X(matmulPreferenceCreate, cublasLtMatmulPreferenceCreate)                    \
  X(matmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy)                  \
  X(matmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute)        \
  X(matmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic)                    \
  X(matmul, cublasLtMatmul)

#define MODELC_CUDA_MEMBER(member, symbol) decltype(&symbol) member = nullptr;

/// libcuda, loaded once per process (per MODELC_LIBCUDA value) and never
/// unloaded.
struct DriverApi {
  std::string path;      // what dlopen was given
  int driverVersion = 0; // e.g. 13000 for CUDA 13.0
  decltype(&cuGetErrorName) getErrorName = nullptr;
  decltype(&cuGetErrorString) getErrorString = nullptr;
  MODELC_CUDA_DRIVER_FUNCTIONS(MODELC_CUDA_MEMBER)

  /// Ok for CUDA_SUCCESS; otherwise an internal error "CUDA error: CALL
  /// (WHAT) failed with CUDA_ERROR_X (text); HINT", with a hint chosen from
  /// the error when `hint` is empty.
  Status check(CUresult result, std::string_view call,
               std::string_view what = {}, std::string_view hint = {}) const;
  /// "CUDA_ERROR_X (text)", or the number when the driver cannot name it.
  std::string describe(CUresult result) const;
};

/// libcublasLt of CUBLAS_VER_MAJOR, loaded once per process (per
/// MODELC_CUBLASLT value) and never unloaded.
struct BlasLtApi {
  std::string path;
  size_t version = 0; // cublasLtGetVersion(), e.g. 130100
  MODELC_CUBLASLT_FUNCTIONS(MODELC_CUDA_MEMBER)

  /// As DriverApi::check, for cuBLASLt's status codes.
  Status check(cublasStatus_t status, std::string_view call,
               std::string_view what = {}) const;
};

#undef MODELC_CUDA_MEMBER

/// Loads libcuda: $MODELC_LIBCUDA when set (and only it), else
/// libcuda.so.1. Does not call cuInit. The error is a usage error whose
/// message starts "no CUDA driver (".
Result<const DriverApi *> loadDriver();

/// Loads libcublasLt: $MODELC_CUBLASLT when set (and only it), else the
/// first of cublasLtCandidates() that opens and has the right major version.
Result<const BlasLtApi *> loadBlasLt();

/// Where libcublasLt is looked for when MODELC_CUBLASLT is not set, in
/// order: the loader's path (libcublasLt.so.13, libcublasLt.so), the CUDA
/// toolkit ($CUDA_HOME, /usr/local/cuda), then the nvidia pip packages of
/// Python environments under /opt and /usr/local (glob patterns).
std::vector<std::string> cublasLtCandidates();

} // namespace modelc::rt::cuda
