// Tests of kernelcheck's comparison of arena bytes: each range is read as
// the dtype it holds (GpuStep.writes), floats within a tolerance, integers
// exactly.
#include "runtime/driver/Kernelcheck.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace modelc::rt {
namespace {

template <typename T> std::vector<uint8_t> bytesOf(std::vector<T> values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

ArenaDiff compare(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b,
                  DType dtype, double rtol = 1e-4, double atol = 1e-5) {
  return compareArenaBytes(a.data(), b.data(), a.size(), dtype, rtol, atol);
}

// An f64 sum that differs in its last bits: read as f32 words its low half
// is noise (what kernelcheck saw on an H200 for a loss accumulated in f64),
// read as f64 it agrees.
TEST(KernelcheckTest, F64ElementsAreComparedAsF64) {
  // Two doubles 4e-9 apart (relative) whose low words, read as f32, are
  // -2.6e10 and -1.0e11.
  auto cpu = bytesOf<uint64_t>({0x4062cc00d0c00000, 0x4060000000000000});
  auto gpu = bytesOf<uint64_t>({0x4062cc00d1c00000, 0x4060000000000000});
  ArenaDiff asF64 = compare(cpu, gpu, DType::F64);
  EXPECT_EQ(asF64.elements, 2u);
  EXPECT_EQ(asF64.mismatches, 0u);
  EXPECT_EQ(compare(cpu, gpu, DType::F32).mismatches, 1u);
}

TEST(KernelcheckTest, FloatsWithinTheToleranceAgree) {
  ArenaDiff d = compare(bytesOf<float>({1.0f, 2.0f, 0.0f, NAN}),
                        bytesOf<float>({1.00005f, 2.001f, 5e-6f, NAN}),
                        DType::F32);
  EXPECT_EQ(d.elements, 4u);
  EXPECT_EQ(d.mismatches, 1u); // 2 vs 2.001
  EXPECT_EQ(d.worstOffset, 4u);
  EXPECT_EQ(d.worstA, 2.0);
  EXPECT_FLOAT_EQ(d.worstB, 2.001f);
}

TEST(KernelcheckTest, IntegersMustBeEqual) {
  ArenaDiff d = compare(bytesOf<int64_t>({7, 1'000'000'000'000}),
                        bytesOf<int64_t>({7, 1'000'000'000'001}), DType::I64,
                        /*rtol=*/0.5);
  EXPECT_EQ(d.elements, 2u);
  EXPECT_EQ(d.mismatches, 1u);
  EXPECT_EQ(d.worstOffset, 8u);
  EXPECT_EQ(compare(bytesOf<uint8_t>({1, 0}), bytesOf<uint8_t>({2, 0}),
                    DType::Bool, 1.0, 1.0)
                .mismatches,
            1u);
}

TEST(KernelcheckTest, Bf16IsReadAsItsValue) {
  // 1.0 and the next bf16 up, 1.0078125: 0.8% apart.
  auto a = bytesOf<uint16_t>({0x3f80}), b = bytesOf<uint16_t>({0x3f81});
  EXPECT_EQ(compare(a, b, DType::BF16, 1e-2).mismatches, 0u);
  ArenaDiff d = compare(a, b, DType::BF16, 1e-3);
  EXPECT_EQ(d.mismatches, 1u);
  EXPECT_EQ(d.worstB, 1.0078125);
}

} // namespace
} // namespace modelc::rt
