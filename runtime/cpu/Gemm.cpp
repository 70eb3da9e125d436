// modelc_gemm_f32/_f64/_bf16/_f16 (runtime/include/modelc/ProgramABI.h): the
// batched, strided, row-major GEMM that generated code calls, on OpenBLAS's
// cblas. OpenBLAS 0.3.21 has no 16-bit GEMM that accumulates in f32 (its
// sbgemm is bf16 only and not in every build), so 16-bit operands are
// widened to f32 block by block and multiplied by sgemm.
#include "runtime/cpu/Gemm.h"

#include <modelc/ProgramABI.h>

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <condition_variable>
#include <mutex>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

CBLAS_TRANSPOSE toBlas(int64_t trans) {
  return trans ? CblasTrans : CblasNoTrans;
}

// One loop over the batch: OpenBLAS 0.3.21 has no batched GEMM, and each
// call is already multi-threaded for the sizes where threads pay off.
template <typename T, typename Gemm>
void batchedGemm(Gemm gemm, int64_t transA, int64_t transB, int64_t M,
                 int64_t N, int64_t K, T alpha, const T *A, int64_t lda,
                 int64_t strideA, const T *B, int64_t ldb, int64_t strideB,
                 T beta, T *C, int64_t ldc, int64_t strideC, int64_t batch) {
  if (M <= 0 || N <= 0)
    return;
  for (int64_t i = 0; i < batch; ++i)
    gemm(CblasRowMajor, toBlas(transA), toBlas(transB), blasint(M), blasint(N),
         blasint(K), alpha, A + i * strideA, blasint(lda), B + i * strideB,
         blasint(ldb), beta, C + i * strideC, blasint(ldc));
}

/// The f32 values of the 65536 f16 bit patterns (exact).
const float *halfTable() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t bits = 0; bits < 65536; ++bits) {
      int exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
      float sign = bits & 0x8000 ? -1.0f : 1.0f;
      if (exponent == 0x1f)
        t[bits] = fraction ? std::numeric_limits<float>::quiet_NaN()
                           : sign * std::numeric_limits<float>::infinity();
      else if (exponent == 0) // subnormal
        t[bits] = sign * std::ldexp(float(fraction), -24);
      else
        t[bits] = sign * std::ldexp(float(fraction + 1024), exponent - 25);
    }
    return t;
  }();
  return table.data();
}

/// The f32 value of bf16 bits: the high half of an f32.
float bf16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}

/// Widens the `rows` x `cols` block at (row0, col0) of a row-major matrix
/// with leading dimension `ld` into `out` (leading dimension `cols`).
void widenBlock(bool bf16, const uint16_t *in, int64_t ld, int64_t row0,
                int64_t col0, int64_t rows, int64_t cols, float *out) {
  const float *half = bf16 ? nullptr : halfTable();
  for (int64_t i = 0; i < rows; ++i) {
    const uint16_t *row = in + (row0 + i) * ld + col0;
    float *dst = out + i * cols;
    if (bf16)
      for (int64_t j = 0; j < cols; ++j)
        dst[j] = bf16ToFloat(row[j]);
    else
      for (int64_t j = 0; j < cols; ++j)
        dst[j] = half[row[j]];
  }
}

} // namespace

namespace modelc::rt {

void gemm16(bool bf16, int64_t transA, int64_t transB, int64_t M, int64_t N,
            int64_t K, float alpha, const uint16_t *A, int64_t lda,
            int64_t strideA, const uint16_t *B, int64_t ldb, int64_t strideB,
            float beta, float *C, int64_t ldc, int64_t strideC, int64_t batch,
            size_t blockElements) {
  if (M <= 0 || N <= 0)
    return;
  if (K <= 0) { // C = beta C, as sgemm does with K = 0
    for (int64_t i = 0; i < batch; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(M),
                  blasint(N), 0, alpha, nullptr, 1, nullptr, blasint(N), beta,
                  C + i * strideC, blasint(ldc));
    return;
  }
  int64_t kb = std::clamp<int64_t>(int64_t(blockElements) / (M + N), 1, K);
  // Kept from call to call (at most blockElements floats per thread), so
  // that a step's GEMMs do not map and unmap their scratch each time.
  thread_local std::vector<float> scratch;
  if (scratch.size() < size_t((M + N) * kb))
    scratch.resize(size_t((M + N) * kb));
  float *a = scratch.data(), *b = scratch.data() + M * kb;
  for (int64_t i = 0; i < batch; ++i) {
    const uint16_t *Ai = A + i * strideA, *Bi = B + i * strideB;
    for (int64_t k0 = 0; k0 < K; k0 += kb) {
      int64_t n = std::min(kb, K - k0);
      // op(A)[:, k0:k0+n]: columns of a stored M x K, rows of a stored K x M.
      if (transA)
        widenBlock(bf16, Ai, lda, k0, 0, n, M, a);
      else
        widenBlock(bf16, Ai, lda, 0, k0, M, n, a);
      // op(B)[k0:k0+n, :]: rows of a stored K x N, columns of a stored N x K.
      if (transB)
        widenBlock(bf16, Bi, ldb, 0, k0, N, n, b);
      else
        widenBlock(bf16, Bi, ldb, k0, 0, n, N, b);
      cblas_sgemm(CblasRowMajor, toBlas(transA), toBlas(transB), blasint(M),
                  blasint(N), blasint(n), alpha, a,
                  blasint(transA ? M : n), b, blasint(transB ? n : N),
                  k0 == 0 ? beta : 1.0f, C + i * strideC, blasint(ldc));
    }
  }
}

} // namespace modelc::rt

extern "C" void modelc_gemm_f32(int64_t transA, int64_t transB, int64_t M,
                                int64_t N, int64_t K, float alpha,
                                const float *A, int64_t lda, int64_t strideA,
                                const float *B, int64_t ldb, int64_t strideB,
                                float beta, float *C, int64_t ldc,
                                int64_t strideC, int64_t batch) {
  batchedGemm<float>(cblas_sgemm, transA, transB, M, N, K, alpha, A, lda,
                     strideA, B, ldb, strideB, beta, C, ldc, strideC, batch);
}

extern "C" void modelc_gemm_f64(int64_t transA, int64_t transB, int64_t M,
                                int64_t N, int64_t K, double alpha,
                                const double *A, int64_t lda, int64_t strideA,
                                const double *B, int64_t ldb, int64_t strideB,
                                double beta, double *C, int64_t ldc,
                                int64_t strideC, int64_t batch) {
  batchedGemm<double>(cblas_dgemm, transA, transB, M, N, K, alpha, A, lda,
                      strideA, B, ldb, strideB, beta, C, ldc, strideC, batch);
}

extern "C" void modelc_gemm_bf16(int64_t transA, int64_t transB, int64_t M,
                                 int64_t N, int64_t K, float alpha,
                                 const uint16_t *A, int64_t lda,
                                 int64_t strideA, const uint16_t *B,
                                 int64_t ldb, int64_t strideB, float beta,
                                 float *C, int64_t ldc, int64_t strideC,
                                 int64_t batch) {
  modelc::rt::gemm16(true, transA, transB, M, N, K, alpha, A, lda, strideA, B,
                     ldb, strideB, beta, C, ldc, strideC, batch,
                     modelc::rt::kGemm16Block);
}

extern "C" void modelc_gemm_f16(int64_t transA, int64_t transB, int64_t M,
                                int64_t N, int64_t K, float alpha,
                                const uint16_t *A, int64_t lda, int64_t strideA,
                                const uint16_t *B, int64_t ldb, int64_t strideB,
                                float beta, float *C, int64_t ldc,
                                int64_t strideC, int64_t batch) {
  modelc::rt::gemm16(false, transA, transB, M, N, K, alpha, A, lda, strideA,
                     B, ldb, strideB, beta, C, ldc, strideC, batch,
                     modelc::rt::kGemm16Block);
}

namespace modelc::rt {

int gemmThreadCount() { return openblas_get_num_threads(); }

Status reserveGemmBuffers() {
  // Large enough that every OpenBLAS thread takes part (and allocates).
  constexpr int n = 256;
  constexpr auto kPatience = std::chrono::seconds(10);
  std::vector<float> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n);
  std::string limit = "the machine's memory";
  struct rlimit as;
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    limit = fmt::format("the address-space limit (ulimit -v) of {} KiB",
                        uint64_t(as.rlim_cur) / 1024);
  std::string message = fmt::format(
      "error: out of memory: OpenBLAS could not allocate its GEMM buffers "
      "within {}; raise the limit\n",
      limit);
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (!finished.wait_for(lock, kPatience, [&] { return done; })) {
      (void)!::write(STDERR_FILENO, message.data(), message.size());
      ::_exit(kExitUsage);
    }
  });
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
              a.data(), n, b.data(), n, 0.0f, c.data(), n);
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  finished.notify_one();
  watchdog.join();
  return Status();
}

} // namespace modelc::rt
