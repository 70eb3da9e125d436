// torch.amp.GradScaler's update rule (torch._amp_update_scale_): sequences
// worked out by hand from its source, with the defaults and with factors
// that are not powers of two.
#include "runtime/driver/GradScaler.h"

#include <gtest/gtest.h>

#include <cfloat>

namespace modelc::rt {
namespace {

TEST(DriverGradScaler, BacksOffAndGrowsAfterTheInterval) {
  GradScaler g(GradScalerInfo{65536, 2, 0.5, 3});
  EXPECT_EQ(g.scale(), 65536.0f);
  g.update(true); // inf: x0.5, tracker reset
  EXPECT_EQ(g.scale(), 32768.0f);
  EXPECT_EQ(g.growthTracker(), 0);
  g.update(false);
  g.update(false);
  EXPECT_EQ(g.scale(), 32768.0f);
  EXPECT_EQ(g.growthTracker(), 2);
  g.update(false); // the third finite step in a row: x2
  EXPECT_EQ(g.scale(), 65536.0f);
  EXPECT_EQ(g.growthTracker(), 0);
  g.update(false);
  g.update(true); // an inf resets the count
  g.update(false);
  g.update(false);
  EXPECT_EQ(g.scale(), 32768.0f);
  EXPECT_EQ(g.growthTracker(), 2);
}

TEST(DriverGradScaler, FactorsRoundToF32) {
  // The products are taken in double and stored as float, as torch does.
  GradScaler g(GradScalerInfo{1000, 3, 0.1, 1});
  g.update(true);
  EXPECT_EQ(g.scale(), float(double(1000.0f) * 0.1));
  g.update(false);
  EXPECT_EQ(g.scale(), float(double(float(double(1000.0f) * 0.1)) * 3));
}

TEST(DriverGradScaler, NoGrowthPastTheLargestFloat) {
  GradScaler g(GradScalerInfo{FLT_MAX, 2, 0.5, 1});
  g.update(false); // FLT_MAX * 2 is inf: kept, tracker reset
  EXPECT_EQ(g.scale(), FLT_MAX);
  EXPECT_EQ(g.growthTracker(), 0);
}

TEST(DriverGradScaler, Restore) {
  GradScaler g(GradScalerInfo{65536, 2, 0.5, 4});
  EXPECT_TRUE(g.restore(1024, 3));
  EXPECT_EQ(g.scale(), 1024.0f);
  g.update(false);
  EXPECT_EQ(g.scale(), 2048.0f);
  // A tracker at or past a (since shortened) interval grows next time.
  EXPECT_TRUE(g.restore(1024, 10));
  g.update(false);
  EXPECT_EQ(g.scale(), 2048.0f);
  for (auto [scale, tracker] : {std::pair<double, int64_t>{0, 0},
                                {-1, 0},
                                {1e39, 0},
                                {0.1, 0},
                                {1024, -1}})
    EXPECT_FALSE(g.restore(scale, tracker)) << scale << " " << tracker;
}

} // namespace
} // namespace modelc::rt
