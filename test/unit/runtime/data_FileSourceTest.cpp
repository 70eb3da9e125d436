// Tests of the file, npy and npz sources: raw arrays cut into samples,
// llm.c token shards, and arrays whose first axis is the samples.
#include "runtime/data/Source.h"
#include "runtime/io/Npy.h"

#include "io_TestSupport.h"

#include <cstring>

namespace modelc::rt {
namespace {

using test::failsWith;
using test::ScratchDir;

using Kind = FieldSpec::Kind;

/// An llm.c token shard: 256 int32 header entries, then uint16 tokens.
std::string shardBytes(const std::vector<uint16_t> &tokens,
                       int32_t declared = -1, int32_t version = 1) {
  std::string out;
  test::putLE(out, 20240520, 4);
  test::putLE(out, uint32_t(version), 4);
  test::putLE(out, uint32_t(declared >= 0 ? declared : int32_t(tokens.size())),
              4);
  out.append(253 * 4, '\0');
  for (uint16_t token : tokens)
    test::putLE(out, token, 2);
  return out;
}

class FileSourceTest : public testing::Test {
protected:
  Result<std::unique_ptr<FieldSource>> open(Kind kind, DType dtype,
                                            std::vector<int64_t> shape,
                                            const std::string &name,
                                            const std::string &key = "") {
    return openFieldSource(
        {"x", dtype, std::move(shape), kind, Kind::File, dir_.path(name), key});
  }
  std::string write(const std::string &name, const std::string &bytes) {
    test::writeBytes(dir_.path(name), bytes);
    return dir_.path(name);
  }
  ScratchDir dir_;
};

TEST_F(FileSourceTest, RawFileIsCutIntoSamples) {
  std::string bytes;
  for (int32_t i = 0; i < 12; ++i)
    test::putLE(bytes, uint32_t(i), 4);
  write("raw.bin", bytes);
  Result<std::unique_ptr<FieldSource>> source =
      open(Kind::File, DType::I32, {2, 2}, "raw.bin");
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->numSamples(), 3);
  int32_t sample[4];
  (*source)->readSample(2, reinterpret_cast<uint8_t *>(sample));
  EXPECT_EQ(sample[0], 8);
  EXPECT_EQ(sample[3], 11);
}

TEST_F(FileSourceTest, RawFileSizeMustBeAMultipleOfTheSample) {
  std::string path = write("odd.bin", std::string(10, '\0'));
  EXPECT_TRUE(failsWith(open(Kind::File, DType::F32, {2}, "odd.bin"), path,
                        "file size 10 is not a multiple of the 4-byte f32"));
  path = write("odd2.bin", std::string(12, '\0'));
  EXPECT_TRUE(failsWith(open(Kind::File, DType::F32, {2}, "odd2.bin"), path,
                        "12 bytes of data is not a multiple of the sample "
                        "size 8"));
}

TEST_F(FileSourceTest, TokenShardIsRecognisedByItsMagic) {
  write("shard.bin", shardBytes({10, 11, 12, 13, 65535}));
  Result<std::unique_ptr<FieldSource>> source =
      open(Kind::File, DType::U16, {}, "shard.bin");
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->numSamples(), 5);
  uint16_t token;
  (*source)->readSample(4, reinterpret_cast<uint8_t *>(&token));
  EXPECT_EQ(token, 65535);
}

TEST_F(FileSourceTest, TokenShardWithAWrongTokenCount) {
  std::string path = write("shard.bin", shardBytes({1, 2, 3}, 4));
  EXPECT_TRUE(failsWith(open(Kind::File, DType::U16, {}, "shard.bin"), path,
                        "llm.c token shard header says 4 tokens (8 bytes), "
                        "file has 6 bytes of tokens"));
}

TEST_F(FileSourceTest, TokenShardVersionAndDType) {
  std::string path = write("v2.bin", shardBytes({1}, -1, 2));
  EXPECT_TRUE(failsWith(open(Kind::File, DType::U16, {}, "v2.bin"), path,
                        "llm.c token shard version 2 is not supported"));
  path = write("i32.bin", shardBytes({1, 2}));
  EXPECT_TRUE(failsWith(open(Kind::File, DType::I32, {}, "i32.bin"), path,
                        "expected dtype i32 for field 'x', found u16 (llm.c "
                        "token shard)"));
}

TEST_F(FileSourceTest, EveryTruncatedShardIsAnError) {
  std::string bytes = shardBytes({5, 6, 7});
  // Shorter than 4 bytes there is no magic to recognise: that is a raw file.
  for (size_t length = 4; length < bytes.size(); ++length) {
    std::string path = write("t.bin", bytes.substr(0, length));
    EXPECT_TRUE(failsWith(open(Kind::File, DType::U16, {}, "t.bin"), path,
                          "token shard"))
        << length;
  }
}

TEST_F(FileSourceTest, NpyFirstAxisIsTheSamples) {
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = float(i);
  ASSERT_TRUE(
      writeNpy(dir_.path("x.npy"), DType::F32, {4, 2, 3}, values.data()).ok());
  Result<std::unique_ptr<FieldSource>> source =
      open(Kind::Npy, DType::F32, {2, 3}, "x.npy");
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->numSamples(), 4);
  float sample[6];
  (*source)->readSample(3, reinterpret_cast<uint8_t *>(sample));
  EXPECT_EQ(sample[0], 18.0f);
  EXPECT_EQ(sample[5], 23.0f);
}

TEST_F(FileSourceTest, NpyDTypeAndShapeMustMatch) {
  std::vector<float> values(6);
  std::string path = dir_.path("x.npy");
  ASSERT_TRUE(writeNpy(path, DType::F32, {3, 2}, values.data()).ok());
  EXPECT_TRUE(failsWith(open(Kind::Npy, DType::U8, {2}, "x.npy"), path,
                        "expected dtype u8 for field 'x', found <f4"));
  EXPECT_TRUE(failsWith(open(Kind::Npy, DType::F32, {3}, "x.npy"), path,
                        "expected per-sample shape [3] for field 'x', found "
                        "[2]"));
  float scalar = 1;
  ASSERT_TRUE(writeNpy(path, DType::F32, {}, &scalar).ok());
  EXPECT_TRUE(failsWith(open(Kind::Npy, DType::F32, {}, "x.npy"), path,
                        "a 0-d array has no sample axis"));
}

TEST_F(FileSourceTest, NpzMemberAsASource) {
  std::vector<uint8_t> labels = {3, 1, 4, 1, 5};
  std::string path = dir_.path("d.npz");
  ASSERT_TRUE(
      writeNpz(path, {{"label", {DType::U8, {5}, labels.data()}}}).ok());
  Result<std::unique_ptr<FieldSource>> source =
      open(Kind::Npz, DType::U8, {}, "d.npz", "label");
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->numSamples(), 5);
  uint8_t label;
  (*source)->readSample(2, &label);
  EXPECT_EQ(label, 4);
  EXPECT_TRUE(failsWith(open(Kind::Npz, DType::U8, {}, "d.npz", "image"), path,
                        "no array named 'image'"));
  EXPECT_TRUE(failsWith(open(Kind::Npz, DType::I64, {}, "d.npz", "label"), path,
                        "expected dtype i64 for field 'x', found |u1"));
}

TEST_F(FileSourceTest, OutOfRangeIndexReadsZerosNotMemory) {
  write("raw.bin", std::string(8, '\x7f'));
  Result<std::unique_ptr<FieldSource>> source =
      open(Kind::File, DType::U8, {4}, "raw.bin");
  ASSERT_TRUE(source.ok());
  uint8_t sample[4] = {1, 1, 1, 1};
  (*source)->readSample(2, sample);
  EXPECT_EQ(sample[0], 0);
  (*source)->readSample(-1, sample);
  EXPECT_EQ(sample[3], 0);
}

TEST_F(FileSourceTest, NegativeFieldShapeIsAnError) {
  std::string path = write("raw.bin", std::string(8, '\0'));
  EXPECT_TRUE(failsWith(open(Kind::File, DType::U8, {-2}, "raw.bin"), path,
                        "field 'x' has an invalid shape [-2]"));
}

} // namespace
} // namespace modelc::rt
