// Tests of the .npy reader and writer: round trips of every dtype, the
// header layouts numpy writes, and one test per way a file can be malformed.
#include "runtime/io/Npy.h"

#include "io_TestSupport.h"

#include <cstring>

namespace modelc::rt {
namespace {

using test::failsWith;
using test::ScratchDir;

/// A .npy of the given header dict text (padded with spaces and '\n') and
/// data, with a header of `major` version.
std::string npyWith(const std::string &dict, const std::string &data,
                    int major = 1) {
  std::string out("\x93NUMPY", 6);
  out.push_back(char(major));
  out.push_back(0);
  std::string header = dict + "\n";
  test::putLE(out, header.size(), major == 1 ? 2 : 4);
  return out + header + data;
}

class NpyTest : public testing::Test {
protected:
  Result<NpyArray> parse(const std::string &bytes) {
    return parseNpy(reinterpret_cast<const uint8_t *>(bytes.data()),
                    bytes.size(), "x.npy");
  }
  ScratchDir dir_;
};

TEST_F(NpyTest, RoundTripOfEveryDType) {
  const DType dtypes[] = {DType::F32, DType::F64, DType::F16, DType::I32,
                          DType::I64, DType::U8,  DType::U16, DType::Bool};
  for (DType dtype : dtypes) {
    std::vector<uint8_t> data(6 * dtypeSize(dtype));
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = dtype == DType::Bool ? i % 2 : uint8_t(i * 7 + 1);
    std::string path = dir_.path(std::string(dtypeName(dtype)) + ".npy");
    ASSERT_TRUE(writeNpy(path, dtype, {2, 3}, data.data()).ok());
    Result<NpyArray> array = readNpy(path);
    ASSERT_TRUE(array.ok()) << array.status().message();
    EXPECT_EQ(array->dtype, dtype);
    EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(array->bytes, data) << dtypeName(dtype);
  }
}

TEST_F(NpyTest, HeaderIsWhatNumpyWrites) {
  int32_t values[3] = {1, 2, 3};
  std::string path = dir_.path("v.npy");
  ASSERT_TRUE(writeNpy(path, DType::I32, {3}, values).ok());
  std::string bytes = test::readBytes(path);
  ASSERT_EQ(bytes.size(), 128u + 12u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  std::string header = bytes.substr(10, 118);
  EXPECT_EQ(header.substr(0, header.find_last_not_of(" \n") + 1),
            "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }");
  EXPECT_EQ(header.back(), '\n');
}

TEST_F(NpyTest, ScalarsAndEmptyArrays) {
  double pi = 3.14159;
  std::string path = dir_.path("s.npy");
  ASSERT_TRUE(writeNpy(path, DType::F64, {}, &pi).ok());
  Result<NpyArray> scalar = readNpy(path);
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->bytes.size(), 8u);
  ASSERT_TRUE(writeNpy(path, DType::U8, {0, 5}, nullptr).ok());
  Result<NpyArray> empty = readNpy(path);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->shape, (std::vector<int64_t>{0, 5}));
}

TEST_F(NpyTest, HeaderVariantsNumpyAccepts) {
  // Version 2.0 and 3.0 headers, double quotes, no trailing comma, Python 2
  // longs, a 1-byte type with an explicit byte order.
  Result<NpyArray> v2 = parse(npyWith(
      "{\"descr\": \"<u2\", \"fortran_order\": False, \"shape\": (2L,)}",
      "abcd", 2));
  ASSERT_TRUE(v2.ok()) << v2.status().message();
  EXPECT_EQ(v2->dtype, DType::U16);
  EXPECT_EQ(v2->shape, std::vector<int64_t>{2});
  Result<NpyArray> v3 = parse(npyWith(
      "{'shape': (1, 1), 'fortran_order': False, 'descr': '<u1'}", "z", 3));
  ASSERT_TRUE(v3.ok()) << v3.status().message();
  EXPECT_EQ(v3->dtype, DType::U8);
}

TEST_F(NpyTest, EveryTruncationIsAnError) {
  float values[4] = {1, 2, 3, 4};
  std::string path = dir_.path("t.npy");
  ASSERT_TRUE(writeNpy(path, DType::F32, {4}, values).ok());
  std::string bytes = test::readBytes(path);
  for (size_t length = 0; length < bytes.size(); ++length)
    EXPECT_TRUE(failsWith(parse(bytes.substr(0, length)), "x.npy", "x.npy"))
        << length;
  EXPECT_TRUE(
      failsWith(parse(bytes.substr(0, 9)), "x.npy", "truncated: 9 bytes"));
  EXPECT_TRUE(failsWith(parse(bytes.substr(0, 50)), "x.npy",
                        "truncated: header length 118 exceeds"));
  EXPECT_TRUE(failsWith(parse(bytes.substr(0, 130)), "x.npy",
                        "truncated: shape [4] of <f4 needs 16 bytes of data, "
                        "file has 2"));
}

TEST_F(NpyTest, WrongMagicAndVersion) {
  EXPECT_TRUE(
      failsWith(parse("PK\x03\x04 not an npy"), "x.npy", "not a .npy file"));
  std::string v4 = npyWith("{}", "");
  v4[6] = 4;
  EXPECT_TRUE(failsWith(parse(v4), "x.npy", "unsupported .npy version 4.0"));
}

TEST_F(NpyTest, FortranOrderIsRefused) {
  EXPECT_TRUE(failsWith(
      parse(npyWith("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
                    std::string(4, '\0'))),
      "x.npy", "fortran_order arrays are not supported"));
}

TEST_F(NpyTest, UnsupportedDTypes) {
  const std::pair<const char *, const char *> cases[] = {
      {"|i1", "unsupported dtype '|i1'"},
      {"<i2", "unsupported dtype '<i2'"},
      {"<c8", "unsupported dtype '<c8'"},
      {">f4", "big-endian dtype '>f4' is not supported"},
      {"<U5", "unsupported dtype '<U5'"}};
  for (const auto &[descr, phrase] : cases)
    EXPECT_TRUE(failsWith(
        parse(npyWith(std::string("{'descr': '") + descr +
                          "', 'fortran_order': False, 'shape': (1,), }",
                      std::string(4, '\0'))),
        "x.npy", phrase));
}

TEST_F(NpyTest, MalformedHeaders) {
  const std::pair<const char *, const char *> cases[] = {
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
       "malformed header"},
      {"{'descr': '<f4', 'shape': (1,), }", "'fortran_order' is missing"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
       "malformed header"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }",
       "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 'y'}",
       "keys other than"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False}",
       "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} extra",
       "unexpected text after the dict"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
       "malformed header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999,)}",
       "integer too large"}};
  for (const auto &[dict, phrase] : cases)
    EXPECT_TRUE(
        failsWith(parse(npyWith(dict, std::string(4, '\0'))), "x.npy", phrase))
        << dict;
}

// Python reads "(3)" as the int 3, and numpy refuses a shape that is not
// a tuple.
TEST_F(NpyTest, AOneDimensionalShapeNeedsItsComma) {
  EXPECT_TRUE(parse(npyWith("{'descr': '|u1', 'fortran_order': False, "
                            "'shape': (3,), }",
                            "abc"))
                  .ok());
  EXPECT_TRUE(failsWith(parse(npyWith("{'descr': '|u1', 'fortran_order': "
                                      "False, 'shape': (3), }",
                                      "abc")),
                        "x.npy", "a shape of one dimension is written '(N,)'"));
}

TEST_F(NpyTest, HeaderErrorsGiveTheFileOffset) {
  // The dict starts at byte 10 of a version 1.0 file; 'X' is its 2nd byte.
  EXPECT_TRUE(failsWith(parse(npyWith("{X", "")), "x.npy",
                        "expected a string at byte 11"));
}

TEST_F(NpyTest, TrailingBytesAreAnError) {
  EXPECT_TRUE(failsWith(
      parse(npyWith("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }",
                    "abc")),
      "x.npy", "1 unexpected bytes after the array data"));
}

TEST_F(NpyTest, AbsurdHeaderLengthAndShape) {
  std::string huge("\x93NUMPY\x02\x00", 8);
  test::putLE(huge, 0xfffffff0u, 4);
  EXPECT_TRUE(failsWith(parse(huge), "x.npy", "exceeds the limit"));
  EXPECT_TRUE(failsWith(
      parse(npyWith("{'descr': '<f8', 'fortran_order': False, 'shape': "
                    "(4294967296, 4294967296, 4294967296), }",
                    "")),
      "x.npy", "is too large"));
}

TEST_F(NpyTest, Bf16CannotBeWritten) {
  uint16_t value = 0x3f80;
  std::string path = dir_.path("b.npy");
  EXPECT_TRUE(
      failsWith(writeNpy(path, DType::BF16, {1}, &value), path, "bf16"));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(NpyTest, LongShapesUseAVersion2Header) {
  std::vector<int64_t> shape(25000, 1);
  uint8_t value = 9;
  std::string path = dir_.path("long.npy");
  ASSERT_TRUE(writeNpy(path, DType::U8, shape, &value).ok());
  EXPECT_EQ(test::readBytes(path)[6], 2);
  Result<NpyArray> array = readNpy(path);
  ASSERT_TRUE(array.ok()) << array.status().message();
  EXPECT_EQ(array->shape, shape);
}

} // namespace
} // namespace modelc::rt
