// Row-major GEMMs as column-major cuBLASLt calls (GemmLayout.h).
#include "runtime/cuda/GemmLayout.h"

#include <limits>

namespace modelc::rt::cuda {

StoredMatrix storedA(const RowMajorGemm &g) {
  return g.transA ? StoredMatrix{g.k, g.m} : StoredMatrix{g.m, g.k};
}
StoredMatrix storedB(const RowMajorGemm &g) {
  return g.transB ? StoredMatrix{g.n, g.k} : StoredMatrix{g.k, g.n};
}
StoredMatrix storedC(const RowMajorGemm &g) { return {g.m, g.n}; }

namespace {
/// A row-major stored matrix read as column-major: rows and columns swap,
/// the leading dimension stays.
ColumnMajorOperand asColumnMajor(StoredMatrix stored, uint64_t offset,
                                 int64_t ld, int64_t stride) {
  return {offset, stored.cols, stored.rows, ld, stride};
}
} // namespace

ColumnMajorGemm toColumnMajor(const RowMajorGemm &g) {
  ColumnMajorGemm out;
  // C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m). B stored row-major as
  // k x n (no transpose) is column-major n x k: already op(B)^T, so
  // cuBLASLt's first operand needs no transpose exactly when B needs none.
  out.transA = g.transB;
  out.transB = g.transA;
  out.m = g.n;
  out.n = g.m;
  out.k = g.k;
  out.batch = g.batch;
  out.a = asColumnMajor(storedB(g), g.b, g.ldb, g.strideB);
  out.b = asColumnMajor(storedA(g), g.a, g.lda, g.strideA);
  out.c = asColumnMajor(storedC(g), g.c, g.ldc, g.strideC);
  return out;
}

std::optional<uint64_t> spanElements(int64_t rows, int64_t cols, int64_t ld,
                                     int64_t stride, int64_t batch) {
  if (rows < 1 || cols < 1 || batch < 1 || ld < cols || stride < 0)
    return std::nullopt;
  unsigned __int128 span =
      (unsigned __int128)(batch - 1) * (unsigned __int128)stride +
      (unsigned __int128)(rows - 1) * (unsigned __int128)ld +
      (unsigned __int128)cols;
  if (span > (unsigned __int128)std::numeric_limits<int64_t>::max())
    return std::nullopt;
  return uint64_t(span);
}

uint32_t alignmentOf(uint64_t offset, uint64_t strideBytes) {
  uint64_t bits = offset | strideBytes | 256;
  return uint32_t(bits & (~bits + 1));
}

} // namespace modelc::rt::cuda
