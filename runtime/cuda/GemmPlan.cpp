// cuBLASLt descriptors, layouts and algorithm of one GEMM shape
// (GemmPlan.h).
#include "runtime/cuda/GemmPlan.h"

#include <fmt/format.h>

namespace modelc::rt::cuda {

namespace {

/// cuBLASLt's name of a GEMM dtype.
cudaDataType dataType(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return CUDA_R_64F;
  case DType::BF16:
    return CUDA_R_16BF;
  case DType::F16:
    return CUDA_R_16F;
  default:
    return CUDA_R_32F;
  }
}

/// The alignment cuBLASLt may assume of every batch of `operand`, whose
/// elements are `dtype`.
uint32_t alignment(const ColumnMajorOperand &operand, DType dtype,
                   int64_t batch) {
  uint64_t strideBytes =
      batch > 1 ? uint64_t(operand.batchStride) * dtypeSize(dtype) : 0;
  return alignmentOf(operand.offset, strideBytes);
}

template <typename T>
Status setLayout(const BlasLtApi &lt, cublasLtMatrixLayout_t layout,
                 cublasLtMatrixLayoutAttribute_t attribute, T value,
                 const char *what) {
  return lt.check(
      lt.matrixLayoutSetAttribute(layout, attribute, &value, sizeof(value)),
      "cublasLtMatrixLayoutSetAttribute", what);
}

template <typename T>
Status setPreference(const BlasLtApi &lt, cublasLtMatmulPreference_t pref,
                     cublasLtMatmulPreferenceAttributes_t attribute, T value) {
  return lt.check(
      lt.matmulPreferenceSetAttribute(pref, attribute, &value, sizeof(value)),
      "cublasLtMatmulPreferenceSetAttribute");
}

Status createLayout(const BlasLtApi &lt, cublasLtMatrixLayout_t &layout,
                    const ColumnMajorOperand &operand, cudaDataType type,
                    int64_t batch) {
  MODELC_RETURN_IF_ERROR(
      lt.check(lt.matrixLayoutCreate(&layout, type, uint64_t(operand.rows),
                                     uint64_t(operand.cols), operand.ld),
               "cublasLtMatrixLayoutCreate"));
  if (batch == 1)
    return Status();
  MODELC_RETURN_IF_ERROR(setLayout(lt, layout,
                                   CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                   int32_t(batch), "batch count"));
  return setLayout(lt, layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                   int64_t(operand.batchStride), "batch stride");
}

/// Destroys the preference whatever happens to the heuristic query.
struct PreferenceGuard {
  const BlasLtApi &lt;
  cublasLtMatmulPreference_t pref = nullptr;
  ~PreferenceGuard() {
    if (pref)
      lt.matmulPreferenceDestroy(pref);
  }
};

} // namespace

std::string GemmPlan::key(const GpuGemmInfo &g) {
  ColumnMajorGemm cm = toColumnMajor(g.layout);
  const RowMajorGemm &l = g.layout;
  return fmt::format(
      "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
      int(g.dtype), int(g.ab), g.alpha, g.beta, l.transA, l.transB, l.m, l.n,
      l.k, l.batch, l.lda, l.ldb, l.ldc, l.strideA, l.strideB, l.strideC,
      alignment(cm.a, g.ab, l.batch), alignment(cm.b, g.ab, l.batch),
      alignment(cm.c, g.dtype, l.batch));
}

Result<std::unique_ptr<GemmPlan>> GemmPlan::create(const BlasLtApi &lt,
                                                   cublasLtHandle_t handle,
                                                   const GpuGemmInfo &gemm,
                                                   uint64_t workspaceBytes,
                                                   const std::string &where) {
  std::unique_ptr<GemmPlan> plan(new GemmPlan(lt, handle));
  const RowMajorGemm &l = gemm.layout;
  bool f64 = gemm.dtype == DType::F64;
  std::string types = gemm.ab == gemm.dtype
                          ? dtypeName(gemm.dtype)
                          : fmt::format("{}->{}", dtypeName(gemm.ab),
                                        dtypeName(gemm.dtype));
  plan->where_ = fmt::format("{} GEMM {}{} m={} n={} k={} batch={} of {}",
                             types, l.transA ? "T" : "N", l.transB ? "T" : "N",
                             l.m, l.n, l.k, l.batch, where);
  plan->workspaceBytes_ = workspaceBytes;
  plan->f64_ = f64;
  plan->alpha32_ = float(gemm.alpha);
  plan->beta32_ = float(gemm.beta);
  plan->alpha64_ = gemm.alpha;
  plan->beta64_ = gemm.beta;
  const std::string &what = plan->where_;

  ColumnMajorGemm cm = toColumnMajor(l);
  // A and B (cuBLASLt's B and A) in their type; C and D, the scale type
  // and the computation in C's: 16-bit inputs accumulate in f32.
  cudaDataType type = dataType(gemm.dtype), inputType = dataType(gemm.ab);
  cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  MODELC_RETURN_IF_ERROR(
      lt.check(lt.matmulDescCreate(&plan->desc_, compute, type),
               "cublasLtMatmulDescCreate", what));
  for (auto [attribute, trans] :
       {std::pair{CUBLASLT_MATMUL_DESC_TRANSA, cm.transA},
        std::pair{CUBLASLT_MATMUL_DESC_TRANSB, cm.transB}}) {
    int32_t op = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    MODELC_RETURN_IF_ERROR(lt.check(
        lt.matmulDescSetAttribute(plan->desc_, attribute, &op, sizeof(op)),
        "cublasLtMatmulDescSetAttribute", what));
  }
  MODELC_RETURN_IF_ERROR(
      createLayout(lt, plan->a_, cm.a, inputType, cm.batch));
  MODELC_RETURN_IF_ERROR(
      createLayout(lt, plan->b_, cm.b, inputType, cm.batch));
  MODELC_RETURN_IF_ERROR(createLayout(lt, plan->c_, cm.c, type, cm.batch));

  PreferenceGuard pref{lt};
  MODELC_RETURN_IF_ERROR(lt.check(lt.matmulPreferenceCreate(&pref.pref),
                                  "cublasLtMatmulPreferenceCreate", what));
  MODELC_RETURN_IF_ERROR(setPreference(
      lt, pref.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspaceBytes));
  // The default assumes 256-byte aligned pointers; arena views often are
  // not, and an algorithm that needs more than they have would fault.
  uint32_t alignA = alignment(cm.a, gemm.ab, cm.batch);
  uint32_t alignB = alignment(cm.b, gemm.ab, cm.batch);
  uint32_t alignC = alignment(cm.c, gemm.dtype, cm.batch);
  for (auto [attribute, value] :
       {std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignA},
        std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignB},
        std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignC},
        std::pair{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignC}})
    MODELC_RETURN_IF_ERROR(setPreference(lt, pref.pref, attribute, value));

  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  MODELC_RETURN_IF_ERROR(
      lt.check(lt.matmulAlgoGetHeuristic(handle, plan->desc_, plan->a_,
                                         plan->b_, plan->c_, plan->c_,
                                         pref.pref, 1, &result, &found),
               "cublasLtMatmulAlgoGetHeuristic", what));
  if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS ||
      result.workspaceSize > workspaceBytes)
    return Status::error(
        fmt::format("cuBLASLt has no algorithm for the {} within a {}-byte "
                    "workspace; run with --cpu",
                    what, workspaceBytes),
        kExitInternal);
  plan->algo_ = result.algo;
  return plan;
}

GemmPlan::~GemmPlan() {
  for (cublasLtMatrixLayout_t layout : {a_, b_, c_})
    if (layout)
      lt_.matrixLayoutDestroy(layout);
  if (desc_)
    lt_.matmulDescDestroy(desc_);
}

Status GemmPlan::enqueue(const GpuGemmInfo &gemm, CUdeviceptr arena,
                         CUdeviceptr workspace, CUstream stream) const {
  ColumnMajorGemm cm = toColumnMajor(gemm.layout);
  auto at = [&](uint64_t offset) {
    return reinterpret_cast<void *>(uintptr_t(arena + offset));
  };
  const void *alpha = f64_ ? static_cast<const void *>(&alpha64_) : &alpha32_;
  const void *beta = f64_ ? static_cast<const void *>(&beta64_) : &beta32_;
  void *c = at(cm.c.offset);
  return lt_.check(lt_.matmul(handle_, desc_, alpha, at(cm.a.offset), a_,
                              at(cm.b.offset), b_, beta, c, c_, c, c_, &algo_,
                              reinterpret_cast<void *>(uintptr_t(workspace)),
                              workspaceBytes_, stream),
                   "cublasLtMatmul", where_);
}

} // namespace modelc::rt::cuda
