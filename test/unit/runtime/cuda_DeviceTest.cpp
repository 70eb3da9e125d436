// The CUDA path on a machine that may have no GPU: probe() and
// Device::open report a missing or unusable driver as a problem or a clean
// usage error, never a crash; the GPU section is checked before any CUDA
// library is touched; cuBLASLt is found where the CUDA toolkit is.
// On a machine with a GPU, the driver-dependent expectations adapt.
#include "cuda_TestProgram.h"

#include "runtime/cuda/CudaApi.h"
#include "runtime/cuda/Device.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <filesystem>

namespace modelc::rt::test {
namespace {

bool hasDriver() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib != nullptr; // left open, as the runtime leaves it
}

const char *const kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";
const char *const kToolkitBlasLt = "/usr/local/cuda/lib64/libcublasLt.so.13";

TEST(CudaProbe, MissingLibraryIsAProblemNotACrash) {
  ScopedEnv env("MODELC_LIBCUDA", "/nonexistent/libcuda.so.1");
  cuda::Probe probe = cuda::probe();
  EXPECT_EQ(probe.devices, 0);
  EXPECT_EQ(probe.problem.rfind("no CUDA driver (MODELC_LIBCUDA="
                                "/nonexistent/libcuda.so.1: ",
                                0),
            0u)
      << probe.problem;
}

TEST(CudaProbe, DefaultSearch) {
  ScopedEnv env("MODELC_LIBCUDA", nullptr);
  cuda::Probe probe = cuda::probe();
  if (!hasDriver()) {
    EXPECT_EQ(probe.devices, 0);
    EXPECT_EQ(probe.problem, "no CUDA driver (libcuda.so.1 not found)");
  } else {
    EXPECT_EQ(probe.devices > 0, probe.problem.empty()) << probe.problem;
  }
}

TEST(CudaProbe, ToolkitStubIsNamed) {
  if (!std::filesystem::exists(kStub))
    GTEST_SKIP() << kStub << " is not here";
  ScopedEnv env("MODELC_LIBCUDA", kStub);
  cuda::Probe probe = cuda::probe();
  EXPECT_EQ(probe.devices, 0);
  EXPECT_EQ(probe.problem,
            "no CUDA driver (cuDriverGetVersion failed with "
            "CUDA_ERROR_STUB_LIBRARY (libcuda is a stub library); this "
            "libcuda is the CUDA toolkit's stub, not the driver's: set "
            "MODELC_LIBCUDA to the driver's libcuda.so.1 or fix "
            "LD_LIBRARY_PATH)");
}

TEST(CudaDevice, OpenWithoutDriverIsAUsageError) {
  ScopedEnv env("MODELC_LIBCUDA", "/nonexistent/libcuda.so.1");
  Manifest manifest = loadGpuManifest(GpuProgramSpec{});
  Result<std::unique_ptr<cuda::Device>> device =
      cuda::Device::open(0, manifest);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().exitCode(), kExitUsage);
  const std::string &message = device.status().message();
  EXPECT_EQ(message.rfind("no CUDA driver (MODELC_LIBCUDA=", 0), 0u) << message;
  EXPECT_NE(message.find("; run with --cpu"), std::string::npos) << message;
}

TEST(CudaDevice, OpenChecksTheProgramBeforeTheDriver) {
  ScopedEnv env("MODELC_LIBCUDA", "/nonexistent/libcuda.so.1");
  GpuProgramSpec cpuOnly;
  cpuOnly.withGpu = false;
  Result<std::unique_ptr<cuda::Device>> device =
      cuda::Device::open(0, loadGpuManifest(cpuOnly));
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().exitCode(), kExitUsage);
  EXPECT_EQ(device.status().message(),
            "this program was built without the cuda target; rebuild with "
            "--target cuda,cpu or run with --cpu");
  GpuProgramSpec corrupt;
  corrupt.kernels[0].block = 100;
  device = cuda::Device::open(0, loadGpuManifest(corrupt));
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().exitCode(), kExitInternal);
}

TEST(CudaBlasLt, FoundInTheToolkit) {
  if (!std::filesystem::exists(kToolkitBlasLt))
    GTEST_SKIP() << kToolkitBlasLt << " is not here";
  ScopedEnv env("MODELC_CUBLASLT", kToolkitBlasLt);
  Result<const cuda::BlasLtApi *> lt = cuda::loadBlasLt();
  ASSERT_TRUE(lt.ok()) << lt.status().message();
  EXPECT_EQ((*lt)->path, kToolkitBlasLt);
  EXPECT_EQ((*lt)->version / 10000, size_t(CUBLAS_VER_MAJOR));
  EXPECT_STREQ((*lt)->getStatusName(CUBLAS_STATUS_NOT_SUPPORTED),
               "CUBLAS_STATUS_NOT_SUPPORTED");
  // Loaded once per value of MODELC_CUBLASLT.
  EXPECT_EQ(*cuda::loadBlasLt(), *lt);
}

TEST(CudaBlasLt, DefaultSearchFindsALibrary) {
  if (!std::filesystem::exists(kToolkitBlasLt))
    GTEST_SKIP() << kToolkitBlasLt << " is not here";
  ScopedEnv env("MODELC_CUBLASLT", nullptr);
  Result<const cuda::BlasLtApi *> lt = cuda::loadBlasLt();
  ASSERT_TRUE(lt.ok()) << lt.status().message();
  EXPECT_EQ((*lt)->version / 10000, size_t(CUBLAS_VER_MAJOR));
}

TEST(CudaBlasLt, ExplicitPathThatFailsIsNamed) {
  ScopedEnv env("MODELC_CUBLASLT", "/nonexistent/libcublasLt.so.13");
  Result<const cuda::BlasLtApi *> lt = cuda::loadBlasLt();
  ASSERT_FALSE(lt.ok());
  EXPECT_EQ(lt.status().exitCode(), kExitUsage);
  EXPECT_EQ(lt.status().message().rfind(
                "cuBLASLt not usable (MODELC_CUBLASLT=/nonexistent/"
                "libcublasLt.so.13; /nonexistent/libcublasLt.so.13: ",
                0),
            0u)
      << lt.status().message();
}

TEST(CudaBlasLt, WrongLibraryIsRejected) {
  if (!std::filesystem::exists(kStub))
    GTEST_SKIP() << kStub << " is not here";
  ScopedEnv env("MODELC_CUBLASLT", kStub);
  Result<const cuda::BlasLtApi *> lt = cuda::loadBlasLt();
  ASSERT_FALSE(lt.ok());
  EXPECT_NE(lt.status().message().find("has no cublasLtCreate"),
            std::string::npos)
      << lt.status().message();
}

TEST(CudaBlasLt, CandidatesCoverToolkitAndPipPackages) {
  ScopedEnv home("CUDA_HOME", "/opt/cuda-test");
  std::vector<std::string> c = cuda::cublasLtCandidates();
  ASSERT_GE(c.size(), 4u);
  EXPECT_EQ(c[0], "libcublasLt.so.13");
  auto has = [&](const std::string &path) {
    return std::find(c.begin(), c.end(), path) != c.end();
  };
  EXPECT_TRUE(has("/opt/cuda-test/lib64/libcublasLt.so.13"));
  EXPECT_TRUE(has("/usr/local/cuda/lib64/libcublasLt.so.13"));
  EXPECT_TRUE(has("/opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib/"
                  "libcublasLt.so.13"));
  EXPECT_TRUE(has("/usr/local/lib/python3*/dist-packages/nvidia/cu13/lib/"
                  "libcublasLt.so.13"));
}

} // namespace
} // namespace modelc::rt::test
