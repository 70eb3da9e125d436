// Tests of the safetensors reader and writer: round trips, the reference
// layout, and one test per way a file can be malformed.
#include "runtime/io/Safetensors.h"

#include "io_TestSupport.h"

#include <cstring>

namespace modelc::rt {
namespace {

using test::failsWith;
using test::ScratchDir;

/// A file with the given JSON header and data; `declared` overrides the
/// header length field.
std::string fileWith(const std::string &header, const std::string &data,
                     std::optional<uint64_t> declared = std::nullopt) {
  std::string out;
  test::putLE(out, declared.value_or(header.size()), 8);
  return out + header + data;
}

class SafetensorsTest : public testing::Test {
protected:
  /// Writes `bytes` as bad.safetensors and reads it back.
  Result<std::vector<TensorData>> readBack(const std::string &bytes) {
    test::writeBytes(path_, bytes);
    return readSafetensors(path_);
  }
  ScratchDir dir_;
  std::string path_ = dir_.path("bad.safetensors");
};

TEST_F(SafetensorsTest, RoundTripKeepsOrderDTypesShapesAndMetadata) {
  std::vector<float> weight = {1.5f, -2.0f, 3.25f, 0.0f, 5.0f, 6.0f};
  std::vector<uint16_t> halves = {0x3c00, 0xbc00};
  int64_t step = 1234567890123;
  std::vector<uint8_t> flags = {1, 0, 1};
  std::vector<TensorView> views = {
      {"fc2.weight", DType::F32, {2, 3}, weight.data(), 24},
      {"a.bf16", DType::BF16, {2}, halves.data(), 4},
      {"step", DType::I64, {}, &step, 8},
      {"empty", DType::F64, {0, 4}, nullptr, 0},
      {"mask", DType::Bool, {3}, flags.data(), 3}};
  std::string path = dir_.path("model.safetensors");
  ASSERT_TRUE(writeSafetensors(path, views, {{"format", "pt"}}).ok());

  std::map<std::string, std::string> metadata;
  Result<std::vector<TensorData>> tensors = readSafetensors(path, &metadata);
  ASSERT_TRUE(tensors.ok()) << tensors.status().message();
  ASSERT_EQ(tensors->size(), views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    const TensorData &tensor = (*tensors)[i];
    EXPECT_EQ(tensor.name, views[i].name);
    EXPECT_EQ(tensor.dtype, views[i].dtype);
    EXPECT_EQ(tensor.shape, views[i].shape);
    ASSERT_EQ(tensor.bytes.size(), views[i].bytes);
    if (views[i].bytes) {
      EXPECT_EQ(std::memcmp(tensor.bytes.data(), views[i].data, views[i].bytes),
                0);
    }
  }
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
}

TEST_F(SafetensorsTest, HeaderIsPaddedToEightBytesLikeTheReference) {
  float x = 1.0f;
  std::string path = dir_.path("one.safetensors");
  ASSERT_TRUE(writeSafetensors(path, {{"x", DType::F32, {1}, &x, 4}}).ok());
  std::string bytes = test::readBytes(path);
  uint64_t headerSize;
  std::memcpy(&headerSize, bytes.data(), 8);
  EXPECT_EQ(headerSize % 8, 0u);
  std::string header = bytes.substr(8, headerSize);
  EXPECT_EQ(header.substr(0, header.find_last_not_of(' ') + 1),
            R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})");
  EXPECT_EQ(bytes.size(), 8 + headerSize + 4);
}

TEST_F(SafetensorsTest, NoTensorsIsAValidFile) {
  Result<std::vector<TensorData>> tensors = readBack(fileWith("{}", ""));
  ASSERT_TRUE(tensors.ok()) << tensors.status().message();
  EXPECT_TRUE(tensors->empty());
}

TEST_F(SafetensorsTest, EveryTruncationIsAnError) {
  float values[3] = {1, 2, 3};
  std::string good = dir_.path("good.safetensors");
  ASSERT_TRUE(
      writeSafetensors(good, {{"v", DType::F32, {3}, values, 12}}).ok());
  std::string bytes = test::readBytes(good);
  for (size_t length = 0; length < bytes.size(); ++length)
    EXPECT_FALSE(readBack(bytes.substr(0, length)).ok()) << length;
  EXPECT_TRUE(failsWith(readBack(bytes.substr(0, 5)), path_, "truncated"));
  EXPECT_TRUE(
      failsWith(readBack(bytes.substr(0, 20)), path_, "exceeds the file size"));
  EXPECT_TRUE(failsWith(readBack(bytes.substr(0, bytes.size() - 1)), path_,
                        "past the end of the data"));
}

TEST_F(SafetensorsTest, HeaderLengthLargerThanTheFile) {
  EXPECT_TRUE(failsWith(readBack(fileWith("{}", "", 4096)), path_,
                        "truncated: header length 4096 exceeds the file size"));
}

TEST_F(SafetensorsTest, AbsurdHeaderLengthIsRefusedBeforeReading) {
  EXPECT_TRUE(failsWith(readBack(fileWith("{}", "", uint64_t(1) << 60)), path_,
                        "exceeds the limit"));
}

TEST_F(SafetensorsTest, InvalidJson) {
  EXPECT_TRUE(failsWith(readBack(fileWith(R"({"x": {"dtype": )", "")), path_,
                        "invalid JSON header"));
  EXPECT_TRUE(
      failsWith(readBack(fileWith("[1, 2]", "")), path_, "not a JSON object"));
  EXPECT_TRUE(failsWith(readBack(fileWith("{\"\xff\": 1}", "")), path_,
                        "invalid JSON header"));
}

// Regression (issue 13): nlohmann's parser stops at a NUL as at the end of
// its input, so a header of valid JSON, a NUL and garbage was accepted.
TEST_F(SafetensorsTest, NulAndGarbageAfterTheJsonAreRefused) {
  std::string json = R"({"x":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
  Result<std::vector<TensorData>> read =
      readBack(fileWith(json + std::string("\0garbage", 8), "1234"));
  EXPECT_TRUE(failsWith(
      read, path_, "a NUL byte at byte " + std::to_string(8 + json.size())));
  // A NUL inside the object too, where the parser would have stopped early.
  EXPECT_TRUE(failsWith(readBack(fileWith(std::string("{\0}", 3), "")), path_,
                        "a NUL byte at byte 9"));
}

TEST_F(SafetensorsTest, OnlySpacesMayFollowTheJsonObject) {
  std::string json = R"({"x":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
  EXPECT_TRUE(readBack(fileWith(json + "   ", "1234")).ok());
  for (const char *padding : {"\t", "\n", "\r\n", " x", "}"})
    EXPECT_TRUE(failsWith(readBack(fileWith(json + padding, "1234")), path_,
                          "invalid JSON header"))
        << "padding '" << padding << "'";
  EXPECT_TRUE(failsWith(readBack(fileWith(json + "\t", "1234")), path_,
                        "byte 0x09 after the JSON object"));
  // And nothing may come before it.
  EXPECT_TRUE(failsWith(readBack(fileWith(" " + json, "1234")), path_,
                        "not a JSON object at byte 8"));
}

TEST_F(SafetensorsTest, KeysMayNotRepeat) {
  std::string entry = R"({"dtype":"U8","shape":[4],"data_offsets":[0,4]})";
  EXPECT_TRUE(failsWith(
      readBack(fileWith("{\"x\":" + entry + ",\"x\":" + entry + "}", "1234")),
      path_, "the key 'x' appears twice"));
  EXPECT_TRUE(failsWith(
      readBack(fileWith(R"({"x":{"dtype":"U8","dtype":"U8","shape":[4],)"
                        R"("data_offsets":[0,4]}})",
                        "1234")),
      path_, "the key 'dtype' appears twice"));
}

TEST_F(SafetensorsTest, NullMetadataIsNoMetadataAsInTheReference) {
  std::map<std::string, std::string> metadata;
  std::string bytes = fileWith(R"({"__metadata__":null})", "");
  Result<std::vector<TensorData>> read =
      parseSafetensors(reinterpret_cast<const uint8_t *>(bytes.data()),
                       bytes.size(), "m", &metadata);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(read->empty());
  EXPECT_TRUE(metadata.empty());
}

TEST_F(SafetensorsTest, DataErrorsGiveFileOffsets) {
  std::string header =
      R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})";
  // The data starts at 8 + the header's length.
  std::string at = std::to_string(8 + header.size());
  EXPECT_TRUE(failsWith(readBack(fileWith(header, "1234")), path_,
                        "(bytes " + at + "-"));
}

TEST_F(SafetensorsTest, OffsetsPastTheEnd) {
  std::string header =
      R"({"x":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})";
  EXPECT_TRUE(failsWith(readBack(fileWith(header, "1234")), path_,
                        "tensor 'x': data_offsets [0, 8] are past the end"));
}

TEST_F(SafetensorsTest, OverlappingOffsets) {
  std::string header =
      R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
      R"("b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})";
  EXPECT_TRUE(failsWith(readBack(fileWith(header, "123456")), path_,
                        "tensors 'a' and 'b' have overlapping data_offsets"));
}

TEST_F(SafetensorsTest, GapsAndTrailingDataBelongToNoTensor) {
  std::string gap = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})";
  EXPECT_TRUE(failsWith(readBack(fileWith(gap, "1234")), path_,
                        "2 bytes of data before tensor 'a'"));
  std::string tail = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  EXPECT_TRUE(failsWith(readBack(fileWith(tail, "1234")), path_,
                        "2 bytes of data after the last tensor"));
}

TEST_F(SafetensorsTest, ShapeTimesDTypeMustMatchTheSpan) {
  std::string header =
      R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})";
  EXPECT_TRUE(failsWith(readBack(fileWith(header, std::string(12, '\0'))),
                        path_, "shape [2, 2] of F32 does not match"));
}

TEST_F(SafetensorsTest, UnknownDType) {
  for (const char *dtype : {"I8", "Q4", "f32"}) {
    std::string header = std::string(R"({"w":{"dtype":")") + dtype +
                         R"(","shape":[1],"data_offsets":[0,1]}})";
    EXPECT_TRUE(failsWith(readBack(fileWith(header, "x")), path_,
                          std::string("unsupported dtype '") + dtype + "'"));
  }
}

TEST_F(SafetensorsTest, MalformedEntries) {
  const std::pair<const char *, const char *> cases[] = {
      {R"({"w":{"shape":[1],"data_offsets":[0,1]}})", "missing 'dtype'"},
      {R"({"w":{"dtype":"U8","data_offsets":[0,1]}})", "missing 'shape'"},
      {R"({"w":{"dtype":"U8","shape":[1]}})", "missing 'data_offsets'"},
      {R"({"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})",
       "'shape' is not a list of non-negative integers"},
      {R"({"w":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}})",
       "'shape' is not a list of non-negative integers"},
      {R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0]}})",
       "'data_offsets' is not a list of two"},
      {R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}})",
       "are reversed"},
      {R"({"w":{"dtype":7,"shape":[1],"data_offsets":[0,1]}})",
       "'dtype' is not a string"},
      {R"({"w":[1]})", "header entry is not a JSON object"},
      {R"({"__metadata__":{"a":1}})", "value for 'a' is not a string"},
      {R"({"__metadata__":[]})", "'__metadata__' is not a JSON object"}};
  for (const auto &[header, phrase] : cases)
    EXPECT_TRUE(failsWith(readBack(fileWith(header, "x")), path_, phrase))
        << header;
}

TEST_F(SafetensorsTest, HugeShapeDoesNotOverflow) {
  std::string header = R"({"w":{"dtype":"F64","shape":)"
                       R"([4294967296,4294967296,4294967296],)"
                       R"("data_offsets":[0,8]}})";
  EXPECT_TRUE(failsWith(readBack(fileWith(header, std::string(8, '\0'))), path_,
                        "does not match"));
}

TEST_F(SafetensorsTest, WriterRejectsInconsistentTensors) {
  float x[2] = {1, 2};
  std::string path = dir_.path("w.safetensors");
  Status status = writeSafetensors(path, {{"x", DType::F32, {3}, x, 8}});
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.exitCode(), kExitInternal);
  status = writeSafetensors(
      path, {{"x", DType::F32, {1}, x, 4}, {"x", DType::F32, {1}, x, 4}});
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

} // namespace
} // namespace modelc::rt
