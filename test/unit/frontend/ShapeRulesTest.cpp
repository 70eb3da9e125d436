// Tests of the size arithmetic shared by the frontend and the mdl dialect.
#include "dialects/mdl/ShapeRules.h"

#include <gtest/gtest.h>

#include <limits>

using namespace modelc::shape_rules;

namespace {

using V = std::vector<int64_t>;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(ShapeRulesTest, ElementCountDetectsOverflow) {
  EXPECT_EQ(getElementCount({}), 1);
  EXPECT_EQ(getElementCount({2, 3, 4}), 24);
  EXPECT_EQ(getElementCount({2, 0, kMax}), 0);
  EXPECT_FALSE(getElementCount({1ll << 32, 1ll << 31}));
}

TEST(ShapeRulesTest, BroadcastAlignsFromTheRight) {
  EXPECT_EQ(broadcastShapes({8, 1, 6, 1}, {7, 1, 5}), (V{8, 7, 6, 5}));
  EXPECT_EQ(broadcastShapes({}, {3}), (V{3}));
  EXPECT_EQ(broadcastShapes({1}, {}), (V{1}));
  EXPECT_FALSE(broadcastShapes({2, 3}, {4}));
}

TEST(ShapeRulesTest, MatmulPromotesVectorsAndBroadcastsBatches) {
  EXPECT_EQ(inferMatmulShapes({2, 3}, {3, 4}).result, (V{2, 4}));
  EXPECT_EQ(inferMatmulShapes({3}, {3}).result, V{});
  EXPECT_EQ(inferMatmulShapes({3}, {5, 3, 4}).result, (V{5, 4}));
  EXPECT_EQ(inferMatmulShapes({5, 2, 3}, {3}).result, (V{5, 2}));
  EXPECT_EQ(inferMatmulShapes({5, 1, 2, 3}, {4, 3, 6}).result, (V{5, 4, 2, 6}));
}

TEST(ShapeRulesTest, MatmulNamesWhatFailed) {
  MatmulShapes inner = inferMatmulShapes({2, 3}, {4});
  EXPECT_FALSE(inner.result);
  EXPECT_EQ(inner.lhsK, 3);
  EXPECT_EQ(inner.rhsK, 4);
  MatmulShapes batch = inferMatmulShapes({2, 1, 3}, {5, 3, 1});
  EXPECT_FALSE(batch.result);
  EXPECT_EQ(batch.lhsBatch, V{2});
  EXPECT_EQ(batch.rhsBatch, V{5});
}

TEST(ShapeRulesTest, WindowCount) {
  EXPECT_EQ(getWindowCount(28, 5, 1, 0), 24);
  EXPECT_EQ(getWindowCount(28, 2, 2, 0), 14);
  EXPECT_EQ(getWindowCount(5, 3, 1, 1, 2), 3);
  EXPECT_FALSE(getWindowCount(5, 7, 1, 0));
  EXPECT_FALSE(getWindowCount(5, 0, 1, 0));
  EXPECT_FALSE(getWindowCount(5, 3, 0, 0));
}

TEST(ShapeRulesTest, WindowCountDetectsOverflow) {
  // The padded size overflows int64: only the wide count is exact.
  EXPECT_FALSE(getWindowCount(kMax, 1, 1, 1));
  std::optional<WideSize> wide = getWideWindowCount(kMax, 1, 1, 1);
  ASSERT_TRUE(wide);
  EXPECT_TRUE(*wide == static_cast<WideSize>(kMax) + 2);
  // The dilated kernel extent overflows int64.
  EXPECT_FALSE(getWindowCount(kMax, kMax, 1, 0, 2));
  EXPECT_TRUE(getDilatedExtent(kMax, 2) > static_cast<WideSize>(kMax));
}

} // namespace
