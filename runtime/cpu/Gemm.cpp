// modelc_gemm_f32/_f64 (runtime/include/modelc/ProgramABI.h): the batched,
// strided, row-major GEMM that generated code calls, on OpenBLAS's cblas.
#include "runtime/cpu/Gemm.h"

#include <modelc/ProgramABI.h>

#include <cblas.h>
#include <fmt/format.h>

#include <chrono>
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

} // namespace

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
