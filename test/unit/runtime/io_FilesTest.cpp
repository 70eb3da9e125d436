// Tests of whole-file reads, mapping, atomic writes, and the bounded gzip
// and raw deflate decoders.
#include "runtime/io/Files.h"
#include "runtime/io/Gzip.h"

#include "io_TestSupport.h"

#include <filesystem>

namespace modelc::rt {
namespace {

using test::failsWith;
using test::ScratchDir;

TEST(FilesTest, AtomicWriteThenReadBack) {
  ScratchDir dir;
  std::string path = dir.path("state.json");
  ASSERT_TRUE(writeFileAtomically(path, "{\"step\": 3}").ok());
  Result<std::string> text = readWholeFile(path, 1024);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "{\"step\": 3}");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(FilesTest, AtomicWriteReplacesAnExistingFile) {
  ScratchDir dir;
  std::string path = dir.path("a.txt");
  test::writeBytes(path, "old contents, longer than the new ones");
  ASSERT_TRUE(writeFileAtomically(path, "new").ok());
  EXPECT_EQ(test::readBytes(path), "new");
}

TEST(FilesTest, UncommittedFileLeavesNothingBehind) {
  ScratchDir dir;
  std::string path = dir.path("partial.bin");
  {
    Result<AtomicFile> file = AtomicFile::create(path);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(file->write("abc", 3).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(FilesTest, WriteIntoAMissingDirectoryFails) {
  ScratchDir dir;
  std::string path = dir.path("no/such/dir/x.bin");
  EXPECT_TRUE(
      failsWith(writeFileAtomically(path, "x"), "x.bin.tmp", "cannot create"));
}

TEST(FilesTest, ReadWholeFileEnforcesItsLimit) {
  ScratchDir dir;
  std::string path = dir.path("big.txt");
  test::writeBytes(path, std::string(100, 'x'));
  EXPECT_TRUE(readWholeFile(path, 100).ok());
  EXPECT_TRUE(failsWith(readWholeFile(path, 99), path, "larger than"));
}

TEST(FilesTest, MissingFilesAndDirectoriesAreErrors) {
  ScratchDir dir;
  std::string missing = dir.path("missing.bin");
  EXPECT_TRUE(failsWith(readWholeFile(missing, 10), missing, "cannot open"));
  EXPECT_TRUE(failsWith(mapFile(missing), missing, "No such file"));
  EXPECT_TRUE(
      failsWith(mapFile(dir.path("")), dir.path(""), "not a regular file"));
}

TEST(FilesTest, MapFileSeesTheBytes) {
  ScratchDir dir;
  std::string path = dir.path("m.bin");
  test::writeBytes(path, std::string("\x01\x02\x03", 3));
  Result<std::shared_ptr<const Blob>> blob = mapFile(path);
  ASSERT_TRUE(blob.ok());
  ASSERT_EQ((*blob)->size(), 3u);
  EXPECT_EQ((*blob)->data()[2], 3);
  test::writeBytes(path, "");
  blob = mapFile(path);
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ((*blob)->size(), 0u);
}

std::string readAllGzip(const std::string &compressed, Status &status) {
  GzipReader reader(reinterpret_cast<const uint8_t *>(compressed.data()),
                    compressed.size(), "t.gz");
  std::string out;
  uint8_t chunk[7];
  while (true) {
    Result<size_t> got = reader.read(chunk, sizeof(chunk));
    if (!got) {
      status = got.status();
      return out;
    }
    out.append(reinterpret_cast<char *>(chunk), *got);
    if (*got < sizeof(chunk))
      return out;
  }
}

TEST(GzipTest, DecompressesInPieces) {
  std::string text;
  for (int i = 0; i < 1000; ++i)
    text += std::to_string(i * i) + ",";
  Status status;
  EXPECT_EQ(readAllGzip(test::gzipBytes(text), status), text);
  EXPECT_TRUE(status.ok());
}

TEST(GzipTest, ConcatenatedMembersAreOneStream) {
  Status status;
  EXPECT_EQ(readAllGzip(test::gzipBytes("hello, ") + test::gzipBytes("world"),
                        status),
            "hello, world");
  EXPECT_TRUE(status.ok());
}

TEST(GzipTest, EveryTruncationIsAnError) {
  std::string compressed = test::gzipBytes(std::string(300, 'a') + "xyz");
  for (size_t length = 0; length < compressed.size(); ++length) {
    Status status;
    readAllGzip(compressed.substr(0, length), status);
    EXPECT_TRUE(failsWith(status, "t.gz", "gzip")) << "length " << length;
  }
}

TEST(GzipTest, CorruptDataIsAnError) {
  std::string compressed = test::gzipBytes(std::string(1000, 'q') + "tail");
  compressed[compressed.size() - 6] ^= 0x55; // inside the CRC-32
  Status status;
  readAllGzip(compressed, status);
  EXPECT_TRUE(failsWith(status, "t.gz", "corrupt gzip data"));
  compressed = test::gzipBytes("some text");
  compressed[12] ^= 0xff; // inside the deflate data
  status = Status();
  readAllGzip(compressed, status);
  EXPECT_FALSE(status.ok());
}

TEST(GzipTest, TrailingGarbageIsAnError) {
  Status status;
  readAllGzip(test::gzipBytes("abc") + "junk", status);
  EXPECT_TRUE(failsWith(status, "t.gz", "unexpected bytes after"));
}

TEST(GzipTest, MagicDetection) {
  std::string compressed = test::gzipBytes("x");
  EXPECT_TRUE(
      hasGzipMagic(reinterpret_cast<const uint8_t *>(compressed.data()), 2));
  EXPECT_FALSE(
      hasGzipMagic(reinterpret_cast<const uint8_t *>(compressed.data()), 1));
  const uint8_t idx[] = {0, 0, 8, 1};
  EXPECT_FALSE(hasGzipMagic(idx, 4));
}

Result<std::vector<uint8_t>> inflate(const std::string &data, size_t size) {
  return inflateRaw(reinterpret_cast<const uint8_t *>(data.data()), data.size(),
                    size, "a.npz[x.npy]");
}

TEST(InflateRawTest, ExactSizeRoundTrip) {
  std::string text(5000, 'z');
  text += "end";
  Result<std::vector<uint8_t>> out = inflate(test::rawDeflate(text), 5003);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(std::string(out->begin(), out->end()), text);
}

TEST(InflateRawTest, SizeDisagreementsAreErrors) {
  std::string deflated = test::rawDeflate(std::string(100, 'k'));
  EXPECT_TRUE(failsWith(inflate(deflated, 99), "a.npz[x.npy]", "longer than"));
  EXPECT_TRUE(failsWith(inflate(deflated, 101), "a.npz[x.npy]", "has 100"));
  EXPECT_TRUE(failsWith(inflate(deflated.substr(0, deflated.size() - 2), 100),
                        "a.npz[x.npy]", "truncated deflate data"));
  EXPECT_TRUE(failsWith(inflate(std::string("\xff\xff\xff\xff", 4), 100),
                        "a.npz[x.npy]", "corrupt deflate data"));
}

} // namespace
} // namespace modelc::rt
