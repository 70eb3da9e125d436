// The manifest's row-major GEMMs in cuBLASLt's column-major terms, as pure
// functions (no CUDA): a row-major R x C matrix with leading dimension ld is
// the column-major C x R matrix with the same ld, so row-major
// C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLASLt gets B as
// its first operand and A as its second, m and n swapped, each operand
// keeping its own transpose flag.
#pragma once

#include <cstdint>
#include <optional>

namespace modelc::rt::cuda {

/// C_i = alpha op(A_i) op(B_i) + beta C_i for i < batch, row-major, as
/// modelc_gemm_f32 of ProgramABI.h: op(A) is m x k, op(B) k x n, C m x n;
/// a, b, c are byte offsets in the arena; ld* and stride* are in elements,
/// stride 0 = the same matrix for every i.
struct RowMajorGemm {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  uint64_t a = 0, b = 0, c = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t strideA = 0, strideB = 0, strideC = 0;
  int64_t batch = 1;
};

/// One operand of a cuBLASLt call: cublasLtMatrixLayoutCreate(rows, cols,
/// ld) of a column-major matrix, its batch stride in elements and where it
/// starts in the arena.
struct ColumnMajorOperand {
  uint64_t offset = 0;
  int64_t rows = 0, cols = 0, ld = 0;
  int64_t batchStride = 0;
};

/// D_i = op(A_i) op(B_i) (scaled) in cuBLASLt's column-major terms: op(A)
/// is m x k, op(B) k x n, C and D are m x n.
struct ColumnMajorGemm {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  ColumnMajorOperand a, b, c;
};

ColumnMajorGemm toColumnMajor(const RowMajorGemm &gemm);

/// How a row-major operand is stored: op(A) m x k is A (m x k) or, with
/// transA, A^T stored as k x m.
struct StoredMatrix {
  int64_t rows = 0, cols = 0;
};
StoredMatrix storedA(const RowMajorGemm &gemm);
StoredMatrix storedB(const RowMajorGemm &gemm);
StoredMatrix storedC(const RowMajorGemm &gemm);

/// Elements from a batch's first element to its last one's end, for
/// `batch` row-major `rows` x `cols` matrices with leading dimension `ld`,
/// `stride` elements apart: (batch-1) stride + (rows-1) ld + cols. Nothing
/// when it does not fit in 63 bits or an argument is out of range
/// (rows, cols, batch < 1; ld < cols; stride < 0).
std::optional<uint64_t> spanElements(int64_t rows, int64_t cols, int64_t ld,
                                     int64_t stride, int64_t batch);

/// The alignment (a power of two, at most 256) of every batch's matrix that
/// starts at arena offset `offset` with batches `strideBytes` apart, for
/// cuBLASLt's CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES; the arena itself
/// is 256-byte aligned.
uint32_t alignmentOf(uint64_t offset, uint64_t strideBytes);

} // namespace modelc::rt::cuda
