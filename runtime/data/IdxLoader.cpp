// MNIST idx files (http://yann.lecun.com/exdb/mnist/): a magic number
// 00 00 TT NN (TT the element type, NN the number of dimensions), NN
// big-endian 32-bit dimensions, then the big-endian data. Gzip-compressed
// files are recognised by their magic number, not by their name.
#include "runtime/data/Loaders.h"

#include "runtime/io/Gzip.h"
#include "runtime/io/Shape.h"

#include <algorithm>
#include <cstring>
#include <functional>
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

/// The bytes of an idx file, decompressed when it is gzip (recognised by
/// its magic number) or straight from the mapped file; errors name the
/// file, and offsets in a compressed file count decompressed bytes.
class IdxStream {
public:
  IdxStream(std::shared_ptr<const Blob> file, const std::string &path)
      : file_(std::move(file)), path_(path),
        compressed_(hasGzipMagic(file_->data(), file_->size())),
        gzip_(file_->data(), file_->size(), path) {}

  Result<size_t> read(uint8_t *dst, size_t size) {
    if (compressed_) {
      Result<size_t> got = gzip_.read(dst, size);
      if (got)
        position_ += *got;
      return got;
    }
    size_t got = std::min(size, file_->size() - position_);
    if (got > 0)
      std::memcpy(dst, file_->data() + position_, got);
    position_ += got;
    return got;
  }
  /// Passes over `bytes` of an uncompressed file without copying them.
  void skip(size_t bytes) { position_ += bytes; }
  Status fail(const std::string &problem) const {
    return Status::error(fmt::format("{}: {}", path_, problem));
  }
  std::string where() const {
    return compressed_ ? " of the decompressed data" : "";
  }
  bool compressed() const { return compressed_; }
  size_t position() const { return position_; }
  const std::shared_ptr<const Blob> &file() const { return file_; }

private:
  std::shared_ptr<const Blob> file_;
  const std::string &path_;
  bool compressed_;
  GzipReader gzip_;
  size_t position_ = 0; // in the uncompressed bytes
};

struct IdxHeader {
  const IdxType *type;
  std::vector<int64_t> shape;
};

/// The magic number and the dimensions.
Result<IdxHeader> readIdxHeader(IdxStream &in) {
  uint8_t magic[4];
  Result<size_t> got = in.read(magic, 4);
  if (!got)
    return got.status();
  if (*got > 0 && (magic[0] != 0 || (*got > 1 && magic[1] != 0)))
    return in.fail(
        fmt::format("not an idx file (wrong magic number {:02x} {:02x}: "
                    "an idx file starts 00 00 TYPE DIMS)",
                    magic[0], *got > 1 ? magic[1] : 0));
  if (*got < 4)
    return in.fail(fmt::format("truncated: the idx header is incomplete ({} "
                               "of its first 4 bytes{})",
                               *got, in.where()));
  const IdxType *type = nullptr;
  for (const IdxType &candidate : kIdxTypes)
    if (candidate.code == magic[2])
      type = &candidate;
  if (!type)
    return in.fail(fmt::format(
        "not an idx file (unknown data type 0x{:02x} at byte 2{}; idx types "
        "are 08 09 0b 0c 0d 0e)",
        magic[2], in.where()));
  size_t numDims = magic[3];
  if (numDims == 0 || numDims > kMaxIdxDims)
    return in.fail(fmt::format("idx header has {} dimensions (byte 3{}; at "
                               "most {})",
                               numDims, in.where(), kMaxIdxDims));
  uint8_t dimBytes[4 * kMaxIdxDims];
  got = in.read(dimBytes, 4 * numDims);
  if (!got)
    return got.status();
  if (*got < 4 * numDims)
    return in.fail(fmt::format("truncated: the idx header of {} dimensions "
                               "needs {} bytes, the file has {}{}",
                               numDims, 4 + 4 * numDims, 4 + *got,
                               in.where()));
  IdxHeader header{type, {}};
  for (size_t i = 0; i < numDims; ++i)
    header.shape.push_back(loadBigEndian32(dimBytes + 4 * i));
  return header;
}

/// The data after the header, `dataBytes` of it and nothing more: mapped
/// in place when it is uncompressed bytes, else read (grown as it arrives,
/// so that memory follows what the file holds rather than what its header
/// claims) and turned little-endian.
Status readIdxData(IdxStream &in, const IdxHeader &header, uint64_t dataBytes,
                   LoadedArray &array,
                   const std::function<Status(uint64_t)> &truncated) {
  if (in.compressed() || header.type->size > 1) {
    std::vector<uint8_t> data;
    while (data.size() < dataBytes) {
      size_t done = data.size();
      size_t chunk = std::min<uint64_t>(dataBytes - done, kReadChunk);
      data.resize(done + chunk);
      Result<size_t> got = in.read(data.data() + done, chunk);
      if (!got)
        return got.status();
      if (*got < chunk)
        return truncated(done + *got);
    }
    swapBytes(data.data(), data.size(), header.type->size);
    array.blob = makeBlob(std::move(data));
    array.offset = 0;
  } else {
    in.skip(dataBytes);
  }
  uint8_t extra;
  Result<size_t> got = in.read(&extra, 1);
  if (!got)
    return got.status();
  if (*got > 0)
    return in.fail(fmt::format("unexpected bytes after the {} bytes of data "
                               "the header describes (from byte {}{})",
                               dataBytes, in.position() - 1, in.where()));
  return Status();
}

} // namespace

Result<LoadedArray> loadIdx(const FieldSpec &spec,
                            std::shared_ptr<const Blob> file) {
  IdxStream in(file, spec.path);
  Result<IdxHeader> header = readIdxHeader(in);
  if (!header)
    return header.status();
  const std::vector<int64_t> &shape = header->shape;
  const IdxType *type = header->type;
  MODELC_RETURN_IF_ERROR(checkFieldDType(spec, type->dtype, type->name));

  // Checked before anything is allocated: the header's size must be what
  // the file can hold.
  std::optional<uint64_t> count = checkedElementCount(shape);
  if (!count || *count > (uint64_t(1) << 48))
    return in.fail("idx header dimensions are too large");
  uint64_t dataBytes = *count * type->size;
  std::vector<int64_t> sampleDims(shape.begin() + 1, shape.end());
  std::string sample =
      sampleDims.empty()
          ? std::string(type->name)
          : fmt::format("{} {}", fmt::join(sampleDims, "x"), type->name);
  auto truncated = [&](uint64_t have) {
    return in.fail(fmt::format("truncated: header says {} samples of {} ({} "
                               "bytes of data), file has {}",
                               shape[0], sample, dataBytes, have));
  };
  size_t headerBytes = in.position();
  if (!in.compressed() && dataBytes > file->size() - headerBytes)
    return truncated(file->size() - headerBytes);
  if (in.compressed() && dataBytes > kMaxDeflateRatio * file->size() + 1024)
    return in.fail(fmt::format("truncated: header says {} samples of {} ({} "
                               "bytes of data), more than the {}-byte "
                               "compressed file can hold",
                               shape[0], sample, dataBytes, file->size()));
  LoadedArray array{file, headerBytes, shape};
  MODELC_RETURN_IF_ERROR(readIdxData(in, *header, dataBytes, array, truncated));
  return array;
}

} // namespace modelc::rt
