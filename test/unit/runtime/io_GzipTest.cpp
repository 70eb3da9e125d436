// Tests of RawInflater, the piecewise raw-deflate reader behind npz members:
// exact sizes, data past the recorded size caught before it is written, and
// truncation. (GzipReader and inflateRaw are tested in io_FilesTest.cpp.)
#include "runtime/io/Gzip.h"

#include "io_TestSupport.h"

namespace modelc::rt {
namespace {

using test::failsWith;

class RawInflaterTest : public testing::Test {
protected:
  void SetUp() override {
    for (int i = 0; i < 10000; ++i)
      text_.push_back(char('a' + i % 7));
    deflated_ = test::rawDeflate(text_);
  }
  RawInflater make(size_t expected, size_t cut = 0) {
    return RawInflater(reinterpret_cast<const uint8_t *>(deflated_.data()),
                       deflated_.size() - cut, expected, "a.npz[x.npy]");
  }
  std::string text_, deflated_;
};

TEST_F(RawInflaterTest, ReadsInPiecesOfAnySize) {
  RawInflater inflater = make(text_.size());
  std::string out(text_.size(), '\0');
  size_t done = 0;
  for (size_t piece : {size_t(1), size_t(12), size_t(4000), size_t(5987)}) {
    ASSERT_TRUE(
        inflater.read(reinterpret_cast<uint8_t *>(out.data()) + done, piece)
            .ok());
    done += piece;
  }
  EXPECT_TRUE(inflater.finish().ok());
  EXPECT_EQ(out, text_);
  EXPECT_EQ(inflater.produced(), text_.size());
}

TEST_F(RawInflaterTest, MoreDataThanRecordedIsAnErrorAtTheEnd) {
  RawInflater inflater = make(text_.size() - 1);
  std::vector<uint8_t> out(text_.size() - 1);
  ASSERT_TRUE(inflater.read(out.data(), out.size()).ok());
  EXPECT_TRUE(failsWith(inflater.finish(), "a.npz[x.npy]",
                        "longer than the 9999 bytes the archive records"));
}

TEST_F(RawInflaterTest, LessDataThanRecordedOrTruncatedData) {
  std::vector<uint8_t> out(text_.size() + 1);
  EXPECT_TRUE(failsWith(make(text_.size() + 1).read(out.data(), out.size()),
                        "a.npz[x.npy]", "deflate data has 10000 bytes"));
  EXPECT_TRUE(failsWith(make(text_.size(), 3).read(out.data(), text_.size()),
                        "a.npz[x.npy]", "truncated deflate data"));
}

TEST_F(RawInflaterTest, ReadingPastTheRecordedSizeIsTheCallersBug) {
  RawInflater inflater = make(10);
  std::vector<uint8_t> out(11);
  Status status = inflater.read(out.data(), 11);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.exitCode(), kExitInternal);
}

} // namespace
} // namespace modelc::rt
