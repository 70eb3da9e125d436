// Tests of the runtime side of value checks (runtime/data/ValueCheck.h):
// which elements of a sample a check reads, the range and the ignore value,
// and the manifest's boxes that are refused.
#include "runtime/data/ValueCheck.h"

#include <gtest/gtest.h>

#include <cstring>

namespace modelc::rt {
namespace {

ValueCheck check(std::vector<int64_t> starts, std::vector<int64_t> limits,
                 std::vector<int64_t> strides, int64_t end,
                 std::optional<int64_t> ignore = std::nullopt) {
  ValueCheck c;
  c.starts = std::move(starts);
  c.limits = std::move(limits);
  c.strides = std::move(strides);
  c.end = end;
  c.ignore = ignore;
  return c;
}

template <typename T>
std::optional<BadValue> find(const ValueCheck &c, DType dtype,
                             std::vector<int64_t> shape,
                             const std::vector<T> &values) {
  return findBadValue(c, dtype, shape,
                      reinterpret_cast<const uint8_t *>(values.data()));
}

TEST(ValueCheckTest, ReadsOnlyTheStridedBox) {
  // Rows 1 and 3 of a 4 x 3 sample, columns 0 and 2.
  ValueCheck c = check({1, 0}, {4, 3}, {2, 2}, 10);
  std::vector<int32_t> values(12, 99);
  for (int64_t row : {1, 3})
    for (int64_t col : {0, 2})
      values[row * 3 + col] = 9;
  EXPECT_FALSE(find(c, DType::I32, {4, 3}, values));
  values[3 * 3 + 2] = 10; // the last element of the box
  std::optional<BadValue> bad = find(c, DType::I32, {4, 3}, values);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->element, 11);
  EXPECT_EQ(bad->value, 10);
  EXPECT_EQ(formatIndex(bad->element, {4, 3}), "[3, 2]");
}

TEST(ValueCheckTest, FirstBadElementInRowMajorOrder) {
  ValueCheck c = check({0}, {5}, {1}, 4);
  std::optional<BadValue> bad =
      find(c, DType::I64, {5}, std::vector<int64_t>{0, 3, -1, 7, 2});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->element, 2);
  EXPECT_EQ(bad->value, -1);
}

TEST(ValueCheckTest, IgnoreValueIsAllowed) {
  ValueCheck c = check({0}, {3}, {1}, 10, -100);
  EXPECT_FALSE(find(c, DType::I32, {3}, std::vector<int32_t>{-100, 9, 0}));
  std::optional<BadValue> bad =
      find(c, DType::I32, {3}, std::vector<int32_t>{-100, -99, 0});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->value, -99);
  EXPECT_EQ(c.rangeText(), "[0, 10) or -100");
  EXPECT_EQ(check({}, {}, {}, 10).rangeText(), "[0, 10)");
}

TEST(ValueCheckTest, ScalarSamplesAndUnsignedTypes) {
  ValueCheck scalar = check({}, {}, {}, 10);
  EXPECT_FALSE(find(scalar, DType::U8, {}, std::vector<uint8_t>{9}));
  std::optional<BadValue> bad =
      find(scalar, DType::U8, {}, std::vector<uint8_t>{255});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->element, 0);
  EXPECT_EQ(bad->value, 255);
  // u16 values above 32767 stay positive.
  bad = find(check({0}, {2}, {1}, 50257), DType::U16, {2},
             std::vector<uint16_t>{50256, 65535});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->value, 65535);
}

TEST(ValueCheckTest, FloatFieldsAreNotRead) {
  EXPECT_FALSE(find(check({0}, {2}, {1}, 1), DType::F32, {2},
                    std::vector<float>{5.0f, -3.0f}));
}

TEST(ValueCheckTest, BoxMustFitTheSample) {
  EXPECT_TRUE(check({1, 0}, {4, 3}, {2, 2}, 10).fits({4, 3}));
  EXPECT_TRUE(check({}, {}, {}, 10).fits({}));
  EXPECT_FALSE(check({0}, {5}, {1}, 10).fits({4}));      // past the end
  EXPECT_FALSE(check({0}, {4}, {0}, 10).fits({4}));      // stride 0
  EXPECT_FALSE(check({2}, {2}, {1}, 10).fits({4}));      // empty
  EXPECT_FALSE(check({0}, {4}, {1}, 10).fits({4, 1}));   // rank
  EXPECT_FALSE(check({0}, {4}, {1}, 0).fits({4}));       // empty range
}

} // namespace
} // namespace modelc::rt
