// Tests of windows(src, stride): overlapping windows of L tokens stepping by
// L - 1 (llm.c's loader) or by a given stride over a 1-D token stream (raw
// file, llm.c shard, npy).
#include "runtime/data/Source.h"
#include "runtime/io/Npy.h"

#include "io_TestSupport.h"

namespace modelc::rt {
namespace {

using test::failsWith;
using test::ScratchDir;

using Kind = FieldSpec::Kind;

class WindowsTest : public testing::Test {
protected:
  /// Writes tokens 0, 1, ..., n - 1 as a raw u16 file.
  std::string writeStream(int n, const std::string &name = "tokens.bin") {
    std::string bytes;
    for (int i = 0; i < n; ++i)
      test::putLE(bytes, uint16_t(i), 2);
    test::writeBytes(dir_.path(name), bytes);
    return dir_.path(name);
  }
  Result<std::unique_ptr<FieldSource>>
  open(std::vector<int64_t> shape, Kind inner = Kind::File,
       const std::string &name = "tokens.bin", DType dtype = DType::U16,
       int64_t stride = 0) {
    FieldSpec spec{"tokens", dtype, std::move(shape), Kind::Windows,
                   inner,    dir_.path(name), ""};
    spec.windowStride = stride;
    return openFieldSource(spec);
  }
  std::vector<uint16_t> sample(const FieldSource &source, int64_t index) {
    std::vector<uint16_t> tokens(source.sampleBytes() / 2);
    source.readSample(index, reinterpret_cast<uint8_t *>(tokens.data()));
    return tokens;
  }
  ScratchDir dir_;
};

TEST_F(WindowsTest, WindowsOverlapByOneToken) {
  writeStream(10);
  Result<std::unique_ptr<FieldSource>> source = open({4});
  ASSERT_TRUE(source.ok()) << source.status().message();
  // floor((10 - 1) / (4 - 1)) = 3 windows: [0..3], [3..6], [6..9].
  EXPECT_EQ((*source)->numSamples(), 3);
  EXPECT_EQ((*source)->sampleBytes(), 8u);
  EXPECT_EQ(sample(**source, 0), (std::vector<uint16_t>{0, 1, 2, 3}));
  EXPECT_EQ(sample(**source, 1), (std::vector<uint16_t>{3, 4, 5, 6}));
  EXPECT_EQ(sample(**source, 2), (std::vector<uint16_t>{6, 7, 8, 9}));
}

TEST_F(WindowsTest, CountIsFloorOfNMinusOneOverLMinusOne) {
  for (int n : {5, 6, 7, 8, 9, 100, 101}) {
    writeStream(n);
    for (int64_t length : {2, 3, 5}) {
      Result<std::unique_ptr<FieldSource>> source = open({length});
      ASSERT_TRUE(source.ok()) << source.status().message();
      int64_t count = (*source)->numSamples();
      EXPECT_EQ(count, (n - 1) / (length - 1)) << n << " " << length;
      // The last window ends inside the stream.
      std::vector<uint16_t> last = sample(**source, count - 1);
      EXPECT_LT(last.back(), n);
      EXPECT_EQ(last.front(), (count - 1) * (length - 1));
    }
  }
}

TEST_F(WindowsTest, StrideOneGivesEveryOffset) {
  // nanoGPT's get_batch draws offsets from [0, n - L]: n - L + 1 windows.
  writeStream(10);
  Result<std::unique_ptr<FieldSource>> source =
      open({4}, Kind::File, "tokens.bin", DType::U16, 1);
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->numSamples(), 7);
  for (int64_t i = 0; i < 7; ++i)
    EXPECT_EQ(sample(**source, i),
              (std::vector<uint16_t>{uint16_t(i), uint16_t(i + 1),
                                     uint16_t(i + 2), uint16_t(i + 3)}));
}

TEST_F(WindowsTest, CountIsFloorOfNMinusLOverStridePlusOne) {
  for (int n : {5, 6, 7, 8, 9, 100, 101}) {
    writeStream(n);
    for (int64_t length : {2, 3, 5})
      for (int64_t stride : {1, 2, 3, 7}) {
        Result<std::unique_ptr<FieldSource>> source =
            open({length}, Kind::File, "tokens.bin", DType::U16, stride);
        ASSERT_TRUE(source.ok()) << source.status().message();
        int64_t count = (*source)->numSamples();
        EXPECT_EQ(count, (n - length) / stride + 1) << n << " " << length;
        std::vector<uint16_t> last = sample(**source, count - 1);
        EXPECT_EQ(last.front(), (count - 1) * stride);
        EXPECT_LT(last.back(), n);
        // One more window would not fit.
        EXPECT_GE((count * stride) + length, n + 1);
      }
  }
}

TEST_F(WindowsTest, OverAnLlmcShard) {
  std::string bytes;
  test::putLE(bytes, 20240520, 4);
  test::putLE(bytes, 1, 4);
  test::putLE(bytes, 7, 4);
  bytes.append(253 * 4, '\0');
  for (uint16_t token : {50256, 1, 2, 3, 4, 5, 6})
    test::putLE(bytes, token, 2);
  test::writeBytes(dir_.path("shard.bin"), bytes);
  Result<std::unique_ptr<FieldSource>> source =
      open({3}, Kind::File, "shard.bin");
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->numSamples(), 3);
  EXPECT_EQ(sample(**source, 0), (std::vector<uint16_t>{50256, 1, 2}));
  EXPECT_EQ(sample(**source, 2), (std::vector<uint16_t>{4, 5, 6}));
}

TEST_F(WindowsTest, OverANpyStream) {
  std::vector<int32_t> tokens = {9, 8, 7, 6, 5};
  ASSERT_TRUE(
      writeNpy(dir_.path("t.npy"), DType::I32, {5}, tokens.data()).ok());
  Result<std::unique_ptr<FieldSource>> source =
      open({3}, Kind::Npy, "t.npy", DType::I32);
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->numSamples(), 2);
  int32_t window[3];
  (*source)->readSample(1, reinterpret_cast<uint8_t *>(window));
  EXPECT_EQ(window[0], 7);
  EXPECT_EQ(window[2], 5);
}

TEST_F(WindowsTest, StreamShorterThanTheWindow) {
  std::string path = writeStream(3);
  EXPECT_TRUE(failsWith(open({4}), path,
                        "the token stream has 3 tokens, shorter than the "
                        "window length 4 of field 'tokens'"));
}

TEST_F(WindowsTest, FieldMustBeOneDimensionalWithLAtLeastTwo) {
  std::string path = writeStream(10);
  EXPECT_TRUE(failsWith(open({1}), path, "L >= 2"));
  EXPECT_TRUE(failsWith(open({2, 2}), path, "L >= 2"));
}

TEST_F(WindowsTest, StreamMustBeOneDimensional) {
  std::vector<int32_t> tokens(6);
  std::string path = dir_.path("t.npy");
  ASSERT_TRUE(writeNpy(path, DType::I32, {2, 3}, tokens.data()).ok());
  EXPECT_TRUE(failsWith(open({2}, Kind::Npy, "t.npy", DType::I32), path,
                        "windows() needs a 1-D token stream"));
}

TEST_F(WindowsTest, StreamDTypeMustEqualTheFields) {
  std::vector<int32_t> tokens(6);
  std::string path = dir_.path("t.npy");
  ASSERT_TRUE(writeNpy(path, DType::I32, {6}, tokens.data()).ok());
  EXPECT_TRUE(failsWith(open({2}, Kind::Npy, "t.npy", DType::U16), path,
                        "expected dtype u16 for field 'tokens', found <i4"));
}

TEST_F(WindowsTest, WindowsOfWindowsAreRefused) {
  std::string path = writeStream(10);
  EXPECT_TRUE(failsWith(open({2}, Kind::Windows), path, "token stream source"));
}

} // namespace
} // namespace modelc::rt
