// Tests of idx sources (MNIST's format), plain and gzip-compressed: sample
// access, byte order, and every way a file can disagree with its field.
#include "runtime/data/Source.h"

#include "io_TestSupport.h"

#include <cstring>

namespace modelc::rt {
namespace {

using test::failsWith;
using test::ScratchDir;

/// An idx file: magic 00 00 TYPE NDIMS, big-endian dims, then `data`.
std::string idxBytes(uint8_t type, const std::vector<uint32_t> &dims,
                     const std::string &data) {
  std::string out{'\0', '\0', char(type), char(dims.size())};
  for (uint32_t dim : dims)
    test::putBE32(out, dim);
  return out + data;
}

/// `count` images of 2x3 bytes, image i filled with i * 10 + pixel.
std::string images(int count) {
  std::string data;
  for (int i = 0; i < count; ++i)
    for (int p = 0; p < 6; ++p)
      data.push_back(char(i * 10 + p));
  return idxBytes(0x08, {uint32_t(count), 2, 3}, data);
}

class IdxTest : public testing::Test {
protected:
  /// Writes `bytes` to `name` and opens it as field `image` of u8[2, 3].
  Result<std::unique_ptr<FieldSource>>
  open(const std::string &bytes, const std::string &name = "images.idx",
       DType dtype = DType::U8, std::vector<int64_t> shape = {2, 3}) {
    path_ = dir_.path(name);
    test::writeBytes(path_, bytes);
    return openFieldSource({"image", dtype, std::move(shape),
                            FieldSpec::Kind::Idx, FieldSpec::Kind::File, path_,
                            ""});
  }
  ScratchDir dir_;
  std::string path_;
};

TEST_F(IdxTest, ReadsSamples) {
  Result<std::unique_ptr<FieldSource>> source = open(images(4));
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->numSamples(), 4);
  EXPECT_EQ((*source)->sampleBytes(), 6u);
  uint8_t sample[6];
  (*source)->readSample(2, sample);
  EXPECT_EQ(sample[0], 20);
  EXPECT_EQ(sample[5], 25);
}

TEST_F(IdxTest, GzipIsRecognisedByItsMagicNotItsName) {
  Result<std::unique_ptr<FieldSource>> source =
      open(test::gzipBytes(images(3)), "images-no-suffix");
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->numSamples(), 3);
  uint8_t sample[6];
  (*source)->readSample(1, sample);
  EXPECT_EQ(sample[3], 13);
}

TEST_F(IdxTest, LabelsAreScalarSamples) {
  Result<std::unique_ptr<FieldSource>> source = open(
      idxBytes(0x08, {5}, "\x01\x02\x03\x04\x05"), "labels.idx", DType::U8, {});
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->numSamples(), 5);
  uint8_t label;
  (*source)->readSample(4, &label);
  EXPECT_EQ(label, 5);
}

TEST_F(IdxTest, WideTypesAreConvertedFromBigEndian) {
  std::string data;
  test::putBE32(data, 0x3f800000); // 1.0f
  test::putBE32(data, 0xc0000000); // -2.0f
  Result<std::unique_ptr<FieldSource>> source =
      open(idxBytes(0x0D, {2}, data), "f.idx", DType::F32, {});
  ASSERT_TRUE(source.ok()) << source.status().message();
  float value;
  (*source)->readSample(1, reinterpret_cast<uint8_t *>(&value));
  EXPECT_EQ(value, -2.0f);
  std::string ints;
  test::putBE32(ints, 0xfffffffe);
  source = open(idxBytes(0x0C, {1}, ints), "i.idx", DType::I32, {});
  ASSERT_TRUE(source.ok()) << source.status().message();
  int32_t integer;
  (*source)->readSample(0, reinterpret_cast<uint8_t *>(&integer));
  EXPECT_EQ(integer, -2);
}

TEST_F(IdxTest, WrongMagic) {
  EXPECT_TRUE(failsWith(open("\x1f\x00\x08\x03 not idx"), "images.idx",
                        "not an idx file (wrong magic number"));
  EXPECT_TRUE(failsWith(open(idxBytes(0x07, {1}, "x")), "images.idx",
                        "unknown data type 0x07"));
  EXPECT_TRUE(failsWith(open(idxBytes(0x08, {}, "")), "images.idx",
                        "header has 0 dimensions"));
}

TEST_F(IdxTest, DTypeMustEqualTheFields) {
  EXPECT_TRUE(failsWith(open(idxBytes(0x09, {1, 2, 3}, "abcdef")), "images.idx",
                        "expected dtype u8 for field 'image', found i8"));
  EXPECT_TRUE(failsWith(open(images(2), "images.idx", DType::F32), "images.idx",
                        "expected dtype f32 for field 'image', found u8"));
}

TEST_F(IdxTest, PerSampleShapeMustEqualTheFields) {
  EXPECT_TRUE(failsWith(open(images(2), "images.idx", DType::U8, {3, 2}),
                        "images.idx",
                        "expected per-sample shape [3, 2] for field 'image', "
                        "found [2, 3]"));
}

TEST_F(IdxTest, TruncatedDataSaysWhatTheHeaderPromised) {
  std::string bytes = idxBytes(0x08, {60000, 28, 28}, std::string(1000, 'x'));
  EXPECT_TRUE(failsWith(open(bytes, "train-images-idx3-ubyte"),
                        "train-images-idx3-ubyte",
                        "truncated: header says 60000 samples of 28x28 u8 "
                        "(47040000 bytes of data), file has 1000"));
  // Compressed, a header this far beyond the file is refused before any
  // decompression; a plausible one fails when the data runs out.
  EXPECT_TRUE(failsWith(
      open(test::gzipBytes(bytes), "t.gz", DType::U8, {28, 28}), "t.gz",
      "truncated: header says 60000 samples of 28x28 u8 "
      "(47040000 bytes of data), more than the"));
  std::string noise;
  for (int i = 0; i < 1000; ++i)
    noise.push_back(char((i * 7919) % 251));
  EXPECT_TRUE(
      failsWith(open(test::gzipBytes(idxBytes(0x08, {100, 28, 28}, noise)),
                     "t.gz", DType::U8, {28, 28}),
                "t.gz",
                "truncated: header says 100 samples of 28x28 u8 "
                "(78400 bytes of data), file has 1000"));
}

TEST_F(IdxTest, EveryTruncationIsAnError) {
  std::string plain = images(3);
  for (size_t length = 0; length < plain.size(); ++length)
    EXPECT_TRUE(failsWith(open(plain.substr(0, length)), "images.idx", ""))
        << length;
  std::string compressed = test::gzipBytes(plain);
  for (size_t length = 0; length < compressed.size(); ++length)
    EXPECT_TRUE(failsWith(open(compressed.substr(0, length)), "images.idx", ""))
        << length;
}

TEST_F(IdxTest, TrailingBytesAreAnError) {
  EXPECT_TRUE(failsWith(open(images(2) + "zz"), "images.idx",
                        "unexpected bytes after the 12 bytes of data"));
  EXPECT_TRUE(failsWith(open(test::gzipBytes(images(2) + "zz")), "images.idx",
                        "unexpected bytes after the 12 bytes of data"));
  // Where they start: in the file, or in the decompressed stream.
  EXPECT_TRUE(
      failsWith(open(images(2) + "zz"), "images.idx", "(from byte 28)"));
  EXPECT_TRUE(failsWith(open(test::gzipBytes(images(2) + "zz")), "images.idx",
                        "(from byte 28 of the decompressed data)"));
}

TEST_F(IdxTest, CorruptGzip) {
  std::string compressed = test::gzipBytes(images(50));
  compressed[compressed.size() - 8] ^= 0x01; // the CRC-32
  EXPECT_TRUE(failsWith(open(compressed), "images.idx", "corrupt gzip data"));
}

TEST_F(IdxTest, AbsurdHeaderIsRefusedWithoutAllocating) {
  std::string bytes = idxBytes(0x08, {0xffffffff, 0xffffffff, 0xffff}, "");
  EXPECT_TRUE(failsWith(open(bytes), "images.idx", "too large"));
  std::string claim = idxBytes(0x08, {0x7fffffff, 28, 28}, "");
  EXPECT_TRUE(
      failsWith(open(test::gzipBytes(claim), "images.idx", DType::U8, {28, 28}),
                "images.idx", "more than the"));
}

TEST_F(IdxTest, MissingFile) {
  EXPECT_TRUE(failsWith(openFieldSource({"image",
                                         DType::U8,
                                         {},
                                         FieldSpec::Kind::Idx,
                                         FieldSpec::Kind::File,
                                         dir_.path("none.gz"),
                                         ""}),
                        "none.gz", "cannot open"));
}

} // namespace
} // namespace modelc::rt
