// The CPU's matrix multiplication (modelc_gemm_f32/_f64/_bf16/_f16 of
// ProgramABI.h) is OpenBLAS; this header exposes what the driver reports
// about it and the 16-bit GEMM's blocking, for tests.
#pragma once

#include "runtime/support/Status.h"

#include <cstddef>
#include <cstdint>

namespace modelc::rt {

/// modelc_gemm_bf16/_f16 with at most `blockElements` f32 elements of
/// converted operands at a time (the entry points pass kGemm16Block): K is
/// cut into blocks of kb = blockElements / (M + N) (at least 1); each
/// block's slices of A and B are widened to f32 and multiplied by
/// OpenBLAS's sgemm into C, beta for the first block and 1 after it.
constexpr size_t kGemm16Block = size_t(1) << 22; // 16 MiB of f32
void gemm16(bool bf16, int64_t transA, int64_t transB, int64_t M, int64_t N,
            int64_t K, float alpha, const uint16_t *A, int64_t lda,
            int64_t strideA, const uint16_t *B, int64_t ldb, int64_t strideB,
            float beta, float *C, int64_t ldc, int64_t strideC, int64_t batch,
            size_t blockElements);

/// The number of threads OpenBLAS uses for one GEMM.
int gemmThreadCount();

/// Runs one multi-threaded GEMM at start-up, so that OpenBLAS allocates its
/// buffers (hundreds of MiB of address space) before the first step. Under
/// an address-space limit too small for them OpenBLAS spins instead of
/// failing; a watchdog then ends the program with exit 2 and the limit.
Status reserveGemmBuffers();

} // namespace modelc::rt
