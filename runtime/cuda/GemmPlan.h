// One GEMM shape's cuBLASLt state, made once when the device opens: the
// matmul descriptor, the three matrix layouts (column-major, GemmLayout.h)
// and the algorithm cublasLtMatmulAlgoGetHeuristic picked for the
// program's workspace. Enqueueing then only calls cublasLtMatmul, which
// allocates nothing: safe inside a CUDA-graph capture.
#pragma once

#include "runtime/cuda/CudaApi.h"
#include "runtime/cuda/GpuProgram.h"

#include <memory>
#include <string>

namespace modelc::rt::cuda {

class GemmPlan {
public:
  /// f32 GEMMs compute in f32 (CUBLAS_COMPUTE_32F, no TF32) and f64 ones in
  /// f64, so that results match the CPU's within rounding; bf16/f16 A and B
  /// (CUDA_R_16BF/16F layouts) multiply into an f32 C in f32.
  static Result<std::unique_ptr<GemmPlan>>
  create(const BlasLtApi &lt, cublasLtHandle_t handle, const GpuGemmInfo &gemm,
         uint64_t workspaceBytes, const std::string &where);
  ~GemmPlan();
  GemmPlan(const GemmPlan &) = delete;
  GemmPlan &operator=(const GemmPlan &) = delete;

  /// Queues `gemm`, whose key() is this plan's, on `stream`, for the arena
  /// at `arena`.
  Status enqueue(const GpuGemmInfo &gemm, CUdeviceptr arena,
                 CUdeviceptr workspace, CUstream stream) const;

  /// What makes two GEMMs share a plan: everything but the offsets, and
  /// the offsets' alignments.
  static std::string key(const GpuGemmInfo &gemm);

private:
  GemmPlan(const BlasLtApi &lt, cublasLtHandle_t handle)
      : lt_(lt), handle_(handle) {}

  const BlasLtApi &lt_;
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  uint64_t workspaceBytes_ = 0;
  float alpha32_ = 1, beta32_ = 0;
  double alpha64_ = 1, beta64_ = 0;
  bool f64_ = false;
  std::string where_;
};

} // namespace modelc::rt::cuda
