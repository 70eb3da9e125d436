// modelc_gemm_f32/_f64/_bf16/_f16 against a naive triple loop: every
// transpose combination, batch > 1 with padded strides, leading dimensions
// larger than the minimum, alpha/beta not 0/1. Tolerance: 1e-5 relative
// (f32), 1e-12 (f64), since only the summation order differs; the 16-bit
// GEMMs, which accumulate in f32, (K + 2) 2^-24 (|alpha| sum |a b| + |C|). The 16-bit GEMMs also with K cut into
// several blocks, and bitwise equal to sgemm on the widened operands when
// K is one block.
#include "runtime/cpu/Gemm.h"

#include <modelc/ProgramABI.h>


#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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

/// The value of 16-bit float bits, decoded independently of the runtime.
double decode16(bool bf16, uint16_t bits) {
  int exponentBits = bf16 ? 8 : 5, fractionBits = bf16 ? 7 : 10;
  int bias = (1 << (exponentBits - 1)) - 1;
  int exponent = (bits >> fractionBits) & ((1 << exponentBits) - 1);
  int fraction = bits & ((1 << fractionBits) - 1);
  double sign = bits & 0x8000 ? -1 : 1;
  if (exponent == (1 << exponentBits) - 1)
    return fraction ? NAN : sign * INFINITY;
  if (exponent == 0)
    return sign * std::ldexp(fraction, 1 - bias - fractionBits);
  return sign * std::ldexp(fraction + (1 << fractionBits),
                           exponent - bias - fractionBits);
}

/// Finite 16-bit values of magnitude about 2^-4 ... 2^4 (subnormals too for
/// f16 every 11th element), both signs.
std::vector<uint16_t> pattern16(bool bf16, int64_t n, int seed) {
  std::vector<uint16_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint32_t h = uint32_t(i * 2654435761u + uint32_t(seed) * 40503u);
    uint16_t sign = (h & 1) << 15;
    if (bf16)
      v[size_t(i)] = sign | uint16_t((123 + (h >> 1) % 9) << 7) |
                     uint16_t((h >> 8) & 0x7f);
    else
      v[size_t(i)] = sign |
                     uint16_t((i % 11 == 0 ? 0 : 11 + (h >> 1) % 9) << 10) |
                     uint16_t((h >> 8) & 0x3ff);
  }
  return v;
}

std::vector<float> widen16(bool bf16, const std::vector<uint16_t> &v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = float(decode16(bf16, v[i]));
  return out;
}

/// gemm16 with `block` elements of scratch against the naive loop on the
/// decoded values; with `bitwise`, against sgemm on them exactly.
void check16(bool bf16, int64_t K, size_t block, bool bitwise) {
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1}) {
      Case<float> c{ta, tb};
      c.K = K;
      std::vector<uint16_t> A = pattern16(bf16, c.batch * c.strideA(), 1);
      std::vector<uint16_t> B = pattern16(bf16, c.batch * c.strideB(), 2);
      std::vector<float> C = pattern<float>(c.batch * c.strideC(), 3);
      std::vector<float> wideA = widen16(bf16, A), wideB = widen16(bf16, B);
      std::vector<float> expected = C;
      if (bitwise)
        modelc_gemm_f32(ta, tb, c.M, c.N, c.K, c.alpha, wideA.data(), c.lda(),
                        c.strideA(), wideB.data(), c.ldb(), c.strideB(),
                        c.beta, expected.data(), c.ldc(), c.strideC(),
                        c.batch);
      else
        reference(c, wideA, wideB, expected);
      // f32 summation of K products: at most about K * 2^-24 * sum |a b|
      // from the exact sum (the reference sums in f64).
      std::vector<float> absA(wideA.size()), absB(wideB.size());
      for (size_t i = 0; i < absA.size(); ++i)
        absA[i] = std::fabs(wideA[i]);
      for (size_t i = 0; i < absB.size(); ++i)
        absB[i] = std::fabs(wideB[i]);
      Case<float> magnitude = c;
      magnitude.alpha = std::fabs(c.alpha);
      magnitude.beta = 0;
      std::vector<float> bound(C.size(), 0.0f);
      reference(magnitude, absA, absB, bound);
      modelc::rt::gemm16(bf16, ta, tb, c.M, c.N, c.K, c.alpha, A.data(),
                         c.lda(), c.strideA(), B.data(), c.ldb(), c.strideB(),
                         c.beta, C.data(), c.ldc(), c.strideC(), c.batch,
                         block);
      for (size_t i = 0; i < C.size(); ++i) {
        if (bitwise)
          ASSERT_EQ(std::memcmp(&C[i], &expected[i], 4), 0)
              << C[i] << " vs " << expected[i] << " transA " << ta
              << " transB " << tb << " element " << i;
        else
          ASSERT_NEAR(C[i], expected[i],
                      (K + 2) * std::ldexp(1.0, -24) *
                          (bound[i] + std::fabs(expected[i])))
              << "transA " << ta << " transB " << tb << " element " << i;
      }
    }
}

TEST(CpuGemm, Bf16AndF16MatchNaiveLoopForAllTransposes) {
  for (bool bf16 : {true, false}) {
    check16(bf16, 3, modelc::rt::kGemm16Block, false);
    check16(bf16, 40, modelc::rt::kGemm16Block, false);
  }
}

TEST(CpuGemm, Bf16AndF16InSeveralBlocksOfK) {
  // M + N = 12: a block of 12 * 6 elements cuts K = 40 into 7 blocks (the
  // last one of 4), a block of 1 element into 40 blocks of one.
  for (bool bf16 : {true, false}) {
    check16(bf16, 40, 12 * 6, false);
    check16(bf16, 40, 1, false);
  }
}

TEST(CpuGemm, Bf16AndF16InOneBlockAreSgemmOnTheWidenedValues) {
  for (bool bf16 : {true, false})
    check16(bf16, 40, modelc::rt::kGemm16Block, true);
}

TEST(CpuGemm, F16InfinityAndNaNPropagate) {
  // 0x7c00 is +inf, 0x7e00 NaN: the product of a row holding inf is inf
  // (or NaN with a zero or opposite-signed infinity), as on a GPU.
  std::vector<uint16_t> A = {0x7c00, 0x3c00}, B = {0x3c00, 0x3c00}; // 1 x 2
  float C = 0;
  modelc_gemm_f16(0, 1, 1, 1, 2, 1.0f, A.data(), 2, 0, B.data(), 2, 0, 0.0f,
                  &C, 1, 0, 1);
  EXPECT_TRUE(std::isinf(C) && C > 0) << C;
  A[1] = 0x7e00;
  modelc_gemm_f16(0, 1, 1, 1, 2, 1.0f, A.data(), 2, 0, B.data(), 2, 0, 0.0f,
                  &C, 1, 0, 1);
  EXPECT_TRUE(std::isnan(C)) << C;
  std::vector<uint16_t> bA = {0x7f80, 0x3f80}, bB = {0x3f80, 0x3f80}; // bf16
  modelc_gemm_bf16(0, 1, 1, 1, 2, 1.0f, bA.data(), 2, 0, bB.data(), 2, 0, 0.0f,
                   &C, 1, 0, 1);
  EXPECT_TRUE(std::isinf(C) && C > 0) << C;
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
