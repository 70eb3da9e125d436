// Tests of the element type table and the overflow-checked shape sizes.
#include "runtime/io/DType.h"
#include "runtime/io/Shape.h"

#include <gtest/gtest.h>

namespace modelc::rt {
namespace {

constexpr DType kAll[] = {DType::F32,  DType::F64, DType::F16,
                          DType::BF16, DType::I32, DType::I64,
                          DType::U8,   DType::U16, DType::Bool};

TEST(DTypeTest, SizesMatchTheirNames) {
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I32), 4u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ(dtypeSize(DType::U8), 1u);
  EXPECT_EQ(dtypeSize(DType::U16), 2u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
}

TEST(DTypeTest, MdlAndSafetensorsSpellings) {
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(dtypeName(DType::Bool), "bool");
  EXPECT_STREQ(dtypeName(DType::U16), "u16");
  EXPECT_STREQ(safetensorsDTypeName(DType::BF16), "BF16");
  EXPECT_STREQ(safetensorsDTypeName(DType::Bool), "BOOL");
  EXPECT_STREQ(safetensorsDTypeName(DType::I64), "I64");
}

TEST(DTypeTest, SafetensorsNamesRoundTrip) {
  for (DType dtype : kAll)
    EXPECT_EQ(parseSafetensorsDType(safetensorsDTypeName(dtype)), dtype)
        << dtypeName(dtype);
}

TEST(DTypeTest, UnsupportedSafetensorsNamesAreRejected) {
  for (const char *name : {"I8", "U32", "U64", "F8_E4M3", "f32", "", "F32 "})
    EXPECT_FALSE(parseSafetensorsDType(name).has_value()) << name;
}

TEST(ShapeTest, ByteSizeOfOrdinaryShapes) {
  EXPECT_EQ(checkedByteSize({}, DType::F32), 4u);
  EXPECT_EQ(checkedByteSize({28, 28}, DType::U8), 784u);
  EXPECT_EQ(checkedByteSize({3, 0, 5}, DType::F64), 0u);
  EXPECT_EQ(checkedElementCount({60000, 28, 28}), 47040000u);
}

TEST(ShapeTest, NegativeOrOverflowingShapesHaveNoSize) {
  EXPECT_FALSE(checkedElementCount({-1}).has_value());
  EXPECT_FALSE(checkedElementCount({1 << 30, 1 << 30, 1 << 30}).has_value());
  EXPECT_FALSE(checkedByteSize({int64_t(1) << 61}, DType::F64).has_value());
  EXPECT_FALSE(checkedElementCount({INT64_MAX, INT64_MAX, 0}).has_value());
}

TEST(ShapeTest, Spelling) {
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_EQ(formatShape({7}), "[7]");
  EXPECT_EQ(formatShape({2, 3}), "[2, 3]");
}

} // namespace
} // namespace modelc::rt
