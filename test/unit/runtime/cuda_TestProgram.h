// A small program with a GpuProgram section for the CUDA tests, described
// by plain values that each test changes before building the manifest:
// functions fwd_bwd (launch k0, a GEMM, launch k1) and update (launch k0),
// a 4096-byte CPU arena and a 1024-byte cuBLASLt workspace after it.
#pragma once

#include "manifest_generated.h"
#include "runtime/driver/Manifest.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace modelc::rt::test {

struct TestImage {
  std::string arch;
  bool cubin = false;
  /// None: text that declares the spec's kernels of its part with their
  /// parameters (`.entry k0(.param .u64 p0, ...)`), as the fake libcuda
  /// reads them.
  std::optional<std::vector<uint8_t>> data;
  uint32_t part = 0;
};

struct TestKernel {
  std::string name;
  uint32_t grid = 1, block = 32, sharedBytes = 0;
  /// Per parameter: a buffer (true) or a 64-bit value.
  std::vector<bool> buffers = {true};
  uint32_t part = 0;
  /// Per parameter its bytes; none: 16 per buffer, 8 per value.
  std::vector<uint64_t> bytes;
};

struct TestGemm {
  /// C's (F32 or F64); A's and B's (the same, or BF16/F16 with an F32 C).
  modelc::manifest::DType dtype = modelc::manifest::DType::F32;
  modelc::manifest::DType ab = modelc::manifest::DType::F32;
  bool transA = false, transB = false;
  int64_t m = 4, n = 8, k = 16;
  double alpha = 1, beta = 0;
  uint64_t a = 0;
  int64_t lda = 16, strideA = 0;
  uint64_t b = 256;
  int64_t ldb = 8, strideB = 0;
  uint64_t c = 1024;
  int64_t ldc = 8, strideC = 0;
  int64_t batch = 1;
};

/// An all-reduce buffer: `bytes` at `offset` of f32 or f64 elements.
struct TestWrite {
  uint64_t offset = 0, bytes = 0;
  modelc::manifest::DType dtype = modelc::manifest::DType::F32;
};

struct TestStep {
  bool gemm = false;
  uint32_t kernel = 0;
  TestGemm gemmSpec;
  /// An AllReduce step of bucket `bucket` over `writes` when not empty.
  int64_t bucket = 0;
  std::vector<TestWrite> writes;
  /// A launch's arguments: arena offsets of buffers, values.
  std::vector<uint64_t> args;
  static TestStep launch(uint32_t k, std::vector<uint64_t> args = {0}) {
    return {false, k, {}, 0, {}, std::move(args)};
  }
  static TestStep matmul(TestGemm g) { return {true, 0, g, 0, {}, {}}; }
  static TestStep allReduce(int64_t bucket, std::vector<TestWrite> writes) {
    return {false, 0, {}, bucket, std::move(writes), {}};
  }
};

struct TestFunction {
  std::string symbol;
  std::vector<TestStep> steps;
};

struct GpuProgramSpec {
  bool withGpu = true;
  uint64_t cpuArena = 4096, gpuArena = 5120;
  uint64_t workspaceOffset = 4096, workspaceBytes = 1024;
  std::vector<TestImage> images = {
      {"sm_80", false}, {"sm_90", false}, {"sm_90", true}};
  std::vector<TestKernel> kernels = {{"k0", 4, 256}, {"k1", 1, 32}};
  /// The GPU section's functions; the manifest always has fwd_bwd and update.
  std::vector<TestFunction> functions = {
      {"fwd_bwd",
       {TestStep::launch(0), TestStep::matmul({}), TestStep::launch(1)}},
      {"update", {TestStep::launch(0)}}};
};

/// Row-major GEMMs of every transpose combination, batched (2) with a
/// broadcast B, padded leading dimensions and beta 1, in a 2048-byte arena
/// (A at 0, B at 512, C at 1024): what the fake and the real-GPU tests
/// check against the CPU's GEMM. `ab` is A's and B's dtype; C is F64 with
/// F64 operands, else F32.
std::vector<TestGemm> transposeGemms(modelc::manifest::DType ab);

/// For 16-bit GEMMs: a 2048-byte arena whose first 1024 bytes are bf16 or
/// f16 values (of `g.ab`; A and B lie there) and the rest f32 (C).
std::vector<uint8_t> gemm16Arena(const TestGemm &g);
/// The CPU's modelc_gemm_bf16/_f16 of `g` on `arena`.
void referenceGemm16(const TestGemm &g, uint8_t *arena);
/// The 16-bit half byte for byte equal, C's floats within 1e-5 of
/// `expected` relative to max(1, |expected|).
void expectGemm16Result(const std::vector<uint8_t> &actual,
                        const std::vector<uint8_t> &expected,
                        const TestGemm &g);

/// The CPU's GEMM (modelc_gemm_f32 or _f64) of `g` on `arena`, whose
/// elements are floats or doubles.
template <typename T> void referenceGemm(const TestGemm &g, T *arena);
/// Every element of `actual` within 1e-5 (f32) or 1e-12 (f64) of
/// `expected`, relative to max(1, |expected|); the failure names `g`.
template <typename T>
void expectGemmResult(const std::vector<T> &actual,
                      const std::vector<T> &expected, const TestGemm &g);

std::vector<uint8_t> buildGpuManifest(const GpuProgramSpec &spec);

/// Loads the manifest of `spec` (it must verify as a manifest).
Manifest loadGpuManifest(const GpuProgramSpec &spec);

/// Sets an environment variable for the scope, then restores it.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value);
  ~ScopedEnv();

private:
  std::string name_;
  std::optional<std::string> old_;
};

} // namespace modelc::rt::test
