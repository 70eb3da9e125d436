// Builds the manifest of cuda_TestProgram.h with FlatBufferBuilder.
#include "cuda_TestProgram.h"

#include <modelc/ProgramABI.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <cstdlib>

namespace modelc::rt::test {

namespace fb = modelc::manifest;

namespace {

void noop(uint8_t *) {}
const modelc_fn kFunctions[] = {noop, noop};

flatbuffers::Offset<fb::GpuGemm> buildGemm(flatbuffers::FlatBufferBuilder &fbb,
                                           const TestGemm &g) {
  return fb::CreateGpuGemm(fbb, g.dtype, g.transA, g.transB, g.m, g.n, g.k,
                           g.alpha, g.beta, g.a, g.lda, g.strideA, g.b, g.ldb,
                           g.strideB, g.c, g.ldc, g.strideC, g.batch, g.ab);
}

/// The text the fake libcuda reads the kernels' parameters from.
std::vector<uint8_t> declareKernels(const GpuProgramSpec &spec, uint32_t part) {
  std::string text = "// PTX";
  for (const TestKernel &k : spec.kernels) {
    if (k.part != part)
      continue;
    text += " .entry " + k.name + "(";
    for (size_t i = 0; i < k.buffers.size(); ++i)
      text +=
          (i ? ", " : "") + std::string(".param .u64 p") + std::to_string(i);
    text += ")";
  }
  return {text.begin(), text.end()};
}

flatbuffers::Offset<fb::GpuProgram>
buildGpu(flatbuffers::FlatBufferBuilder &fbb, const GpuProgramSpec &spec) {
  std::vector<flatbuffers::Offset<fb::GpuImage>> images;
  for (const TestImage &image : spec.images) {
    std::vector<uint8_t> data =
        image.data ? *image.data : declareKernels(spec, image.part);
    images.push_back(fb::CreateGpuImageDirect(
        fbb, image.arch.c_str(),
        image.cubin ? fb::GpuImageKind::Cubin : fb::GpuImageKind::Ptx, &data,
        image.part));
  }
  std::vector<flatbuffers::Offset<fb::GpuKernel>> kernels;
  for (const TestKernel &k : spec.kernels) {
    std::vector<fb::GpuParamKind> params;
    std::vector<uint64_t> bytes = k.bytes;
    for (bool buffer : k.buffers) {
      params.push_back(buffer ? fb::GpuParamKind::Buffer
                              : fb::GpuParamKind::U64);
      if (k.bytes.empty())
        bytes.push_back(buffer ? 16 : 8);
    }
    kernels.push_back(fb::CreateGpuKernelDirect(fbb, k.name.c_str(), k.grid,
                                                k.block, k.sharedBytes, 0,
                                                &params, k.part, &bytes));
  }
  std::vector<flatbuffers::Offset<fb::GpuFunction>> functions;
  for (const TestFunction &f : spec.functions) {
    std::vector<flatbuffers::Offset<fb::GpuStep>> steps;
    for (const TestStep &s : f.steps) {
      if (!s.writes.empty()) {
        std::vector<fb::GpuWrite> writes;
        for (const TestWrite &w : s.writes)
          writes.emplace_back(w.offset, w.bytes, w.dtype);
        steps.push_back(fb::CreateGpuStepDirect(
            fbb, fb::GpuStepKind::AllReduce, 0, 0, &writes,
            fb::CreateGpuAllReduce(fbb, s.bucket)));
        continue;
      }
      steps.push_back(
          s.gemm ? fb::CreateGpuStep(fbb, fb::GpuStepKind::Gemm, 0,
                                     buildGemm(fbb, s.gemmSpec))
                 : fb::CreateGpuStepDirect(fbb, fb::GpuStepKind::Launch,
                                           s.kernel, 0, nullptr, 0, &s.args));
    }
    functions.push_back(
        fb::CreateGpuFunctionDirect(fbb, f.symbol.c_str(), &steps));
  }
  return fb::CreateGpuProgramDirect(fbb, spec.gpuArena, spec.workspaceOffset,
                                    spec.workspaceBytes, &images, &kernels,
                                    &functions);
}

} // namespace

std::vector<TestGemm> transposeGemms(modelc::manifest::DType ab) {
  std::vector<TestGemm> gemms;
  for (bool transA : {false, true})
    for (bool transB : {false, true}) {
      TestGemm g;
      g.dtype = ab == fb::DType::F64 ? fb::DType::F64 : fb::DType::F32;
      g.ab = ab;
      g.transA = transA;
      g.transB = transB;
      g.m = 3, g.n = 5, g.k = 4, g.batch = 2;
      g.alpha = 0.5, g.beta = 1;
      g.lda = (transA ? g.m : g.k) + 1;
      g.ldb = (transB ? g.k : g.n) + 2;
      g.ldc = g.n + 1;
      g.strideA = 32, g.strideB = 0, g.strideC = 24;
      g.a = 0, g.b = 512, g.c = 1024;
      gemms.push_back(g);
    }
  return gemms;
}

template <typename T> void referenceGemm(const TestGemm &g, T *e) {
  if constexpr (sizeof(T) == 4)
    modelc_gemm_f32(g.transA, g.transB, g.m, g.n, g.k, float(g.alpha),
                    e + g.a / 4, g.lda, g.strideA, e + g.b / 4, g.ldb,
                    g.strideB, float(g.beta), e + g.c / 4, g.ldc, g.strideC,
                    g.batch);
  else
    modelc_gemm_f64(g.transA, g.transB, g.m, g.n, g.k, g.alpha, e + g.a / 8,
                    g.lda, g.strideA, e + g.b / 8, g.ldb, g.strideB, g.beta,
                    e + g.c / 8, g.ldc, g.strideC, g.batch);
}
template void referenceGemm<float>(const TestGemm &, float *);
template void referenceGemm<double>(const TestGemm &, double *);

std::vector<uint8_t> gemm16Arena(const TestGemm &g) {
  std::vector<uint8_t> arena(2048);
  for (size_t i = 0; i < 512; ++i) {
    float value = float(std::sin(double(i) * 0.7));
    uint16_t bits;
    if (g.ab == fb::DType::BF16) {
      uint32_t wide;
      std::memcpy(&wide, &value, 4);
      bits = uint16_t(wide >> 16); // truncated: any bf16 value will do
    } else {
      _Float16 half = _Float16(value);
      std::memcpy(&bits, &half, 2);
    }
    std::memcpy(arena.data() + 2 * i, &bits, 2);
  }
  for (size_t i = 0; i < 256; ++i) {
    float value = float(std::cos(double(i) * 0.3));
    std::memcpy(arena.data() + 1024 + 4 * i, &value, 4);
  }
  return arena;
}

void referenceGemm16(const TestGemm &g, uint8_t *arena) {
  auto *a = reinterpret_cast<const uint16_t *>(arena + g.a);
  auto *b = reinterpret_cast<const uint16_t *>(arena + g.b);
  auto *c = reinterpret_cast<float *>(arena + g.c);
  (g.ab == fb::DType::BF16 ? modelc_gemm_bf16 : modelc_gemm_f16)(
      g.transA, g.transB, g.m, g.n, g.k, float(g.alpha), a, g.lda, g.strideA,
      b, g.ldb, g.strideB, float(g.beta), c, g.ldc, g.strideC, g.batch);
}

void expectGemm16Result(const std::vector<uint8_t> &actual,
                        const std::vector<uint8_t> &expected,
                        const TestGemm &g) {
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_EQ(std::memcmp(actual.data(), expected.data(), 1024), 0)
      << "the 16-bit operands changed";
  for (size_t i = 1024; i < actual.size(); i += 4) {
    float x, e;
    std::memcpy(&x, actual.data() + i, 4);
    std::memcpy(&e, expected.data() + i, 4);
    ASSERT_NEAR(x, e, 1e-5 * std::max(1.0, std::abs(double(e))))
        << "byte " << i << " transA " << g.transA << " transB " << g.transB;
  }
}

template <typename T>
void expectGemmResult(const std::vector<T> &actual,
                      const std::vector<T> &expected, const TestGemm &g) {
  ASSERT_EQ(actual.size(), expected.size());
  double tolerance = sizeof(T) == 4 ? 1e-5 : 1e-12;
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i],
                tolerance * std::max(1.0, std::abs(double(expected[i]))))
        << "element " << i << " transA " << g.transA << " transB " << g.transB;
}
template void expectGemmResult<float>(const std::vector<float> &,
                                      const std::vector<float> &,
                                      const TestGemm &);
template void expectGemmResult<double>(const std::vector<double> &,
                                       const std::vector<double> &,
                                       const TestGemm &);

std::vector<uint8_t> buildGpuManifest(const GpuProgramSpec &spec) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Function>> functions = {
      fb::CreateFunctionDirect(fbb, "fwd_bwd", fb::FunctionKind::FwdBwd, "fit",
                               0),
      fb::CreateFunctionDirect(fbb, "update", fb::FunctionKind::Update, "fit",
                               1)};
  flatbuffers::Offset<fb::GpuProgram> gpu = 0;
  if (spec.withGpu)
    gpu = buildGpu(fbb, spec);
  std::vector<flatbuffers::Offset<flatbuffers::String>> targets = {
      fbb.CreateString(spec.withGpu ? "cuda" : "cpu")};
  fbb.Finish(fb::CreateProgramDirect(
      fbb, 1, "m.mdl", "h", &targets, spec.cpuArena, spec.cpuArena, nullptr,
      nullptr, nullptr, nullptr, nullptr, &functions, gpu));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

Manifest loadGpuManifest(const GpuProgramSpec &spec) {
  std::vector<uint8_t> bytes = buildGpuManifest(spec);
  Result<Manifest> m =
      Manifest::load(bytes.data(), bytes.size(), kFunctions, 2);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? m.take() : Manifest();
}

ScopedEnv::ScopedEnv(const char *name, const char *value) : name_(name) {
  if (const char *old = std::getenv(name))
    old_ = old;
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (old_)
    setenv(name_.c_str(), old_->c_str(), 1);
  else
    unsetenv(name_.c_str());
}

} // namespace modelc::rt::test
