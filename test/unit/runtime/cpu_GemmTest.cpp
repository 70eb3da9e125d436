// modelc_gemm_f32/_f64 against a naive triple loop: every transpose
// combination, batch > 1 with padded strides, leading dimensions larger than
// the minimum, alpha/beta not 0/1. Tolerance: 1e-5 relative (f32), 1e-12
// (f64), since only the summation order differs.
#include <modelc/ProgramABI.h>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

template <typename T> struct Case {
  int64_t transA, transB, M = 5, N = 7, K = 3, batch = 3;
  T alpha = T(1.5), beta = T(-0.5);
  // Row-major storage of op(A) (M x K) is A (M x K) or A^T (K x M).
  int64_t rowsA() const { return transA ? K : M; }
  int64_t colsA() const { return transA ? M : K; }
  int64_t rowsB() const { return transB ? N : K; }
  int64_t colsB() const { return transB ? K : N; }
  int64_t lda() const { return colsA() + 2; }
  int64_t ldb() const { return colsB() + 3; }
  int64_t ldc() const { return N + 1; }
  int64_t strideA() const { return rowsA() * lda() + 5; }
  int64_t strideB() const { return rowsB() * ldb() + 1; }
  int64_t strideC() const { return M * ldc() + 4; }
};

template <typename T> std::vector<T> pattern(int64_t n, int seed) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i)] = T(std::sin(double(i * 7 + seed)) * 2);
  return v;
}

template <typename T>
void reference(const Case<T> &c, const std::vector<T> &A,
               const std::vector<T> &B, std::vector<T> &C) {
  for (int64_t i = 0; i < c.batch; ++i)
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t n = 0; n < c.N; ++n) {
        double sum = 0;
        for (int64_t k = 0; k < c.K; ++k) {
          double a = c.transA ? A[size_t(i * c.strideA() + k * c.lda() + m)]
                              : A[size_t(i * c.strideA() + m * c.lda() + k)];
          double b = c.transB ? B[size_t(i * c.strideB() + n * c.ldb() + k)]
                              : B[size_t(i * c.strideB() + k * c.ldb() + n)];
          sum += a * b;
        }
        T &out = C[size_t(i * c.strideC() + m * c.ldc() + n)];
        out = T(c.alpha * sum + c.beta * double(out));
      }
}

template <typename T, typename Gemm> void checkAll(Gemm gemm, double tol) {
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1}) {
      Case<T> c{ta, tb};
      std::vector<T> A = pattern<T>(c.batch * c.strideA(), 1);
      std::vector<T> B = pattern<T>(c.batch * c.strideB(), 2);
      std::vector<T> C = pattern<T>(c.batch * c.strideC(), 3);
      std::vector<T> expected = C;
      reference(c, A, B, expected);
      gemm(ta, tb, c.M, c.N, c.K, c.alpha, A.data(), c.lda(), c.strideA(),
           B.data(), c.ldb(), c.strideB(), c.beta, C.data(), c.ldc(),
           c.strideC(), c.batch);
      for (size_t i = 0; i < C.size(); ++i)
        ASSERT_NEAR(C[i], expected[i], tol * (1 + std::fabs(expected[i])))
            << "transA " << ta << " transB " << tb << " element " << i;
    }
}

TEST(CpuGemm, F32MatchesNaiveLoopForAllTransposes) {
  checkAll<float>(modelc_gemm_f32, 1e-5);
}

TEST(CpuGemm, F64MatchesNaiveLoopForAllTransposes) {
  checkAll<double>(modelc_gemm_f64, 1e-12);
}

TEST(CpuGemm, PaddingBetweenRowsAndMatricesIsUntouched) {
  // The elements between rows (ld > N) and between matrices (stride > M*ld)
  // keep their values: a GEMM writes only the M x N block.
  Case<float> c{0, 0};
  std::vector<float> A = pattern<float>(c.batch * c.strideA(), 1);
  std::vector<float> B = pattern<float>(c.batch * c.strideB(), 2);
  std::vector<float> C(size_t(c.batch * c.strideC()), 42.0f);
  modelc_gemm_f32(0, 0, c.M, c.N, c.K, 1.0f, A.data(), c.lda(), c.strideA(),
                  B.data(), c.ldb(), c.strideB(), 0.0f, C.data(), c.ldc(),
                  c.strideC(), c.batch);
  for (int64_t i = 0; i < c.batch; ++i)
    for (int64_t j = c.M * c.ldc(); j < c.strideC(); ++j)
      EXPECT_EQ(C[size_t(i * c.strideC() + j)], 42.0f);
  for (int64_t m = 0; m < c.M; ++m)
    EXPECT_EQ(C[size_t(m * c.ldc() + c.N)], 42.0f);
}

TEST(CpuGemm, EmptyProblemsDoNothing) {
  float C = 3.0f;
  modelc_gemm_f32(0, 0, 0, 1, 1, 1.0f, nullptr, 1, 0, nullptr, 1, 0, 0.0f, &C,
                  1, 0, 1);
  modelc_gemm_f32(0, 0, 1, 1, 1, 1.0f, nullptr, 1, 0, nullptr, 1, 0, 0.0f, &C,
                  1, 0, 0);
  EXPECT_EQ(C, 3.0f);
}

} // namespace
