// Device.h end to end against the fake libcuda/libcublasLt of
// fake/ (FakeCuda.h: host memory, kernels that count their launches, a
// column-major reference matmul): the image the device loads, the zeroed
// arena, upload/download through pinned staging in chunks, the step list
// run eagerly, then captured as a graph and replayed (or always eagerly
// with MODELC_CUDA_GRAPHS=0), row-major GEMMs computed through the
// cuBLASLt layouts and compared with modelc_gemm_f32/_f64/_bf16/_f16
// (tolerance 1e-5 relative for f32 and for 16-bit inputs accumulated in
// f32, 1e-12 for f64: only the summation order differs), the
// errors of open and run, and every handle released, also on error paths.
// What it cannot show: that the real driver and cuBLASLt behave like the
// fake (that needs a GPU).
#include "cuda_TestProgram.h"

#include "runtime/cuda/Device.h"

#include <modelc/ProgramABI.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <dlfcn.h>

namespace modelc::rt::test {
namespace {

namespace fb = modelc::manifest;
constexpr uint64_t kCounterOffset = 3072; // where the fake kernels count

template <typename T> std::vector<uint8_t> bytesOf(const std::vector<T> &v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

class CudaFakeDevice : public ::testing::Test {
protected:
  void SetUp() override {
    lib_ = dlopen(MODELC_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << dlerror();
    log_ = reinterpret_cast<const char *(*)()>(dlsym(lib_, "fakeCudaLog"));
    clear_ = reinterpret_cast<void (*)()>(dlsym(lib_, "fakeCudaClearLog"));
    live_ = reinterpret_cast<int (*)()>(dlsym(lib_, "fakeCudaLive"));
    ASSERT_TRUE(log_ && clear_ && live_);
    clear_();
    std::string cubin =
        "cubin90 .entry k0(.param .u64 p0) .entry k1(.param .u64 p0)";
    spec.images[2].data = std::vector<uint8_t>(cubin.begin(), cubin.end());
  }
  void TearDown() override {
    device.reset();
    EXPECT_EQ(live_(), 0) << "handles left alive; log: " << log_();
  }

  Result<std::unique_ptr<cuda::Device>> open(int ordinal = 0) {
    manifest_ = loadGpuManifest(spec);
    return cuda::Device::open(ordinal, manifest_);
  }
  void openOk() {
    Result<std::unique_ptr<cuda::Device>> d = open();
    ASSERT_TRUE(d.ok()) << d.status().message();
    device = d.take();
  }
  /// The calls seen since the last one, then forgets them.
  std::string calls() {
    std::string s = log_();
    clear_();
    return s;
  }
  uint32_t counter() {
    uint32_t n = 0;
    EXPECT_TRUE(device->download(kCounterOffset, &n, 4).ok());
    return n;
  }

  // Row-major GEMMs through the device, every transpose combination, batched
  // with a broadcast B and padded leading dimensions, accumulating (beta 1)
  // over three runs (eager, captured, replayed), against the CPU's GEMM.
  template <typename T> void checkGemms(fb::DType dtype) {
    for (const TestGemm &g : transposeGemms(dtype)) {
      spec.functions[0].steps = {TestStep::matmul(g)};
      device.reset();
      Result<std::unique_ptr<cuda::Device>> d = open();
      ASSERT_TRUE(d.ok()) << d.status().message();
      device = d.take();
      std::vector<T> arena(2048 / sizeof(T));
      for (size_t i = 0; i < arena.size(); ++i)
        arena[i] = T(std::sin(double(i) * 0.7));
      std::vector<uint8_t> bytes = bytesOf(arena);
      ASSERT_TRUE(device->upload(0, bytes.data(), bytes.size()).ok());
      std::vector<T> expected = arena;
      T *e = expected.data();
      for (int run = 0; run < 3; ++run) {
        ASSERT_TRUE(device->run(0).ok());
        referenceGemm(g, e);
      }
      std::vector<T> actual(arena.size());
      ASSERT_TRUE(device->download(0, actual.data(), bytes.size()).ok());
      expectGemmResult(actual, expected, g);
    }
  }

  // The same with bf16 or f16 A and B and an f32 C: the cuBLASLt layouts
  // of the 16-bit inputs (the fake checks cuBLASLt's table of type
  // combinations) against modelc_gemm_bf16/_f16.
  void checkGemms16(fb::DType ab, const std::string &note) {
    for (const TestGemm &g : transposeGemms(ab)) {
      spec.functions[0].steps = {TestStep::matmul(g)};
      device.reset();
      Result<std::unique_ptr<cuda::Device>> d = open();
      ASSERT_TRUE(d.ok()) << d.status().message();
      device = d.take();
      std::vector<uint8_t> arena = gemm16Arena(g);
      ASSERT_TRUE(device->upload(0, arena.data(), arena.size()).ok());
      std::vector<uint8_t> expected = arena;
      calls();
      for (int run = 0; run < 3; ++run) {
        ASSERT_TRUE(device->run(0).ok());
        referenceGemm16(g, expected.data());
      }
      EXPECT_NE(calls().find(note), std::string::npos);
      std::vector<uint8_t> actual(arena.size());
      ASSERT_TRUE(device->download(0, actual.data(), actual.size()).ok());
      expectGemm16Result(actual, expected, g);
    }
  }

  ScopedEnv libcuda_{"MODELC_LIBCUDA", MODELC_FAKE_CUDA};
  ScopedEnv libcublasLt_{"MODELC_CUBLASLT", MODELC_FAKE_CUDA};
  ScopedEnv graphs_{"MODELC_CUDA_GRAPHS", nullptr};
  ScopedEnv sm_{"FAKE_CUDA_SM", nullptr};
  GpuProgramSpec spec;
  std::unique_ptr<cuda::Device> device;

private:
  void *lib_ = nullptr;
  const char *(*log_)() = nullptr;
  void (*clear_)() = nullptr;
  int (*live_)() = nullptr;
  Manifest manifest_;
};

TEST_F(CudaFakeDevice, OpensTheExactCubinAndZeroesTheArena) {
  openOk();
  EXPECT_EQ(device->description(), "GPU 0: Fake GPU (sm_90, 80.0 GiB)");
  EXPECT_EQ(device->arenaBytes(), 5120u);
  EXPECT_EQ(device->kernelCount(), 2u);
  std::string opened = calls();
  EXPECT_NE(opened.find("load:cubin90 "), std::string::npos) << opened;
  EXPECT_NE(opened.find("workspace:1024 "), std::string::npos) << opened;
  std::vector<uint8_t> arena(5120, 0xFF);
  ASSERT_TRUE(device->download(0, arena.data(), arena.size()).ok());
  EXPECT_EQ(arena, std::vector<uint8_t>(5120, 0)); // the fake fills 0xAB
}

TEST_F(CudaFakeDevice, JitsTheHighestPtxNotAboveTheDevice) {
  ScopedEnv sm("FAKE_CUDA_SM", "86");
  openOk();
  EXPECT_NE(calls().find("load:// PTX "), std::string::npos); // NUL added
  EXPECT_EQ(device->description(), "GPU 0: Fake GPU (sm_86, 80.0 GiB)");
}

TEST_F(CudaFakeDevice, FirstRunEagerSecondCapturedThenReplayed) {
  openOk();
  calls();
  ASSERT_TRUE(device->run(0).ok());
  EXPECT_EQ(calls(), "k0<4,256>(@0) gemm32 k1<1,32>(@0) ");
  ASSERT_TRUE(device->run(0).ok());
  EXPECT_EQ(calls(),
            "capture instantiate graph k0<4,256>(@0) gemm32 k1<1,32>(@0) ");
  ASSERT_TRUE(device->run(0).ok());
  EXPECT_EQ(calls(), "graph k0<4,256>(@0) gemm32 k1<1,32>(@0) ");
  ASSERT_TRUE(device->run(1).ok());
  EXPECT_EQ(calls(), "k0<4,256>(@0) ");
  ASSERT_TRUE(device->synchronize().ok());
  EXPECT_EQ(counter(), 7u);
}

// One kernel launched twice with other arguments, as the layers of a model
// launch their shared kernels: each launch passes its own device pointers
// (arena offsets) and values, eagerly and in the captured graph.
TEST_F(CudaFakeDevice, LaunchesPassTheirArgumentsAlsoInGraphs) {
  spec.kernels[0].buffers = {true, true, false};
  spec.images[2].data.reset();
  spec.functions[0].steps = {TestStep::launch(0, {0, 512, 7}),
                             TestStep::launch(0, {0, 1024, 9}),
                             TestStep::launch(1, {2048})};
  spec.functions[1].steps = {TestStep::launch(1)};
  openOk();
  calls();
  const std::string steps =
      "k0<4,256>(@0,@512,7) k0<4,256>(@0,@1024,9) k1<1,32>(@2048) ";
  ASSERT_TRUE(device->run(0).ok());
  EXPECT_EQ(calls(), steps);
  ASSERT_TRUE(device->run(0).ok());
  EXPECT_EQ(calls(), "capture instantiate graph " + steps);
  ASSERT_TRUE(device->run(0).ok());
  EXPECT_EQ(calls(), "graph " + steps);
  ASSERT_TRUE(device->runStep(0, 1).ok());
  EXPECT_EQ(calls(), "k0<4,256>(@0,@1024,9) ");
  ASSERT_TRUE(device->synchronize().ok());
  // k0's first buffer is the arena's start: 3 runs x 2 launches + 1 step.
  EXPECT_EQ(counter(), 7u);
}

TEST_F(CudaFakeDevice, RunStepRunsOneStepEagerly) {
  openOk();
  calls();
  ASSERT_TRUE(device->runStep(0, 1).ok());
  ASSERT_TRUE(device->runStep(0, 2).ok());
  EXPECT_EQ(calls(), "gemm32 k1<1,32>(@0) ");
  // Steps run alone do not count as runs of the function.
  ASSERT_TRUE(device->run(0).ok());
  EXPECT_EQ(calls(), "k0<4,256>(@0) gemm32 k1<1,32>(@0) ");
  Status past = device->runStep(0, 3);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.message(), "internal error: step 3 of GPU function 0");
  EXPECT_FALSE(device->runStep(2, 0).ok());
}

TEST_F(CudaFakeDevice, ABlockAboveTheKernelsMaxntidDoesNotLaunch) {
  // As a real driver: k1's PTX allows 32 threads per block; a launch of
  // 64 fails (the generated kernels declare their block as .maxntid).
  std::string text = "// PTX .entry k0(.param .u64 p0) .maxntid 256, 1, 1 {} "
                     ".entry k1(.param .u64 p0) .maxntid 32, 1, 1 {}";
  for (TestImage &image : spec.images)
    image.data = std::vector<uint8_t>(text.begin(), text.end());
  openOk();
  ASSERT_TRUE(device->runStep(0, 0).ok());
  ASSERT_TRUE(device->runStep(0, 2).ok());
  spec.kernels[1].block = 64;
  openOk();
  Status tooWide = device->runStep(0, 2);
  ASSERT_FALSE(tooWide.ok());
  EXPECT_NE(tooWide.message().find("cuLaunchKernel"), std::string::npos)
      << tooWide.message();
}

TEST_F(CudaFakeDevice, GraphsOffRunsEagerly) {
  ScopedEnv off("MODELC_CUDA_GRAPHS", "0");
  openOk();
  calls();
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(device->run(0).ok());
  EXPECT_EQ(calls(), "k0<4,256>(@0) gemm32 k1<1,32>(@0) k0<4,256>(@0) gemm32 "
                     "k1<1,32>(@0) k0<4,256>(@0) gemm32 k1<1,32>(@0) ");
  EXPECT_EQ(counter(), 6u);
}

TEST_F(CudaFakeDevice, RowMajorGemmsF32) { checkGemms<float>(fb::DType::F32); }
TEST_F(CudaFakeDevice, RowMajorGemmsF64) { checkGemms<double>(fb::DType::F64); }
TEST_F(CudaFakeDevice, RowMajorGemmsBF16IntoF32) {
  checkGemms16(fb::DType::BF16, "gemm16bf");
}
TEST_F(CudaFakeDevice, RowMajorGemmsF16IntoF32) {
  checkGemms16(fb::DType::F16, "gemm16f");
}

TEST_F(CudaFakeDevice, LargeCopiesGoThroughStagingInChunks) {
  spec.gpuArena = (uint64_t(80) << 20) + 4096;
  spec.workspaceBytes = spec.gpuArena - spec.workspaceOffset;
  openOk();
  calls();
  std::vector<uint8_t> data(uint64_t(70) << 20);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t(i * 2654435761u >> 24);
  ASSERT_TRUE(device->upload(4096, data.data(), data.size()).ok());
  std::string staged = calls();
  EXPECT_EQ(staged, "pinned:67108864 pinned:8388608 ") << staged;
  std::vector<uint8_t> back(data.size());
  ASSERT_TRUE(device->download(4096, back.data(), back.size()).ok());
  EXPECT_TRUE(back == data);
  calls();
  // Small copies reuse the slots.
  uint32_t seven = 7;
  ASSERT_TRUE(device->upload(kCounterOffset, &seven, 4).ok());
  EXPECT_EQ(counter(), 7u);
  EXPECT_EQ(calls().find("pinned"), std::string::npos);
}

TEST_F(CudaFakeDevice, SmallUploadsOfAStepWaitForNothing) {
  openOk();
  ASSERT_TRUE(device->run(0).ok());
  calls();
  for (int step = 0; step < 3; ++step) {
    for (uint64_t i = 0; i < 40; ++i) {
      uint32_t value[4] = {uint32_t(step), uint32_t(i), 0, 0};
      ASSERT_TRUE(device->upload(2048 + 16 * i, value, 16).ok());
    }
    ASSERT_TRUE(device->run(0).ok());
  }
  std::string queued = calls();
  EXPECT_EQ(queued.find("wait"), std::string::npos) << queued;
  uint32_t last[4] = {};
  ASSERT_TRUE(device->download(2048 + 16 * 39, last, 16).ok());
  EXPECT_EQ(calls(), "wait ");
  EXPECT_EQ(last[0], 2u);
  EXPECT_EQ(last[1], 39u);
}

TEST_F(CudaFakeDevice, CopiesOutsideTheArenaAreRefused) {
  openOk();
  char buffer[16] = {};
  Status up = device->upload(5112, buffer, 16);
  ASSERT_FALSE(up.ok());
  EXPECT_EQ(up.exitCode(), kExitInternal);
  EXPECT_EQ(up.message(), "internal error: an upload of 16 bytes at offset "
                          "5112 lies outside the 5120-byte device arena");
  EXPECT_FALSE(device->download(uint64_t(-8), buffer, 16).ok());
  Status run = device->run(2);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.message(), "internal error: GPU function 2 of 2");
}

TEST_F(CudaFakeDevice, OpenErrors) {
  Result<std::unique_ptr<cuda::Device>> badOrdinal = open(1);
  ASSERT_FALSE(badOrdinal.ok());
  EXPECT_EQ(badOrdinal.status().exitCode(), kExitUsage);
  EXPECT_EQ(badOrdinal.status().message(),
            "there is no GPU 1: this machine has 1 CUDA device(s), numbered "
            "from 0");
  {
    ScopedEnv sm("FAKE_CUDA_SM", "75");
    Result<std::unique_ptr<cuda::Device>> old = open();
    ASSERT_FALSE(old.ok());
    EXPECT_EQ(old.status().exitCode(), kExitUsage);
    EXPECT_EQ(old.status().message(),
              "this program's GPU code (cubin sm_90; PTX sm_80, sm_90) cannot "
              "run on this sm_75 GPU; rebuild it with `modelc --arch sm_75` or "
              "run with --cpu");
  }
  {
    ScopedEnv sm("FAKE_CUDA_SM", "86");
    std::string bad = "syntax error";
    spec.images[0].data = std::vector<uint8_t>(bad.begin(), bad.end());
    Result<std::unique_ptr<cuda::Device>> jit = open();
    ASSERT_FALSE(jit.ok());
    EXPECT_EQ(jit.status().exitCode(), kExitInternal);
    EXPECT_EQ(jit.status().message(),
              "CUDA error: cuModuleLoadDataEx (PTX sm_80 on this sm_86 GPU) "
              "failed with CUDA_ERROR_INVALID_PTX (fake error); the JIT "
              "compiler says: ptxas: line 1: oops");
  }
  spec = GpuProgramSpec{};
  spec.kernels[1].name = "missing";
  Result<std::unique_ptr<cuda::Device>> noKernel = open();
  ASSERT_FALSE(noKernel.ok());
  EXPECT_EQ(noKernel.status().message(),
            "CUDA error: cuModuleGetFunction (kernel missing in cubin sm_90 on "
            "this sm_90 GPU) failed with CUDA_ERROR_NOT_FOUND (fake error); "
            "the image lacks a kernel of the program; rebuild it with modelc");
}

TEST_F(CudaFakeDevice, MissingCuBlasLtFailsAtOpenWhenThereAreGemms) {
  ScopedEnv wrongLt("MODELC_CUBLASLT", "/nonexistent/libcublasLt.so.13");
  Result<std::unique_ptr<cuda::Device>> d = open();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().exitCode(), kExitUsage);
  EXPECT_EQ(d.status().message().rfind("cuBLASLt not usable", 0), 0u);
}

TEST_F(CudaFakeDevice, NoGemmsNeedNoCuBlasLt) {
  ScopedEnv wrongLt("MODELC_CUBLASLT", "/nonexistent/libcublasLt.so.13");
  spec.functions[0].steps = {TestStep::launch(0)};
  openOk();
  ASSERT_TRUE(device->run(0).ok());
}

} // namespace
} // namespace modelc::rt::test
