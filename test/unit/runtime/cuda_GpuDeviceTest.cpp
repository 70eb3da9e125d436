// Device.h on a real GPU (skipped where probe() finds none): a hand-written
// PTX kernel (k_add_one: +1 on the 256 floats at arena offset 2048) JIT
// compiled by the driver, or the cubin ptxas makes of it when the toolkit
// is here; eager, captured and replayed runs, with and without graphs;
// row-major GEMMs through cuBLASLt against modelc_gemm_f32/_f64, and bf16/
// f16 ones into f32 against modelc_gemm_bf16/_f16 (tolerance 1e-5 relative
// for f32 and 16-bit inputs, 1e-12 for f64: the CPU and cuBLASLt sum in
// different orders, both in the GEMM's own precision); a 70 MiB
// upload and download through the staging slots.
#include "cuda_TestProgram.h"

#include "runtime/cuda/Device.h"

#include <modelc/ProgramABI.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace modelc::rt::test {
namespace {

namespace fb = modelc::manifest;

// nvcc -ptx -arch=sm_80 of a grid-stride loop, .version lowered to 7.0 so
// that any CUDA 11.0+ driver takes it.
const char *const kAddOnePtx = R"(.version 7.0
.target sm_80
.address_size 64
.visible .entry k_add_one(
	.param .u64 k_add_one_param_0
)
{
	.reg .pred 	%p<3>;
	.reg .f32 	%f<3>;
	.reg .b32 	%r<10>;
	.reg .b64 	%rd<5>;
	ld.param.u64 	%rd2, [k_add_one_param_0];
	mov.u32 	%r1, %ntid.x;
	mov.u32 	%r6, %ctaid.x;
	mov.u32 	%r7, %tid.x;
	mad.lo.s32 	%r9, %r6, %r1, %r7;
	setp.gt.u32 	%p1, %r9, 255;
	@%p1 bra 	$L__BB0_3;
	mov.u32 	%r8, %nctaid.x;
	mul.lo.s32 	%r3, %r8, %r1;
	cvta.to.global.u64 	%rd1, %rd2;
$L__BB0_2:
	mul.wide.u32 	%rd3, %r9, 4;
	add.s64 	%rd4, %rd1, %rd3;
	ld.global.f32 	%f1, [%rd4+2048];
	add.f32 	%f2, %f1, 0f3F800000;
	st.global.f32 	[%rd4+2048], %f2;
	add.s32 	%r9, %r9, %r3;
	setp.lt.u32 	%p2, %r9, 256;
	@%p2 bra 	$L__BB0_2;
$L__BB0_3:
	ret;
}
)";

constexpr uint64_t kAddOneOffset = 2048, kAddOneCount = 256;

class CudaGpuDevice : public ::testing::Test {
protected:
  void SetUp() override {
    if (std::getenv("MODELC_LIBCUDA"))
      GTEST_SKIP() << "MODELC_LIBCUDA is set";
    cuda::Probe probe = cuda::probe();
    if (probe.devices == 0)
      GTEST_SKIP() << "no GPU: " << probe.problem;
    spec.images = {{"sm_80", false,
                    std::vector<uint8_t>(
                        kAddOnePtx, kAddOnePtx + std::strlen(kAddOnePtx))}};
    spec.kernels = {{"k_add_one", 2, 128}};
    spec.gpuArena = 4096 + (uint64_t(4) << 20);
    spec.workspaceBytes = uint64_t(4) << 20;
    for (TestFunction &f : spec.functions)
      for (TestStep &s : f.steps)
        s.kernel = 0;
  }

  std::unique_ptr<cuda::Device> open() {
    manifest_ = loadGpuManifest(spec);
    Result<std::unique_ptr<cuda::Device>> d = cuda::Device::open(0, manifest_);
    EXPECT_TRUE(d.ok()) << d.status().message();
    return d.ok() ? d.take() : nullptr;
  }

  /// Runs fwd_bwd (k_add_one, the GEMM, k_add_one) three times and update
  /// (k_add_one) once, and compares the arena with the CPU's result.
  template <typename T> void checkSteps(const TestGemm &g) {
    spec.functions[0].steps = {TestStep::launch(0), TestStep::matmul(g),
                               TestStep::launch(0)};
    std::unique_ptr<cuda::Device> device = open();
    ASSERT_TRUE(device);
    std::vector<T> arena(4096 / sizeof(T));
    for (size_t i = 0; i < arena.size(); ++i)
      arena[i] = T(std::sin(double(i) * 0.7));
    // k_add_one's floats, also when the GEMM's elements are doubles.
    for (uint64_t i = 0; i < kAddOneCount; ++i) {
      float value = 0.25f * float(i);
      std::memcpy(reinterpret_cast<uint8_t *>(arena.data()) + kAddOneOffset +
                      4 * i,
                  &value, 4);
    }
    ASSERT_TRUE(device->upload(0, arena.data(), 4096).ok());
    std::vector<T> expected = arena;
    T *e = expected.data();
    auto *x = reinterpret_cast<float *>(
        reinterpret_cast<uint8_t *>(expected.data()) + kAddOneOffset);
    for (int run = 0; run < 3; ++run) {
      Status status = device->run(0);
      ASSERT_TRUE(status.ok()) << status.message();
      for (uint64_t i = 0; i < kAddOneCount; ++i)
        x[i] += 2;
      referenceGemm(g, e);
    }
    ASSERT_TRUE(device->run(1).ok());
    for (uint64_t i = 0; i < kAddOneCount; ++i)
      x[i] += 1;
    Status synced = device->synchronize();
    ASSERT_TRUE(synced.ok()) << synced.message();
    std::vector<T> actual(arena.size());
    ASSERT_TRUE(device->download(0, actual.data(), 4096).ok());
    expectGemmResult(actual, expected, g);
  }

  template <typename T> void checkAllTransposes(fb::DType dtype) {
    for (const TestGemm &g : transposeGemms(dtype))
      checkSteps<T>(g);
  }

  ScopedEnv graphs_{"MODELC_CUDA_GRAPHS", nullptr};
  GpuProgramSpec spec;

private:
  Manifest manifest_;
};

TEST_F(CudaGpuDevice, DescribesTheDevice) {
  std::unique_ptr<cuda::Device> device = open();
  ASSERT_TRUE(device);
  EXPECT_EQ(device->description().rfind("GPU 0: ", 0), 0u);
  EXPECT_NE(device->description().find("(sm_"), std::string::npos);
  EXPECT_EQ(device->kernelCount(), 1u);
}

TEST_F(CudaGpuDevice, PtxKernelAndF32Gemms) {
  checkAllTransposes<float>(fb::DType::F32);
}

TEST_F(CudaGpuDevice, F64Gemms) { checkAllTransposes<double>(fb::DType::F64); }

// bf16/f16 A and B into an f32 C through cuBLASLt's 16-bit layouts,
// against modelc_gemm_bf16/_f16 (1e-5: both accumulate in f32).
TEST_F(CudaGpuDevice, SixteenBitGemmsIntoF32) {
  for (fb::DType ab : {fb::DType::BF16, fb::DType::F16})
    for (const TestGemm &g : transposeGemms(ab)) {
      spec.functions[0].steps = {TestStep::matmul(g)};
      std::unique_ptr<cuda::Device> device = open();
      ASSERT_TRUE(device);
      std::vector<uint8_t> arena = gemm16Arena(g);
      ASSERT_TRUE(device->upload(0, arena.data(), arena.size()).ok());
      std::vector<uint8_t> expected = arena;
      for (int run = 0; run < 3; ++run) {
        Status status = device->run(0);
        ASSERT_TRUE(status.ok()) << status.message();
        referenceGemm16(g, expected.data());
      }
      ASSERT_TRUE(device->synchronize().ok());
      std::vector<uint8_t> actual(arena.size());
      ASSERT_TRUE(device->download(0, actual.data(), actual.size()).ok());
      expectGemm16Result(actual, expected, g);
    }
}

TEST_F(CudaGpuDevice, WithoutGraphs) {
  ScopedEnv off("MODELC_CUDA_GRAPHS", "0");
  checkSteps<float>(TestGemm{});
}

TEST_F(CudaGpuDevice, CubinFromPtxas) {
  const char *ptxas = "/usr/local/cuda/bin/ptxas";
  if (!std::filesystem::exists(ptxas))
    GTEST_SKIP() << ptxas << " is not here";
  std::unique_ptr<cuda::Device> probeDevice = open();
  ASSERT_TRUE(probeDevice);
  std::string description = probeDevice->description();
  probeDevice.reset();
  size_t at = description.find("(sm_") + 4;
  std::string arch =
      "sm_" + description.substr(at, description.find(',', at) - at);
  std::string dir = ::testing::TempDir();
  std::string ptx = dir + "/k_add_one.ptx", cubin = dir + "/k_add_one.cubin";
  std::ofstream(ptx) << kAddOnePtx;
  std::string command =
      std::string(ptxas) + " -arch=" + arch + " " + ptx + " -o " + cubin;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(cubin, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  // Only the cubin: the device must load it, not fall back to PTX.
  spec.images = {{arch, true, std::move(bytes)}};
  checkSteps<float>(TestGemm{});
}

TEST_F(CudaGpuDevice, LargeUploadAndDownload) {
  spec.gpuArena = (uint64_t(80) << 20) + 4096;
  spec.workspaceBytes = spec.gpuArena - spec.workspaceOffset;
  std::unique_ptr<cuda::Device> device = open();
  ASSERT_TRUE(device);
  std::vector<uint8_t> data(uint64_t(70) << 20);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t(i * 2654435761u >> 24);
  ASSERT_TRUE(device->upload(4096, data.data(), data.size()).ok());
  std::vector<uint8_t> back(data.size());
  Status down = device->download(4096, back.data(), back.size());
  ASSERT_TRUE(down.ok()) << down.message();
  EXPECT_TRUE(back == data);
}

} // namespace
} // namespace modelc::rt::test
