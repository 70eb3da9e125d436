// Tests of .npz archives: round trips through writeNpz, archives laid out
// as numpy writes them (deflated members, zip64 local extras), and one test
// per way an archive can be malformed.
#include "runtime/data/Loaders.h"
#include "runtime/io/Npy.h"

#include "io_TestSupport.h"

#include <cstring>
#include <zlib.h>

namespace modelc::rt {
namespace {

using test::buildZip;
using test::failsWith;
using test::putLE;
using test::ScratchDir;
using test::ZipEntry;

std::string npyBytes(DType dtype, const std::vector<int64_t> &shape,
                     const std::string &data) {
  return *encodeNpyHeader(dtype, shape) + data;
}

class NpzTest : public testing::Test {
protected:
  Result<NpyArray> readMember(const std::string &bytes,
                              const std::string &key) {
    test::writeBytes(path_, bytes);
    return readNpzMember(path_, key);
  }
  ScratchDir dir_;
  std::string path_ = dir_.path("a.npz");
};

TEST_F(NpzTest, RoundTripThroughWriteNpz) {
  std::vector<float> logits = {0.5f, 1.5f, -2.5f, 3.5f};
  std::vector<int64_t> labels = {7, 3};
  ASSERT_TRUE(writeNpz(path_, {{"logits", {DType::F32, {2, 2}, logits.data()}},
                               {"label", {DType::I64, {2}, labels.data()}}})
                  .ok());
  Result<NpyArray> a = readNpzMember(path_, "logits");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(std::memcmp(a->bytes.data(), logits.data(), 16), 0);
  Result<NpyArray> b = readNpzMember(path_, "label.npy");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(std::memcmp(b->bytes.data(), labels.data(), 16), 0);
}

TEST_F(NpzTest, DeflatedMembersWithNumpysZip64LocalHeaders) {
  std::string data(4000, '\x02');
  ZipEntry entry{"x.npy", npyBytes(DType::U8, {40, 100}, data), 8, true};
  Result<NpyArray> array = readMember(buildZip({entry}), "x");
  ASSERT_TRUE(array.ok()) << array.status().message();
  EXPECT_EQ(array->shape, (std::vector<int64_t>{40, 100}));
  EXPECT_EQ(std::string(array->bytes.begin(), array->bytes.end()), data);
}

TEST_F(NpzTest, MemberWithoutTheNpySuffix) {
  ZipEntry entry{"raw", npyBytes(DType::U8, {1}, "q")};
  EXPECT_TRUE(readMember(buildZip({entry}), "raw").ok());
}

TEST_F(NpzTest, MissingKeyListsTheMembers) {
  ZipEntry x{"x.npy", npyBytes(DType::U8, {1}, "a")};
  ZipEntry z{"z.npy", npyBytes(DType::U8, {1}, "b")};
  EXPECT_TRUE(failsWith(readMember(buildZip({x, z}), "y"), path_,
                        "no array named 'y' (the archive has: x, z)"));
}

TEST_F(NpzTest, EveryTruncationIsAnError) {
  uint16_t values[3] = {1, 2, 3};
  ASSERT_TRUE(writeNpz(path_, {{"v", {DType::U16, {3}, values}}}).ok());
  std::string bytes = test::readBytes(path_);
  for (size_t length = 0; length < bytes.size(); ++length)
    EXPECT_TRUE(
        failsWith(readMember(bytes.substr(0, length), "v"), path_, "a.npz"))
        << length;
  EXPECT_TRUE(failsWith(readMember(bytes.substr(0, 40), "v"), path_,
                        "no end of central directory"));
}

TEST_F(NpzTest, Zip64IsRefusedClearly) {
  ZipEntry x{"x.npy", npyBytes(DType::U8, {1}, "a")};
  EXPECT_TRUE(failsWith(readMember(buildZip({x}, true), "x"), path_,
                        "zip64 archives are not supported"));
  std::string bytes = buildZip({x});
  // The central directory's compressed size, 20 bytes into its entry.
  size_t entry = bytes.find(std::string("PK\x01\x02", 4));
  bytes.replace(entry + 20, 4, std::string(4, '\xff'));
  EXPECT_TRUE(failsWith(readMember(bytes, "x"), path_,
                        "zip64 archives are not supported"));
}

TEST_F(NpzTest, CrcMismatch) {
  std::string bytes = buildZip({{"x.npy", npyBytes(DType::U8, {4}, "abcd")}});
  bytes[bytes.find("abcd")] = 'z';
  EXPECT_TRUE(
      failsWith(readMember(bytes, "x"), "a.npz[x.npy]", "CRC-32 mismatch"));
}

TEST_F(NpzTest, CorruptDeflateData) {
  std::string bytes =
      buildZip({{"x.npy", npyBytes(DType::U8, {64}, std::string(64, 'k')), 8}});
  size_t data = bytes.find("x.npy") + 5;
  bytes[data] = '\xff';
  bytes[data + 1] = '\xff';
  EXPECT_TRUE(failsWith(readMember(bytes, "x"), "a.npz[x.npy]", "deflate"));
}

TEST_F(NpzTest, EncryptionAndUnknownMethodsAreRefused) {
  std::string npy = npyBytes(DType::U8, {1}, "a");
  EXPECT_TRUE(
      failsWith(readMember(buildZip({{"x.npy", npy, 0, false, 1}}), "x"),
                "a.npz[x.npy]", "encrypted"));
  std::string bytes = buildZip({{"x.npy", npy}});
  for (size_t at : {size_t(8), bytes.find(std::string("PK\x01\x02", 4)) + 10})
    bytes[at] = 12; // bzip2, in the local and central headers
  EXPECT_TRUE(failsWith(readMember(bytes, "x"), "a.npz[x.npy]",
                        "unsupported zip compression method 12"));
}

TEST_F(NpzTest, MemberThatIsNotAnNpy) {
  EXPECT_TRUE(failsWith(readMember(buildZip({{"x.npy", "hello"}}), "x"),
                        "a.npz[x.npy]", "not a .npy file"));
}

TEST_F(NpzTest, AbsurdSizesAndOffsetsAreRefused) {
  std::string bytes =
      buildZip({{"x.npy", npyBytes(DType::U8, {64}, std::string(64, 'k')), 8}});
  size_t entry = bytes.find(std::string("PK\x01\x02", 4));
  std::string big;
  putLE(big, 0xfff00000u, 4);
  std::string withHugeSize = bytes;
  withHugeSize.replace(entry + 24, 4, big);
  EXPECT_TRUE(
      failsWith(readMember(withHugeSize, "x"), "a.npz[x.npy]", "cannot hold"));
  std::string withBadOffset = bytes;
  withBadOffset.replace(entry + 42, 4, big);
  EXPECT_TRUE(failsWith(readMember(withBadOffset, "x"), "a.npz[x.npy]",
                        "bad local header"));
}

/// Field `x` of u8[3] read from member "x.npy" of the archive at `path`.
Result<LoadedArray> loadField(const std::string &path,
                              std::vector<int64_t> shape = {3}) {
  return loadNpz({"x", DType::U8, std::move(shape), FieldSpec::Kind::Npz,
                  FieldSpec::Kind::File, path, "x"});
}

// Regression (issue 13): a deflated member was inflated into one buffer and
// copied into another, two copies of all its data at once.
TEST_F(NpzTest, MembersAreReadOnceIntoExactlyTheirData) {
  std::string data(3000, '\7');
  std::string npy = npyBytes(DType::U8, {1000, 3}, data);
  test::writeBytes(path_, buildZip({{"x.npy", npy, 8}}));
  Result<LoadedArray> deflated = loadField(path_);
  ASSERT_TRUE(deflated.ok()) << deflated.status().message();
  // Its own memory, holding the data and nothing else.
  EXPECT_EQ(deflated->offset, 0u);
  EXPECT_EQ(deflated->blob->size(), data.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(deflated->blob->data()),
                        data.size()),
            data);
  Result<NpyArray> member = readNpzMember(path_, "x");
  ASSERT_TRUE(member.ok()) << member.status().message();
  EXPECT_EQ(member->bytes.size(), data.size());
  EXPECT_EQ(member->bytes.capacity(), data.size());

  // A stored member is read in place, in the mapped archive.
  std::string archive = buildZip({{"x.npy", npy}});
  test::writeBytes(path_, archive);
  Result<LoadedArray> stored = loadField(path_);
  ASSERT_TRUE(stored.ok()) << stored.status().message();
  EXPECT_EQ(stored->blob->size(), archive.size());
  EXPECT_EQ(stored->offset, archive.find(data));
}

// A zip bomb: a member whose data would inflate to far more than any field
// could want. Its header is checked against the field first, so nothing is
// inflated: the deflate data after the header is corrupt here, and the
// error is still the field's.
TEST_F(NpzTest, AMemberThatCannotBeTheFieldsIsNeverInflated) {
  std::string npy = npyBytes(DType::U8, {1 << 22, 4}, std::string(1 << 24, 0));
  std::string archive = buildZip({{"x.npy", npy, 8}});
  size_t end = archive.find(std::string("PK\x01\x02", 4));
  for (size_t at = end - 16; at < end; ++at)
    archive[at] = char(0x5a);
  test::writeBytes(path_, archive);
  EXPECT_TRUE(failsWith(loadField(path_), "a.npz[x.npy]",
                        "expected per-sample shape [3] for field 'x', found "
                        "[4] (the array's shape is [4194304, 4]; nothing was "
                        "inflated)"));
  EXPECT_TRUE(failsWith(loadNpz({"x",
                                 DType::F32,
                                 {4},
                                 FieldSpec::Kind::Npz,
                                 FieldSpec::Kind::File,
                                 path_,
                                 "x"}),
                        "a.npz[x.npy]",
                        "expected dtype f32 for field 'x', found |u1"));
  // The field it fits inflates it, and finds the damage.
  EXPECT_TRUE(failsWith(loadField(path_, {4}), "a.npz[x.npy]", "deflate"));
}

TEST_F(NpzTest, AHeaderClaimingMoreThanTheArchiveRecordsIsRefusedFirst) {
  std::string npy = npyBytes(DType::U8, {4, 3}, std::string(12, 'k'));
  npy.replace(npy.find("(4, 3)"), 6, "(4000000, 3)");
  EXPECT_TRUE(failsWith(readMember(buildZip({{"x.npy", npy, 8}}), "x"),
                        "a.npz[x.npy]",
                        "truncated: shape [4000000, 3] of |u1 needs 12000000 "
                        "bytes of data"));
}

TEST_F(NpzTest, AmbiguousArchivesAreRefused) {
  std::string npy = npyBytes(DType::U8, {1}, "a");
  EXPECT_TRUE(
      failsWith(readMember(buildZip({{"x.npy", npy}, {"x.npy", npy}}), "x"),
                path_, "two members are named 'x.npy'"));
  // A local header that names another member than the directory.
  std::string bytes = buildZip({{"x.npy", npy}});
  bytes[bytes.find("x.npy")] = 'y';
  EXPECT_TRUE(failsWith(readMember(bytes, "x"), "a.npz[x.npy]",
                        "the local header at byte 0 names another member"));
}

TEST_F(NpzTest, KeysAndMembersFromMemory) {
  std::string bytes = buildZip({{"x.npy", npyBytes(DType::U8, {2}, "ab")},
                                {"y", npyBytes(DType::U8, {1}, "c"), 8}});
  Result<std::vector<std::string>> keys = listNpzKeys(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), "m.npz");
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_EQ(*keys, (std::vector<std::string>{"x", "y"}));
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  Result<NpzArray> y = readNpzArray(makeBlob(copy), "m.npz", "y");
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(y->header.shape, std::vector<int64_t>{1});
  EXPECT_EQ(y->blob->data()[y->offset], 'c');
}

// Found by fuzz-npz: an empty array's data was copied from a null pointer.
TEST_F(NpzTest, EmptyArraysInStoredAndDeflatedMembers) {
  for (uint16_t method : {uint16_t(0), uint16_t(8)}) {
    Result<NpyArray> empty = readMember(
        buildZip({{"x.npy", npyBytes(DType::F32, {0, 3}, ""), method}}), "x");
    ASSERT_TRUE(empty.ok()) << empty.status().message();
    EXPECT_EQ(empty->shape, (std::vector<int64_t>{0, 3}));
    EXPECT_TRUE(empty->bytes.empty());
  }
}

TEST_F(NpzTest, WriterRejectsDuplicateNamesAndBf16) {
  uint16_t value = 0;
  EXPECT_FALSE(writeNpz(path_, {{"a", {DType::U16, {1}, &value}},
                                {"a", {DType::U16, {1}, &value}}})
                   .ok());
  EXPECT_TRUE(failsWith(writeNpz(path_, {{"b", {DType::BF16, {1}, &value}}}),
                        path_, "bf16"));
  EXPECT_FALSE(std::filesystem::exists(path_));
}

} // namespace
} // namespace modelc::rt
