// Tests of the element type table and the overflow-checked shape sizes.
#include "runtime/io/DType.h"
#include "runtime/io/Shape.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

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

TEST(DTypeTest, ElementsReadAsDoubles) {
  auto read = [](DType dtype, std::initializer_list<uint8_t> bytes) {
    std::vector<uint8_t> b(bytes);
    return elementAsDouble(dtype, b.data());
  };
  EXPECT_EQ(read(DType::F16, {0x00, 0x3c}), 1.0);
  EXPECT_EQ(read(DType::F16, {0x00, 0xc0}), -2.0);
  EXPECT_EQ(read(DType::F16, {0xff, 0x7b}), 65504.0);   // the largest
  EXPECT_EQ(read(DType::F16, {0x01, 0x00}), 0x1p-24);   // the least subnormal
  EXPECT_EQ(read(DType::F16, {0x00, 0x7c}), INFINITY);
  EXPECT_TRUE(std::isnan(read(DType::F16, {0x01, 0x7e})));
  EXPECT_EQ(read(DType::BF16, {0x80, 0x3f}), 1.0);
  EXPECT_EQ(read(DType::BF16, {0xc0, 0xbf}), -1.5);
  EXPECT_EQ(read(DType::I64, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
            -2.0);
  EXPECT_EQ(read(DType::I32, {0x00, 0x00, 0x00, 0x80}), -2147483648.0);
  EXPECT_EQ(read(DType::U16, {0xff, 0xff}), 65535.0);
  EXPECT_EQ(read(DType::Bool, {1}), 1.0);
  double d = 0.1;
  std::vector<uint8_t> b(8);
  std::memcpy(b.data(), &d, 8);
  EXPECT_EQ(elementAsDouble(DType::F64, b.data()), 0.1);
}

TEST(DTypeTest, UnitRoundoff) {
  EXPECT_EQ(unitRoundoff(DType::F32), 0x1p-24);
  EXPECT_EQ(unitRoundoff(DType::F64), 0x1p-53);
  EXPECT_EQ(unitRoundoff(DType::F16), 0x1p-11);
  EXPECT_EQ(unitRoundoff(DType::BF16), 0x1p-8);
  EXPECT_EQ(unitRoundoff(DType::I64), 0.0);
  EXPECT_EQ(unitRoundoff(DType::Bool), 0.0);
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
