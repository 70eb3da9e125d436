// The fake libcublasLt (FakeCuda.h): descriptors that remember their
// attributes, a heuristic that rejects inconsistent layouts, and a matmul
// that computes the column-major GEMM on the stream.
#include "FakeCuda.h"

#include <cstring>
#include <map>

using fake::live;
using fake::note;

namespace {

struct Layout {
  cudaDataType type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};
struct Desc {
  cublasComputeType_t compute;
  int32_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
};
std::map<const void *, Layout> layouts;
std::map<const void *, Desc> descs;

/// Element `i` of a matrix of `type` as a T: bf16 and f16 bits decoded
/// (bf16: the high half of an f32; f16 via the compiler's _Float16).
template <typename T> T element(const void *p, cudaDataType type, int64_t i) {
  if (type == CUDA_R_16BF) {
    uint32_t bits = uint32_t(static_cast<const uint16_t *>(p)[i]) << 16;
    float value;
    std::memcpy(&value, &bits, 4);
    return T(value);
  }
  if (type == CUDA_R_16F)
    return T(static_cast<const _Float16 *>(p)[i]);
  return static_cast<const T *>(p)[i];
}

/// D = alpha op(A) op(B) + beta C in T (the compute and C type), A and B
/// read in their own layouts' types.
template <typename T>
void gemm(const Desc &d, T alpha, const void *A, const Layout &la,
          const void *B, const Layout &lb, T beta, T *C, const Layout &lc) {
  bool ta = d.transA == CUBLAS_OP_T, tb = d.transB == CUBLAS_OP_T;
  int64_t m = int64_t(lc.rows), n = int64_t(lc.cols);
  int64_t k = int64_t(ta ? la.rows : la.cols);
  for (int32_t i = 0; i < lc.batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        T sum = 0;
        for (int64_t l = 0; l < k; ++l) {
          T a = element<T>(A, la.type, ta ? i * la.stride + r * la.ld + l
                                           : i * la.stride + l * la.ld + r);
          T b = element<T>(B, lb.type, tb ? i * lb.stride + l * lb.ld + c
                                           : i * lb.stride + c * lb.ld + l);
          sum += a * b;
        }
        T &out = C[i * lc.stride + c * lc.ld + r];
        out = alpha * sum + beta * out;
      }
}

bool consistent(const Desc &d, const Layout &a, const Layout &b,
                const Layout &c) {
  bool ta = d.transA == CUBLAS_OP_T, tb = d.transB == CUBLAS_OP_T;
  uint64_t m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols;
  uint64_t kb = tb ? b.cols : b.rows, n = tb ? b.rows : b.cols;
  // cuBLASLt's table of supported types: A and B alike; C of their type,
  // or f32 for 16-bit A and B computed in f32; f64 all through.
  bool sixteenBit = a.type == CUDA_R_16BF || a.type == CUDA_R_16F;
  bool types =
      a.type == b.type &&
      (d.compute == CUBLAS_COMPUTE_64F
           ? a.type == CUDA_R_64F && c.type == CUDA_R_64F
           : c.type == CUDA_R_32F && (a.type == CUDA_R_32F || sixteenBit));
  return m == c.rows && n == c.cols && k == kb && a.batch == c.batch &&
         b.batch == c.batch && types &&
         a.ld >= int64_t(a.rows) && b.ld >= int64_t(b.rows) &&
         c.ld >= int64_t(c.rows);
}

} // namespace

struct cublasLtContext {};

extern "C" {

size_t cublasLtGetVersion() { return 130100; }
const char *cublasLtGetStatusName(cublasStatus_t) {
  return "CUBLAS_STATUS_INVALID_VALUE";
}
const char *cublasLtGetStatusString(cublasStatus_t) { return "fake"; }
cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) {
  *h = new cublasLtContext;
  ++live;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  delete h;
  --live;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if ((compute == CUBLAS_COMPUTE_32F) != (scale == CUDA_R_32F))
    return CUBLAS_STATUS_INVALID_VALUE;
  *d = new cublasLtMatmulDescOpaque_t;
  descs[*d] = Desc{compute};
  ++live;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  descs.erase(d);
  delete d;
  --live;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t a,
                                              const void *buf, size_t size) {
  if (size != sizeof(int32_t))
    return CUBLAS_STATUS_INVALID_VALUE;
  int32_t v = *static_cast<const int32_t *>(buf);
  if (a == CUBLASLT_MATMUL_DESC_TRANSA)
    descs[d].transA = v;
  else if (a == CUBLASLT_MATMUL_DESC_TRANSB)
    descs[d].transB = v;
  else
    return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  *l = new cublasLtMatrixLayoutOpaque_t;
  layouts[*l] = Layout{type, rows, cols, ld};
  ++live;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  layouts.erase(l);
  delete l;
  --live;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                 cublasLtMatrixLayoutAttribute_t a,
                                 const void *buf, size_t size) {
  if (a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && size == 4)
    layouts[l].batch = *static_cast<const int32_t *>(buf);
  else if (a == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET && size == 8)
    layouts[l].stride = *static_cast<const int64_t *>(buf);
  else
    return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) {
  *p = new cublasLtMatmulPreferenceOpaque_t;
  ++live;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  delete p;
  --live;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                     cublasLtMatmulPreferenceAttributes_t a,
                                     const void *buf, size_t size) {
  if (a == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES && size == 8) {
    note("workspace:" + std::to_string(*static_cast<const uint64_t *>(buf)));
    return CUBLAS_STATUS_SUCCESS;
  }
  if (a == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES && size == 4) {
    note("alignA:" + std::to_string(*static_cast<const uint32_t *>(buf)));
    return CUBLAS_STATUS_SUCCESS;
  }
  return size == 4 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
    cublasLtMatrixLayout_t dl, cublasLtMatmulPreference_t, int requested,
    cublasLtMatmulHeuristicResult_t *results, int *found) {
  if (c != dl || requested < 1 ||
      !consistent(descs[d], layouts[a], layouts[b], layouts[c]))
    return CUBLAS_STATUS_INVALID_VALUE;
  results[0] = {};
  results[0].state = CUBLAS_STATUS_SUCCESS;
  *found = 1;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t d, const void *alpha,
               const void *A, cublasLtMatrixLayout_t a, const void *B,
               cublasLtMatrixLayout_t b, const void *beta, const void *C,
               cublasLtMatrixLayout_t c, void *D, cublasLtMatrixLayout_t dl,
               const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t s) {
  if (C != D || c != dl)
    return CUBLAS_STATUS_INVALID_VALUE;
  Desc desc = descs[d];
  Layout la = layouts[a], lb = layouts[b], lc = layouts[c];
  // Host pointer mode: the scalars are read now, as cuBLASLt does.
  if (desc.compute == CUBLAS_COMPUTE_64F) {
    double al = *static_cast<const double *>(alpha);
    double be = *static_cast<const double *>(beta);
    s->run([=] {
      note("gemm64");
      gemm(desc, al, A, la, B, lb, be, static_cast<double *>(D), lc);
    });
  } else {
    float al = *static_cast<const float *>(alpha);
    float be = *static_cast<const float *>(beta);
    // The note names the inputs' type: gemm32, gemm16bf, gemm16f.
    const char *name = la.type == CUDA_R_16BF  ? "gemm16bf"
                       : la.type == CUDA_R_16F ? "gemm16f"
                                               : "gemm32";
    s->run([=] {
      note(name);
      gemm(desc, al, A, la, B, lb, be, static_cast<float *>(D), lc);
    });
  }
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
