// The interface between a program's generated object file and the runtime
// (docs/pipeline.md, "The program ABI"). Plain C so that both sides agree
// on symbol names without sharing any code.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A compiled function: reads and writes the arena (64-byte aligned, the
/// manifest's arena_bytes long) and nothing else.
typedef void (*modelc_fn)(uint8_t *arena);

/// The entry of a kernel (docs/codegen/kernels.md): runs it with its
/// arguments as a GPU launch step records them (GpuStep.args): for each
/// parameter of the kernel (GpuKernel.params), a buffer's byte offset in
/// the arena or a 64-bit value.
typedef void (*modelc_kernel_fn)(uint8_t *arena, const uint64_t *args);

/// Defined by the generated object file.
extern const uint8_t modelc_manifest[];   /* flatbuffer, schema/manifest.fbs */
extern const uint64_t modelc_manifest_size;
extern const modelc_fn modelc_functions[];
extern const uint64_t modelc_num_functions;
/// The distinct kernels of the program functions (docs/codegen/kernels.md)
/// in index order: kernel i of the CPU program, a piece of work that one or
/// more steps run on their own arguments. Only kernelcheck calls them: it
/// runs a step on the CPU and on the GPU from the same arena and compares.
extern const modelc_kernel_fn modelc_cpu_kernels[];
extern const uint64_t modelc_num_cpu_kernels;

/// Defined by the runtime, called by generated code: row-major
/// C_i = alpha * op(A_i) * op(B_i) + beta * C_i for i < batch, where X_i
/// starts at X + i * strideX (elements) and op transposes when trans != 0.
/// op(A) is M x K, op(B) is K x N, C is M x N.
void modelc_gemm_f32(int64_t transA, int64_t transB, int64_t M, int64_t N,
                     int64_t K, float alpha, const float *A, int64_t lda,
                     int64_t strideA, const float *B, int64_t ldb,
                     int64_t strideB, float beta, float *C, int64_t ldc,
                     int64_t strideC, int64_t batch);
void modelc_gemm_f64(int64_t transA, int64_t transB, int64_t M, int64_t N,
                     int64_t K, double alpha, const double *A, int64_t lda,
                     int64_t strideA, const double *B, int64_t ldb,
                     int64_t strideB, double beta, double *C, int64_t ldc,
                     int64_t strideC, int64_t batch);
/// The same with bf16 or f16 A and B (their bits) and an f32 C: the exact
/// f32 values of A and B multiplied and accumulated in f32, as tensor cores
/// and cuBLASLt with CUBLAS_COMPUTE_32F compute them.
void modelc_gemm_bf16(int64_t transA, int64_t transB, int64_t M, int64_t N,
                      int64_t K, float alpha, const uint16_t *A, int64_t lda,
                      int64_t strideA, const uint16_t *B, int64_t ldb,
                      int64_t strideB, float beta, float *C, int64_t ldc,
                      int64_t strideC, int64_t batch);
void modelc_gemm_f16(int64_t transA, int64_t transB, int64_t M, int64_t N,
                     int64_t K, float alpha, const uint16_t *A, int64_t lda,
                     int64_t strideA, const uint16_t *B, int64_t ldb,
                     int64_t strideB, float beta, float *C, int64_t ldc,
                     int64_t strideC, int64_t batch);

/// Defined by the runtime, called by generated code: one bucket of
/// gradients averaged over the data-parallel ranks (mdlrt.all_reduce,
/// docs/passes/data-parallel.md). Each add names one contiguous buffer of
/// `count` elements; modelc_all_reduce_bucket then reduces the buffers
/// added since the last bucket as one collective, in place, on the last
/// micro-batch of an optimizer step, and forgets them. With one rank, or on
/// another micro-batch, it changes nothing.
void modelc_all_reduce_add_f32(float *data, int64_t count);
void modelc_all_reduce_add_f64(double *data, int64_t count);
void modelc_all_reduce_bucket(int64_t bucket);

#ifdef __cplusplus
}
#endif
