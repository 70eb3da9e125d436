// Tests of the PCG64 generator: determinism, streams, the distributions'
// ranges and moments, and state save/restore.
#include "runtime/io/Random.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace modelc::rt {
namespace {

TEST(RngTest, SameSeedAndStreamGiveTheSameSequence) {
  Rng a(42, 7), b(42, 7);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(a.next(), b.next());
}

TEST(RngTest, SeedsAndStreamsGiveDifferentSequences) {
  Rng base(42, 0), otherSeed(43, 0), otherStream(42, 1);
  int sameSeed = 0, sameStream = 0;
  for (int i = 0; i < 100; ++i) {
    uint64_t value = base.next();
    sameSeed += value == otherSeed.next();
    sameStream += value == otherStream.next();
  }
  EXPECT_EQ(sameSeed, 0);
  EXPECT_EQ(sameStream, 0);
}

// The PCG reference implementation's expected output for pcg64 seeded with
// pcg64_srandom_r(42, 54) (pcg-c, test-high/expected/check-pcg64.out).
TEST(RngTest, MatchesThePcgReferenceImplementation) {
  Rng rng(42, 54);
  const uint64_t expected[] = {0x86b1da1d72062b68, 0x1304aa46c9853d39,
                               0xa3670e9e0dd50358, 0xf9090e529a7dae00,
                               0xc85b9fd837996f2c, 0x606121f8e3919196};
  for (uint64_t value : expected)
    EXPECT_EQ(rng.next(), value);
}

TEST(RngTest, UniformIsInTheHalfOpenUnitInterval) {
  Rng rng(1);
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  // The mean of n uniforms has standard deviation 1/sqrt(12 n) ~ 0.0009.
  EXPECT_NEAR(sum / n, 0.5, 0.005);
}

TEST(RngTest, NormalHasMeanZeroAndVarianceOne) {
  Rng rng(2);
  const int n = 200000;
  double sum = 0, squares = 0;
  for (int i = 0; i < n; ++i) {
    double x = rng.normal();
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    squares += x * x;
  }
  // Standard errors: 1/sqrt(n) ~ 0.0022 for the mean, sqrt(2/n) ~ 0.0032
  // for the variance; the tolerances are about 4 of them.
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(squares / n, 1.0, 0.015);
}

TEST(RngTest, BelowStaysInRangeAndCoversItEvenly) {
  Rng rng(3);
  const uint64_t buckets = 7;
  std::vector<int> counts(buckets);
  const int n = 70000;
  for (int i = 0; i < n; ++i) {
    uint64_t value = rng.below(buckets);
    ASSERT_LT(value, buckets);
    ++counts[value];
  }
  // Chi-square with 6 degrees of freedom; 22.5 is its 0.999 quantile.
  double chiSquare = 0;
  for (int count : counts)
    chiSquare += std::pow(count - n / 7.0, 2) / (n / 7.0);
  EXPECT_LT(chiSquare, 22.5);
  EXPECT_EQ(rng.below(1), 0u);
  EXPECT_EQ(rng.below(0), 0u);
}

TEST(RngTest, BelowHandlesBoundsNearTwoToThe64) {
  Rng rng(4);
  uint64_t bound = (uint64_t(1) << 63) + 12345;
  for (int i = 0; i < 1000; ++i)
    ASSERT_LT(rng.below(bound), bound);
}

TEST(RngTest, RestoredStateContinuesTheSequence) {
  Rng rng(5, 9);
  for (int i = 0; i < 10; ++i)
    rng.next();
  std::array<uint64_t, 4> saved = rng.saveState();
  std::vector<uint64_t> expected;
  for (int i = 0; i < 10; ++i)
    expected.push_back(rng.next());
  Rng restored(0);
  restored.restoreState(saved);
  for (uint64_t value : expected)
    EXPECT_EQ(restored.next(), value);
}

} // namespace
} // namespace modelc::rt
