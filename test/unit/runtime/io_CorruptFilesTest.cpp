// Every loader against systematically corrupted files: each byte of a small
// valid file set to 0x00, 0xff, or with its low or high bit flipped. Each
// variant must either load (and then read within bounds) or fail with a
// usage error naming the file; none may crash. Run under ASan/UBSan to
// prove the "never read out of bounds" rule.
#include "runtime/data/Source.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Safetensors.h"

#include "io_TestSupport.h"

#include <functional>

namespace modelc::rt {
namespace {

using test::ScratchDir;

using Kind = FieldSpec::Kind;

/// Loads the file at a path; returns its status.
using Loader = std::function<Status(const std::string &)>;

/// Opens a field source and, when it opens, reads every sample.
Loader fieldLoader(DType dtype, std::vector<int64_t> shape, Kind kind,
                   Kind inner = Kind::File, std::string key = "") {
  return [=](const std::string &path) {
    Result<std::unique_ptr<FieldSource>> source =
        openFieldSource({"f", dtype, shape, kind, inner, path, key});
    if (!source)
      return source.status();
    std::vector<uint8_t> sample((*source)->sampleBytes());
    for (int64_t i = 0; i < (*source)->numSamples(); ++i)
      (*source)->readSample(i, sample.data());
    return Status();
  };
}

template <typename T> Status statusOf(const Result<T> &result) {
  return result.ok() ? Status() : result.status();
}

class CorruptFilesTest : public testing::Test {
protected:
  /// Loads every corrupted variant of `good` whose byte position is in
  /// [first, last).
  void sweep(const std::string &good, const Loader &load, size_t first = 0,
             size_t last = SIZE_MAX) {
    std::string path = dir_.path("file");
    test::writeBytes(path, good);
    ASSERT_TRUE(load(path).ok()) << "the valid file must load";
    for (size_t at = first; at < std::min(last, good.size()); ++at) {
      uint8_t original = uint8_t(good[at]);
      for (uint8_t value :
           {uint8_t(0x00), uint8_t(0xff), uint8_t(original ^ 0x01),
            uint8_t(original ^ 0x80)}) {
        std::string bad = good;
        bad[at] = char(value);
        test::writeBytes(path, bad);
        Status status = load(path);
        if (!status.ok()) {
          EXPECT_EQ(status.exitCode(), kExitUsage) << status.message();
          EXPECT_NE(status.message().find(path), std::string::npos)
              << "byte " << at << ": " << status.message();
        }
      }
    }
  }
  ScratchDir dir_;
};

TEST_F(CorruptFilesTest, Safetensors) {
  std::string path = dir_.path("w.safetensors");
  float weight[3] = {1, 2, 3};
  uint8_t mask[2] = {1, 0};
  ASSERT_TRUE(writeSafetensors(path, {{"w", DType::F32, {3}, weight, 12},
                                      {"m", DType::Bool, {2}, mask, 2}})
                  .ok());
  sweep(test::readBytes(path), [](const std::string &file) {
    return statusOf(readSafetensors(file));
  });
}

TEST_F(CorruptFilesTest, Npy) {
  std::string path = dir_.path("a.npy");
  int64_t values[4] = {1, -2, 3, -4};
  ASSERT_TRUE(writeNpy(path, DType::I64, {2, 2}, values).ok());
  sweep(test::readBytes(path), fieldLoader(DType::I64, {2}, Kind::Npy));
}

TEST_F(CorruptFilesTest, NpzStoredAndDeflated) {
  std::string path = dir_.path("a.npz");
  uint16_t values[4] = {1, 2, 3, 4};
  ASSERT_TRUE(writeNpz(path, {{"x", {DType::U16, {4}, values}}}).ok());
  sweep(test::readBytes(path),
        fieldLoader(DType::U16, {}, Kind::Npz, Kind::File, "x"));
  std::string npy = *encodeNpyHeader(DType::U8, {16}) + std::string(16, 'a');
  std::string zip = test::buildZip({{"x.npy", npy, 8}});
  sweep(zip, fieldLoader(DType::U8, {}, Kind::Npz, Kind::File, "x"));
}

std::string idxImages() {
  std::string out{'\0', '\0', '\x08', '\x03'};
  for (uint32_t dim : {3u, 2u, 2u})
    test::putBE32(out, dim);
  return out + std::string("abcdefghijkl");
}

TEST_F(CorruptFilesTest, IdxPlainAndGzip) {
  sweep(idxImages(), fieldLoader(DType::U8, {2, 2}, Kind::Idx));
  sweep(test::gzipBytes(idxImages()),
        fieldLoader(DType::U8, {2, 2}, Kind::Idx));
}

TEST_F(CorruptFilesTest, TokenShardWindows) {
  std::string shard;
  test::putLE(shard, 20240520, 4);
  test::putLE(shard, 1, 4);
  test::putLE(shard, 6, 4);
  shard.append(253 * 4, '\0');
  for (uint16_t token : {1, 2, 3, 4, 5, 6})
    test::putLE(shard, token, 2);
  Loader windows = fieldLoader(DType::U16, {3}, Kind::Windows, Kind::File);
  // The header's meaningful words, and the tokens.
  sweep(shard, windows, 0, 16);
  sweep(shard, windows, 1024);
}

} // namespace
} // namespace modelc::rt
