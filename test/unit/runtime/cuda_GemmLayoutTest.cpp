// The row-major → column-major translation of runtime/cuda/GemmLayout.h,
// proved without a GPU: a naive column-major GEMM that reads only the
// translated parameters (what cuBLASLt would get: operand order, transpose
// flags, m/n/k, rows/cols/ld/batch stride per layout) must write exactly
// the bytes a naive row-major GEMM of the manifest's meaning writes, for
// every transpose combination, batches with broadcast (stride 0) operands,
// leading dimensions larger than the row length, and 1-sized dimensions.
// Both sum over k in the same order, so the comparison is exact.
#include "runtime/cuda/GemmLayout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace modelc::rt::test {
namespace {

using cuda::ColumnMajorGemm;
using cuda::ColumnMajorOperand;
using cuda::RowMajorGemm;

// The manifest's meaning (ProgramABI.h), on an arena of doubles.
void rowMajorReference(const RowMajorGemm &g, double alpha, double beta,
                       std::vector<double> &arena) {
  const double *A = arena.data() + g.a / 8, *B = arena.data() + g.b / 8;
  double *C = arena.data() + g.c / 8;
  for (int64_t i = 0; i < g.batch; ++i)
    for (int64_t r = 0; r < g.m; ++r)
      for (int64_t c = 0; c < g.n; ++c) {
        double sum = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          double a = g.transA ? A[i * g.strideA + l * g.lda + r]
                              : A[i * g.strideA + r * g.lda + l];
          double b = g.transB ? B[i * g.strideB + c * g.ldb + l]
                              : B[i * g.strideB + l * g.ldb + c];
          sum += a * b;
        }
        double &out = C[i * g.strideC + r * g.ldc + c];
        out = alpha * sum + beta * out;
      }
}

// Element (row, col) of batch i of a column-major layout.
double &at(std::vector<double> &arena, const ColumnMajorOperand &x, int64_t i,
           int64_t row, int64_t col) {
  EXPECT_LT(row, x.rows);
  EXPECT_LT(col, x.cols);
  return arena[x.offset / 8 + i * x.batchStride + col * x.ld + row];
}

// cuBLASLt's meaning: D = alpha op(A) op(B) + beta C, column-major, with
// the layouts' own rows and cols, D and C the same matrix.
void columnMajorReference(const ColumnMajorGemm &g, double alpha, double beta,
                          std::vector<double> &arena) {
  // What cublasLtMatrixLayoutCreate and cublasLtMatmul require.
  for (const ColumnMajorOperand *x : {&g.a, &g.b, &g.c})
    EXPECT_GE(x->ld, x->rows);
  EXPECT_EQ(g.transA ? g.a.cols : g.a.rows, g.m);
  EXPECT_EQ(g.transA ? g.a.rows : g.a.cols, g.k);
  EXPECT_EQ(g.transB ? g.b.cols : g.b.rows, g.k);
  EXPECT_EQ(g.transB ? g.b.rows : g.b.cols, g.n);
  EXPECT_EQ(g.c.rows, g.m);
  EXPECT_EQ(g.c.cols, g.n);
  for (int64_t i = 0; i < g.batch; ++i)
    for (int64_t r = 0; r < g.m; ++r)
      for (int64_t c = 0; c < g.n; ++c) {
        double sum = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          double a =
              g.transA ? at(arena, g.a, i, l, r) : at(arena, g.a, i, r, l);
          double b =
              g.transB ? at(arena, g.b, i, c, l) : at(arena, g.b, i, l, c);
          sum += a * b;
        }
        double &out = at(arena, g.c, i, r, c);
        out = alpha * sum + beta * out;
      }
}

enum class Broadcast { None, A, B };

// A, B and C one after another in an arena of doubles, each with `pad`
// extra elements per row and a few between batches; A or B shared by all
// batches when broadcast.
RowMajorGemm layout(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                    int64_t batch, int64_t pad, Broadcast broadcast,
                    size_t &arenaElements) {
  RowMajorGemm g;
  g.transA = transA;
  g.transB = transB;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  cuda::StoredMatrix a = cuda::storedA(g), b = cuda::storedB(g);
  g.lda = a.cols + pad;
  g.ldb = b.cols + pad;
  g.ldc = n + pad;
  g.strideA = broadcast == Broadcast::A ? 0 : a.rows * g.lda + 3;
  g.strideB = broadcast == Broadcast::B ? 0 : b.rows * g.ldb + 1;
  g.strideC = m * g.ldc + 2;
  uint64_t next = 0;
  auto place = [&](uint64_t &offset, int64_t rows, int64_t cols, int64_t ld,
                   int64_t stride) {
    offset = next * 8;
    next += *cuda::spanElements(rows, cols, ld, stride, batch) + 5;
  };
  place(g.a, a.rows, a.cols, g.lda, g.strideA);
  place(g.b, b.rows, b.cols, g.ldb, g.strideB);
  place(g.c, m, n, g.ldc, g.strideC);
  arenaElements = next;
  return g;
}

TEST(CudaGemmLayout, ColumnMajorCallComputesTheRowMajorGemm) {
  struct Shape {
    int64_t m, n, k;
  };
  int cases = 0;
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (Shape s : {Shape{5, 7, 3}, Shape{1, 1, 1}, Shape{4, 1, 6},
                      Shape{1, 8, 2}, Shape{6, 3, 1}})
        for (int64_t batch : {1, 3})
          for (int64_t pad : {0, 3})
            for (Broadcast broadcast :
                 {Broadcast::None, Broadcast::A, Broadcast::B}) {
              size_t elements = 0;
              RowMajorGemm g = layout(transA, transB, s.m, s.n, s.k, batch, pad,
                                      broadcast, elements);
              std::vector<double> expected(elements);
              for (size_t i = 0; i < elements; ++i)
                expected[i] = std::sin(double(i) * 1.7 + 0.3);
              std::vector<double> actual = expected;
              rowMajorReference(g, 1.5, -0.25, expected);
              columnMajorReference(cuda::toColumnMajor(g), 1.5, -0.25, actual);
              // Every byte, padding included: nothing else is written.
              ASSERT_EQ(actual, expected)
                  << "transA " << transA << " transB " << transB << " m " << s.m
                  << " n " << s.n << " k " << s.k << " batch " << batch
                  << " pad " << pad << " broadcast " << int(broadcast);
              ++cases;
            }
  EXPECT_EQ(cases, 4 * 5 * 2 * 2 * 3);
}

TEST(CudaGemmLayout, OperandsSwapAndKeepTheirTransposes) {
  RowMajorGemm g;
  g.transA = true;
  g.m = 2;
  g.n = 3;
  g.k = 4;
  g.a = 64;
  g.lda = 5; // A^T stored 4 x 2
  g.strideA = 40;
  g.b = 128;
  g.ldb = 3; // B stored 4 x 3
  g.c = 256;
  g.ldc = 6;
  g.strideC = 12;
  g.batch = 2;
  ColumnMajorGemm cm = cuda::toColumnMajor(g);
  EXPECT_FALSE(cm.transA); // cuBLASLt's A is our B
  EXPECT_TRUE(cm.transB);  // cuBLASLt's B is our A
  EXPECT_EQ(cm.m, 3);
  EXPECT_EQ(cm.n, 2);
  EXPECT_EQ(cm.k, 4);
  EXPECT_EQ(cm.batch, 2);
  EXPECT_EQ(cm.a.offset, 128u);
  EXPECT_EQ(cm.a.rows, 3);
  EXPECT_EQ(cm.a.cols, 4);
  EXPECT_EQ(cm.a.ld, 3);
  EXPECT_EQ(cm.a.batchStride, 0);
  EXPECT_EQ(cm.b.offset, 64u);
  EXPECT_EQ(cm.b.rows, 2);
  EXPECT_EQ(cm.b.cols, 4);
  EXPECT_EQ(cm.b.ld, 5);
  EXPECT_EQ(cm.b.batchStride, 40);
  EXPECT_EQ(cm.c.offset, 256u);
  EXPECT_EQ(cm.c.rows, 3);
  EXPECT_EQ(cm.c.cols, 2);
  EXPECT_EQ(cm.c.ld, 6);
  EXPECT_EQ(cm.c.batchStride, 12);
}

TEST(CudaGemmLayout, SpanElements) {
  EXPECT_EQ(*cuda::spanElements(4, 8, 8, 0, 1), 32u);
  EXPECT_EQ(*cuda::spanElements(4, 8, 10, 0, 1), 38u);
  EXPECT_EQ(*cuda::spanElements(4, 8, 10, 100, 3), 238u);
  EXPECT_EQ(*cuda::spanElements(4, 8, 10, 0, 3), 38u); // broadcast
  EXPECT_EQ(*cuda::spanElements(1, 8, 8, 0, 1), 8u);
  EXPECT_FALSE(cuda::spanElements(4, 8, 7, 0, 1));  // ld < cols
  EXPECT_FALSE(cuda::spanElements(0, 8, 8, 0, 1));  // no rows
  EXPECT_FALSE(cuda::spanElements(4, 8, 8, -1, 2)); // negative stride
  EXPECT_FALSE(cuda::spanElements(4, 8, 8, 0, 0));  // no batch
  EXPECT_FALSE(cuda::spanElements(int64_t(1) << 44, 1 << 20, 1 << 20, 0, 1));
  EXPECT_FALSE(cuda::spanElements(2, 2, 2, int64_t(1) << 62, 4));
}

TEST(CudaGemmLayout, Alignment) {
  EXPECT_EQ(cuda::alignmentOf(0, 0), 256u);
  EXPECT_EQ(cuda::alignmentOf(512, 0), 256u);
  EXPECT_EQ(cuda::alignmentOf(64, 0), 64u);
  EXPECT_EQ(cuda::alignmentOf(1024, 4), 4u); // batch i starts at 1024 + 4i
  EXPECT_EQ(cuda::alignmentOf(1024, 48), 16u);
  EXPECT_EQ(cuda::alignmentOf(8, 1024), 8u);
}

} // namespace
} // namespace modelc::rt::test
