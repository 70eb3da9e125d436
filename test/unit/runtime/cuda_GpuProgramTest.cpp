// The GpuProgram checks of runtime/cuda/GpuProgram.h, without a GPU: a
// valid section is copied; each kind of corruption modelc would never write
// is an internal error with an exact message; a program without the cuda
// target is a usage error; the image choice (cubin of the exact
// architecture, else the highest PTX not above it, else a message naming
// both sides' architectures).
#include "cuda_TestProgram.h"

#include "runtime/cuda/GpuProgram.h"

#include <gtest/gtest.h>

namespace modelc::rt::test {
namespace {

using cuda::GpuImageInfo;
using cuda::GpuProgramInfo;
using cuda::GpuStepInfo;
namespace fb = modelc::manifest;

Result<GpuProgramInfo> read(const GpuProgramSpec &spec) {
  return cuda::readGpuProgram(loadGpuManifest(spec));
}

std::string corrupt(const std::string &what) {
  return "internal error: the program's GPU section is corrupt (" + what +
         "); rebuild it with modelc";
}

/// The error of reading `spec`, which must be an internal error.
std::string failure(const GpuProgramSpec &spec) {
  Result<GpuProgramInfo> info = read(spec);
  if (info.ok())
    return "(verified)";
  EXPECT_EQ(info.status().exitCode(), kExitInternal);
  return info.status().message();
}

TestGemm &gemmOf(GpuProgramSpec &spec) {
  return spec.functions[0].steps[1].gemmSpec;
}

TEST(CudaGpuProgram, ValidSectionIsCopied) {
  Result<GpuProgramInfo> info = read(GpuProgramSpec{});
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->arenaBytes, 5120u);
  EXPECT_EQ(info->workspaceOffset, 4096u);
  EXPECT_EQ(info->workspaceBytes, 1024u);
  ASSERT_EQ(info->images.size(), 3u);
  EXPECT_EQ(info->images[2].arch, "sm_90");
  EXPECT_EQ(info->images[2].sm, 90);
  EXPECT_TRUE(info->images[2].cubin);
  std::string ptx(reinterpret_cast<const char *>(info->images[0].data),
                  info->images[0].size);
  EXPECT_EQ(ptx, "// PTX .entry k0(.param .u64 p0) .entry k1(.param .u64 p0)");
  EXPECT_EQ(info->parts, 1u);
  ASSERT_EQ(info->kernels.size(), 2u);
  EXPECT_EQ(info->kernels[0].name, "k0");
  EXPECT_EQ(info->kernels[0].grid, 4u);
  EXPECT_EQ(info->kernels[0].block, 256u);
  ASSERT_EQ(info->functions.size(), 2u);
  EXPECT_EQ(info->functions[0].symbol, "fwd_bwd");
  ASSERT_EQ(info->functions[0].steps.size(), 3u);
  EXPECT_EQ(info->functions[0].steps[1].kind, GpuStepInfo::Kind::Gemm);
  EXPECT_EQ(info->functions[0].steps[2].kernel, 1u);
  EXPECT_EQ(info->functions[0].steps[2].args, std::vector<uint64_t>{0});
  EXPECT_EQ(info->kernels[1].bufferParams, std::vector<bool>{true});
  ASSERT_EQ(info->gemms.size(), 1u);
  EXPECT_EQ(info->gemms[0].dtype, DType::F32);
  EXPECT_EQ(info->gemms[0].ab, DType::F32);
  EXPECT_EQ(info->gemms[0].layout.b, 256u);
  EXPECT_EQ(info->gemms[0].layout.ldb, 8);
}

TEST(CudaGpuProgram, WithoutCudaTargetIsAUsageError) {
  GpuProgramSpec spec;
  spec.withGpu = false;
  Result<GpuProgramInfo> info = read(spec);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().exitCode(), kExitUsage);
  EXPECT_EQ(info.status().message(),
            "this program was built without the cuda target; rebuild with "
            "--target cuda,cpu or run with --cpu");
}

TEST(CudaGpuProgram, FunctionsMustMatchTheProgram) {
  GpuProgramSpec missing;
  missing.functions.pop_back();
  EXPECT_EQ(failure(missing),
            corrupt("it describes 1 function(s), the program has 2"));
  GpuProgramSpec renamed;
  renamed.functions[1].symbol = "eval";
  EXPECT_EQ(failure(renamed),
            corrupt("GPU function 1 is 'eval', the program's is 'update'"));
}

TEST(CudaGpuProgram, KernelIndexOutOfRange) {
  GpuProgramSpec spec;
  spec.functions[1].steps[0].kernel = 2;
  EXPECT_EQ(failure(spec), corrupt("function update step 0 launches kernel 2 "
                                   "of 2"));
}

TEST(CudaGpuProgram, LaunchArgumentsMatchTheKernel) {
  GpuProgramSpec spec;
  spec.kernels[0].buffers = {true, false, true};
  spec.functions[1].steps[0] = TestStep::launch(0, {64, 12345, 4080});
  spec.functions[0].steps[0] = TestStep::launch(0, {0, 7, 128});
  Result<GpuProgramInfo> info = read(spec);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->kernels[0].bufferParams,
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(info->kernels[0].paramBytes, (std::vector<uint64_t>{16, 8, 16}));
  EXPECT_EQ(info->functions[1].steps[0].args,
            (std::vector<uint64_t>{64, 12345, 4080}));

  GpuProgramSpec fewer = spec;
  fewer.functions[1].steps[0] = TestStep::launch(0, {64, 1});
  EXPECT_EQ(failure(fewer), corrupt("function update step 0 passes 2 "
                                    "argument(s) to kernel k0, which has 3 "
                                    "parameter(s)"));
  // A value may be anything; a buffer must lie inside the CPU arena.
  GpuProgramSpec past = spec;
  past.functions[1].steps[0] = TestStep::launch(0, {64, 1, 4081});
  EXPECT_EQ(failure(past), corrupt("function update step 0 passes kernel k0 "
                                   "a buffer of 16 bytes at arena offset "
                                   "4081, outside the 4096-byte arena"));
  GpuProgramSpec sizes = spec;
  sizes.kernels[0].bytes = {16, 8};
  EXPECT_EQ(failure(sizes), corrupt("kernel k0 has 3 parameter(s) and 2 "
                                    "parameter size(s)"));
}

TEST(CudaGpuProgram, KernelsInParts) {
  GpuProgramSpec spec;
  spec.kernels[1].part = 1;
  std::vector<uint8_t> cubin = {'c'};
  spec.images = {{"sm_80", false, std::nullopt, 0},
                 {"sm_80", false, std::nullopt, 1},
                 {"sm_90", true, cubin, 0},
                 {"sm_90", true, cubin, 1}};
  Result<GpuProgramInfo> info = read(spec);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->parts, 2u);
  EXPECT_EQ(info->kernels[1].part, 1u);
  EXPECT_EQ(cuda::imagesOfParts(info->images, 2, 2),
            (std::vector<size_t>{2, 3}));
  EXPECT_EQ(*cuda::selectImage(info->images, 86), 0u);

  GpuProgramSpec missing = spec;
  missing.images.pop_back();
  EXPECT_EQ(failure(missing), corrupt("the cubin of sm_90 has no image of "
                                      "part 1"));
  GpuProgramSpec twice = spec;
  twice.images.push_back({"sm_80", false, std::nullopt, 1});
  EXPECT_EQ(failure(twice), corrupt("two PTX images of sm_80 part 1"));
  GpuProgramSpec outside = spec;
  outside.kernels[1].part = 2;
  EXPECT_EQ(failure(outside), corrupt("kernel k1 is in part 2 of 2"));
  GpuProgramSpec far = spec;
  far.images[3].part = 4000000000u;
  EXPECT_EQ(failure(far), corrupt("image 3 is of part 4000000000, with 4 "
                                  "images"));
}

TEST(CudaGpuProgram, BlockSizes) {
  for (uint32_t block : {0u, 16u, 48u, 1056u, 2048u}) {
    GpuProgramSpec spec;
    spec.kernels[1].block = block;
    EXPECT_EQ(failure(spec),
              corrupt("kernel k1 has block " + std::to_string(block) +
                      ", not a multiple of 32 in [32, 1024]"));
  }
  for (uint32_t block : {32u, 64u, 1024u}) {
    GpuProgramSpec spec;
    spec.kernels[1].block = block;
    EXPECT_TRUE(read(spec).ok()) << block;
  }
}

TEST(CudaGpuProgram, GridAndSharedMemory) {
  GpuProgramSpec noGrid;
  noGrid.kernels[0].grid = 0;
  EXPECT_EQ(failure(noGrid),
            corrupt("kernel k0 has grid 0, not in [1, 2147483647]"));
  GpuProgramSpec shared;
  shared.kernels[0].sharedBytes = 49153;
  EXPECT_EQ(failure(shared), corrupt("kernel k0 asks for 49153 bytes of "
                                     "shared memory, more than 49152"));
}

TEST(CudaGpuProgram, GemmOperandOutsideTheArena) {
  GpuProgramSpec spec;
  gemmOf(spec).c = 5056; // 4 x 8 f32 = 128 bytes: [5056, 5184)
  EXPECT_EQ(failure(spec),
            corrupt("function fwd_bwd step 1: GEMM operand C [5056, 5184) "
                    "lies outside the 5120-byte arena"));
}

TEST(CudaGpuProgram, GemmBatchStrideOutsideTheArena) {
  GpuProgramSpec spec;
  TestGemm &g = gemmOf(spec);
  g.batch = 3;
  g.strideB = 1024; // 2 * 1024 + 15 * 8 + 8 elements from 256
  g.strideC = 32;
  EXPECT_EQ(failure(spec),
            corrupt("function fwd_bwd step 1: GEMM operand B [256, 8960) "
                    "lies outside the 5120-byte arena"));
  g.strideB = 128; // [256, 256 + 4 * 384): inside the CPU arena
  EXPECT_TRUE(read(spec).ok()) << read(spec).status().message();
}

TEST(CudaGpuProgram, TransposedOperandExtent) {
  GpuProgramSpec spec;
  TestGemm &g = gemmOf(spec);
  g.transA = true; // A stored as k x m = 16 x 4, ld >= 4
  g.lda = 4;
  g.a = 3840; // 15 * 4 + 4 = 64 elements: [3840, 4096) fits
  EXPECT_TRUE(read(spec).ok()) << read(spec).status().message();
  g.a = 3844;
  EXPECT_EQ(failure(spec),
            corrupt("function fwd_bwd step 1: GEMM operand A [3844, 4100) "
                    "overlaps the cuBLASLt workspace"));
  g.lda = 3;
  EXPECT_EQ(failure(spec),
            corrupt("function fwd_bwd step 1: GEMM operand A (16 x 4, ld 3, "
                    "batch stride 0, batch 1) has an invalid layout"));
}

TEST(CudaGpuProgram, GemmLeadingDimensionAndShape) {
  GpuProgramSpec shortLd;
  gemmOf(shortLd).ldc = 7;
  EXPECT_EQ(failure(shortLd),
            corrupt("function fwd_bwd step 1: GEMM operand C (4 x 8, ld 7, "
                    "batch stride 0, batch 1) has an invalid layout"));
  GpuProgramSpec empty;
  gemmOf(empty).k = 0;
  EXPECT_EQ(failure(empty), corrupt("function fwd_bwd step 1: GEMM of m 4, "
                                    "n 8, k 0, batch 1"));
  GpuProgramSpec negative;
  gemmOf(negative).batch = 2;
  gemmOf(negative).strideA = -16;
  gemmOf(negative).strideC = 32;
  EXPECT_EQ(failure(negative),
            corrupt("function fwd_bwd step 1: GEMM operand A (4 x 16, ld 16, "
                    "batch stride -16, batch 2) has an invalid layout"));
}

TEST(CudaGpuProgram, GemmBatchesOfCMustNotOverlap) {
  GpuProgramSpec spec;
  gemmOf(spec).batch = 2;
  gemmOf(spec).strideC = 0;
  EXPECT_EQ(failure(spec),
            corrupt("function fwd_bwd step 1: GEMM batches of C overlap "
                    "(batch stride 0 for 4 x 8 matrices with ld 8)"));
  gemmOf(spec).strideC = 31;
  EXPECT_NE(failure(spec), "(verified)");
  gemmOf(spec).strideC = 32;
  EXPECT_TRUE(read(spec).ok());
}

TEST(CudaGpuProgram, GemmDTypeAndAlignment) {
  // C is f32 or f64; A and B have its type, or are bf16/f16 with an f32 C.
  GpuProgramSpec half;
  gemmOf(half).dtype = fb::DType::F16;
  gemmOf(half).ab = fb::DType::F16;
  EXPECT_EQ(failure(half),
            corrupt("function fwd_bwd step 1: GEMM of dtypes 2 (A, B) and 2 "
                    "(C) (the GPU runs f32 and f64 GEMMs, and bf16/f16 ones "
                    "into f32)"));
  GpuProgramSpec mixed;
  gemmOf(mixed).dtype = fb::DType::F64;
  EXPECT_EQ(failure(mixed),
            corrupt("function fwd_bwd step 1: GEMM of dtypes 0 (A, B) and 1 "
                    "(C) (the GPU runs f32 and f64 GEMMs, and bf16/f16 ones "
                    "into f32)"));
  GpuProgramSpec halfIntoF64;
  gemmOf(halfIntoF64).dtype = fb::DType::F64;
  gemmOf(halfIntoF64).ab = fb::DType::BF16;
  EXPECT_NE(failure(halfIntoF64), "(verified)");
  GpuProgramSpec f64;
  gemmOf(f64).dtype = fb::DType::F64;
  gemmOf(f64).ab = fb::DType::F64;
  gemmOf(f64).c = 1028; // 8-byte elements
  EXPECT_EQ(failure(f64),
            corrupt("function fwd_bwd step 1: GEMM operand C at offset 1028 "
                    "is not aligned to its 8-byte elements"));
  // 16-bit A and B: 2-byte elements (A may start at 2, C may not).
  GpuProgramSpec bf16;
  gemmOf(bf16).ab = fb::DType::BF16;
  gemmOf(bf16).a = 2;
  Result<GpuProgramInfo> info = read(bf16);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->gemms[0].ab, DType::BF16);
  EXPECT_EQ(info->gemms[0].dtype, DType::F32);
  gemmOf(bf16).c = 1026;
  EXPECT_EQ(failure(bf16),
            corrupt("function fwd_bwd step 1: GEMM operand C at offset 1026 "
                    "is not aligned to its 4-byte elements"));
}

TEST(CudaGpuProgram, Workspace) {
  GpuProgramSpec outside;
  outside.workspaceBytes = 2048;
  EXPECT_EQ(failure(outside),
            corrupt("the cuBLASLt workspace at 4096 (2048 bytes) is not "
                    "256-byte aligned inside the 5120-byte arena"));
  GpuProgramSpec misaligned;
  misaligned.workspaceOffset = 4000;
  EXPECT_EQ(failure(misaligned),
            corrupt("the cuBLASLt workspace at 4000 (1024 bytes) is not "
                    "256-byte aligned inside the 5120-byte arena"));
  GpuProgramSpec overlapping;
  gemmOf(overlapping).c = 4096;
  EXPECT_EQ(failure(overlapping),
            corrupt("function fwd_bwd step 1: GEMM operand C [4096, 4224) "
                    "overlaps the cuBLASLt workspace"));
}

TEST(CudaGpuProgram, ArenaSmallerThanTheCpuOne) {
  GpuProgramSpec spec;
  spec.gpuArena = 4000;
  spec.workspaceBytes = 0;
  spec.workspaceOffset = 3840;
  EXPECT_EQ(failure(spec), corrupt("the GPU arena of 4000 bytes is smaller "
                                   "than the CPU arena of 4096"));
}

TEST(CudaGpuProgram, Images) {
  GpuProgramSpec empty;
  empty.images[1].data = std::vector<uint8_t>{};
  EXPECT_EQ(failure(empty), corrupt("image 1 (PTX sm_90) is empty"));
  GpuProgramSpec badArch;
  badArch.images[0].arch = "compute_80";
  EXPECT_EQ(failure(badArch),
            corrupt("image 0 has architecture 'compute_80' and kind 0"));
  GpuProgramSpec none;
  none.images.clear();
  EXPECT_EQ(failure(none), corrupt("there are kernels but no image"));
}

TEST(CudaArch, Parse) {
  EXPECT_EQ(cuda::parseArch("sm_90")->sm, 90);
  EXPECT_FALSE(cuda::parseArch("sm_90")->archSpecific);
  EXPECT_EQ(cuda::parseArch("sm_100a")->sm, 100);
  EXPECT_TRUE(cuda::parseArch("sm_100a")->archSpecific);
  EXPECT_TRUE(cuda::parseArch("sm_120f")->archSpecific);
  for (const char *bad : {"", "sm_", "sm_9", "sm_9000", "sm_90ab", "sm_90x",
                          "compute_90", "SM_90", "sm90"})
    EXPECT_FALSE(cuda::parseArch(bad)) << bad;
}

std::vector<GpuImageInfo> images(std::vector<std::pair<std::string, bool>> l) {
  std::vector<GpuImageInfo> out;
  for (auto &[arch, cubin] : l) {
    GpuImageInfo image;
    image.arch = arch;
    image.sm = cuda::parseArch(arch)->sm;
    image.archSpecific = cuda::parseArch(arch)->archSpecific;
    image.cubin = cubin;
    out.push_back(image);
  }
  return out;
}

TEST(CudaImageChoice, CubinOfTheExactArchitectureElsePtx) {
  auto all = images(
      {{"sm_80", false}, {"sm_90", false}, {"sm_80", true}, {"sm_90", true}});
  EXPECT_EQ(*cuda::selectImage(all, 90), 3u);  // cubin sm_90
  EXPECT_EQ(*cuda::selectImage(all, 80), 2u);  // cubin sm_80
  EXPECT_EQ(*cuda::selectImage(all, 86), 0u);  // PTX sm_80, JIT
  EXPECT_EQ(*cuda::selectImage(all, 89), 0u);  // PTX sm_80, JIT
  EXPECT_EQ(*cuda::selectImage(all, 100), 1u); // PTX sm_90, JIT
  EXPECT_EQ(*cuda::selectImage(all, 120), 1u);
}

TEST(CudaImageChoice, ArchSpecificImagesRunOnlyThere) {
  auto l = images({{"sm_90a", false}, {"sm_80", false}, {"sm_90a", true}});
  EXPECT_EQ(*cuda::selectImage(l, 90), 2u);
  EXPECT_EQ(*cuda::selectImage(l, 100), 1u);
  auto only = images({{"sm_90a", false}});
  EXPECT_EQ(*cuda::selectImage(only, 90), 0u);
  EXPECT_FALSE(cuda::selectImage(only, 100).ok());
}

TEST(CudaImageChoice, NothingRunsNamesBothArchitectures) {
  auto all = images(
      {{"sm_80", false}, {"sm_90", false}, {"sm_80", true}, {"sm_90", true}});
  Result<size_t> none = cuda::selectImage(all, 75);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().exitCode(), kExitUsage);
  EXPECT_EQ(none.status().message(),
            "this program's GPU code (cubin sm_80, sm_90; PTX sm_80, sm_90) "
            "cannot run on this sm_75 GPU; rebuild it with `modelc --arch "
            "sm_75` or run with --cpu");
  Result<size_t> ptxOnly = cuda::selectImage(images({{"sm_90", false}}), 86);
  ASSERT_FALSE(ptxOnly.ok());
  EXPECT_EQ(ptxOnly.status().message(),
            "this program's GPU code (PTX sm_90) cannot run on this sm_86 "
            "GPU; rebuild it with `modelc --arch sm_86` or run with --cpu");
  // A cubin for another minor version is not taken (exact match only).
  Result<size_t> cubinOnly = cuda::selectImage(images({{"sm_80", true}}), 86);
  ASSERT_FALSE(cubinOnly.ok());
  EXPECT_EQ(cubinOnly.status().message(),
            "this program's GPU code (cubin sm_80) cannot run on this sm_86 "
            "GPU; rebuild it with `modelc --arch sm_86` or run with --cpu");
}

} // namespace
} // namespace modelc::rt::test
