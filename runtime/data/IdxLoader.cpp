// MNIST idx files (http://yann.lecun.com/exdb/mnist/): a magic number
// 00 00 TT NN (TT the element type, NN the number of dimensions), NN
// big-endian 32-bit dimensions, then the big-endian data. Gzip-compressed
// files are recognised by their magic number, not by their name.
#include "runtime/data/Loaders.h"

#include "runtime/io/Gzip.h"
#include "runtime/io/Shape.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace modelc::rt {

namespace {

/// More dimensions than this is a corrupt header, not a real data set.
constexpr size_t kMaxIdxDims = 16;
/// Decompressed data is read, and memory allocated, this much at a time.
constexpr size_t kReadChunk = size_t(64) << 20;

struct IdxType {
  uint8_t code;
  const char *name;
  size_t size;
  std::optional<DType> dtype;
};

constexpr IdxType kIdxTypes[] = {
    {0x08, "u8", 1, DType::U8},     {0x09, "i8", 1, std::nullopt},
    {0x0B, "i16", 2, std::nullopt}, {0x0C, "i32", 4, DType::I32},
    {0x0D, "f32", 4, DType::F32},   {0x0E, "f64", 8, DType::F64}};

uint32_t loadBigEndian32(const uint8_t *bytes) {
  return uint32_t(bytes[0]) << 24 | uint32_t(bytes[1]) << 16 |
         uint32_t(bytes[2]) << 8 | uint32_t(bytes[3]);
}

/// Converts big-endian elements of `size` bytes to little-endian in place.
void swapBytes(uint8_t *data, size_t bytes, size_t size) {
  for (size_t i = 0; i + size <= bytes; i += size)
    std::reverse(data + i, data + i + size);
}

} // namespace

Result<LoadedArray> loadIdx(const FieldSpec &spec,
                            std::shared_ptr<const Blob> file) {
  const std::string &path = spec.path;
  bool compressed = hasGzipMagic(file->data(), file->size());
  GzipReader gzip(file->data(), file->size(), path);
  size_t position = 0; // in the uncompressed bytes
  // Reads from the decompressed stream or straight from the mapped file.
  auto read = [&](uint8_t *dst, size_t size) -> Result<size_t> {
    if (compressed) {
      Result<size_t> got = gzip.read(dst, size);
      if (got)
        position += *got;
      return got;
    }
    size_t got = std::min(size, file->size() - position);
    if (got > 0)
      std::memcpy(dst, file->data() + position, got);
    position += got;
    return got;
  };
  auto fail = [&](const std::string &problem) {
    return Status::error(fmt::format("{}: {}", path, problem));
  };
  // Offsets in a compressed file count decompressed bytes.
  auto where = [&] {
    return compressed ? std::string(" of the decompressed data")
                      : std::string();
  };

  uint8_t magic[4];
  Result<size_t> got = read(magic, 4);
  if (!got)
    return got.status();
  if (*got > 0 && (magic[0] != 0 || (*got > 1 && magic[1] != 0)))
    return fail(
        fmt::format("not an idx file (wrong magic number {:02x} {:02x}: "
                    "an idx file starts 00 00 TYPE DIMS)",
                    magic[0], *got > 1 ? magic[1] : 0));
  if (*got < 4)
    return fail(fmt::format("truncated: the idx header is incomplete ({} of "
                            "its first 4 bytes{})",
                            *got, where()));
  const IdxType *type = nullptr;
  for (const IdxType &candidate : kIdxTypes)
    if (candidate.code == magic[2])
      type = &candidate;
  if (!type)
    return fail(fmt::format(
        "not an idx file (unknown data type 0x{:02x} at byte 2{}; idx types "
        "are 08 09 0b 0c 0d 0e)",
        magic[2], where()));
  size_t numDims = magic[3];
  if (numDims == 0 || numDims > kMaxIdxDims)
    return fail(fmt::format("idx header has {} dimensions (byte 3{}; at "
                            "most {})",
                            numDims, where(), kMaxIdxDims));
  uint8_t dimBytes[4 * kMaxIdxDims];
  got = read(dimBytes, 4 * numDims);
  if (!got)
    return got.status();
  if (*got < 4 * numDims)
    return fail(fmt::format("truncated: the idx header of {} dimensions "
                            "needs {} bytes, the file has {}{}",
                            numDims, 4 + 4 * numDims, 4 + *got, where()));
  std::vector<int64_t> shape;
  for (size_t i = 0; i < numDims; ++i)
    shape.push_back(loadBigEndian32(dimBytes + 4 * i));
  MODELC_RETURN_IF_ERROR(checkFieldDType(spec, type->dtype, type->name));

  // Checked before anything is allocated: the header's size must be what
  // the file can hold.
  std::optional<uint64_t> count = checkedElementCount(shape);
  if (!count || *count > (uint64_t(1) << 48))
    return fail("idx header dimensions are too large");
  uint64_t dataBytes = *count * type->size;
  std::vector<int64_t> sampleDims(shape.begin() + 1, shape.end());
  std::string sample =
      sampleDims.empty()
          ? std::string(type->name)
          : fmt::format("{} {}", fmt::join(sampleDims, "x"), type->name);
  auto truncated = [&](uint64_t have) {
    return fail(fmt::format("truncated: header says {} samples of {} ({} "
                            "bytes of data), file has {}",
                            shape[0], sample, dataBytes, have));
  };
  size_t headerBytes = position;
  if (!compressed && dataBytes > file->size() - headerBytes)
    return truncated(file->size() - headerBytes);
  if (compressed && dataBytes > kMaxDeflateRatio * file->size() + 1024)
    return fail(fmt::format("truncated: header says {} samples of {} ({} "
                            "bytes of data), more than the {}-byte "
                            "compressed file can hold",
                            shape[0], sample, dataBytes, file->size()));

  LoadedArray array{file, headerBytes, shape};
  if (compressed || type->size > 1) {
    // Grown as the data arrives, so that memory follows what the file
    // really holds rather than what its header claims.
    std::vector<uint8_t> data;
    while (data.size() < dataBytes) {
      size_t done = data.size();
      size_t chunk = std::min<uint64_t>(dataBytes - done, kReadChunk);
      data.resize(done + chunk);
      got = read(data.data() + done, chunk);
      if (!got)
        return got.status();
      if (*got < chunk)
        return truncated(done + *got);
    }
    swapBytes(data.data(), data.size(), type->size);
    array.blob = makeBlob(std::move(data));
    array.offset = 0;
  } else {
    position += dataBytes;
  }
  uint8_t extra;
  got = read(&extra, 1);
  if (!got)
    return got.status();
  if (*got > 0)
    return fail(fmt::format("unexpected bytes after the {} bytes of data "
                            "the header describes (from byte {}{})",
                            dataBytes, headerBytes + dataBytes, where()));
  return array;
}

} // namespace modelc::rt
