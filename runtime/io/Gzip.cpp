// zlib-backed gzip and raw deflate decompression with bounded output.
#include "runtime/io/Gzip.h"

#include <algorithm>
#include <fmt/format.h>
#include <zlib.h>

namespace modelc::rt {

namespace {

/// zlib counts in uInt; feed it at most this much at a time.
constexpr size_t kMaxChunk = size_t(1) << 30;
/// Output buffers grow by this much at a time.
constexpr size_t kOutputChunk = size_t(64) << 20;

std::string zlibMessage(const z_stream &stream, int code) {
  if (stream.msg)
    return stream.msg;
  return fmt::format("zlib error {}", code);
}

} // namespace

bool hasGzipMagic(const uint8_t *data, size_t size) {
  return size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

struct GzipReader::State {
  z_stream stream{};
  const uint8_t *data;
  size_t size;
  size_t consumed = 0; // input bytes handed to zlib so far
  bool initialised = false;
  bool finished = false; // the last member ended and no input is left
};

GzipReader::GzipReader(const uint8_t *data, size_t size, std::string name)
    : state_(std::make_unique<State>()), name_(std::move(name)) {
  state_->data = data;
  state_->size = size;
  // 16 + MAX_WBITS: a gzip wrapper, with its CRC-32 and length checked.
  state_->initialised = inflateInit2(&state_->stream, 16 + MAX_WBITS) == Z_OK;
}

GzipReader::~GzipReader() {
  if (state_->initialised)
    inflateEnd(&state_->stream);
}

Result<size_t> GzipReader::read(uint8_t *dst, size_t size) {
  State &s = *state_;
  if (!s.initialised)
    return Status::error(fmt::format("{}: cannot initialise zlib", name_));
  size_t produced = 0;
  while (produced < size && !s.finished) {
    z_stream &z = s.stream;
    if (z.avail_in == 0 && s.consumed < s.size) {
      size_t chunk = std::min(kMaxChunk, s.size - s.consumed);
      z.next_in = const_cast<Bytef *>(s.data + s.consumed);
      z.avail_in = uInt(chunk);
      s.consumed += chunk;
    }
    size_t want = std::min(kMaxChunk, size - produced);
    z.next_out = dst + produced;
    z.avail_out = uInt(want);
    int code = inflate(&z, Z_NO_FLUSH);
    produced += want - z.avail_out;
    if (code == Z_STREAM_END) {
      size_t left = z.avail_in + (s.size - s.consumed);
      if (left == 0) {
        s.finished = true;
      } else if (hasGzipMagic(z.next_in, z.avail_in) ||
                 (z.avail_in == 0 &&
                  hasGzipMagic(s.data + s.consumed, s.size - s.consumed))) {
        inflateReset(&z);
      } else {
        return Status::error(fmt::format(
            "{}: {} unexpected bytes after the gzip stream", name_, left));
      }
      continue;
    }
    if (code == Z_BUF_ERROR && z.avail_in == 0 && s.consumed == s.size)
      return Status::error(
          fmt::format("{}: truncated gzip stream (after {} bytes of data)",
                      name_, z.total_out));
    if (code != Z_OK)
      return Status::error(fmt::format("{}: corrupt gzip data: {}", name_,
                                       zlibMessage(z, code)));
  }
  return produced;
}

Result<std::vector<uint8_t>> inflateRaw(const uint8_t *data, size_t size,
                                        size_t expectedSize,
                                        const std::string &name) {
  // Sizes in a (non-zip64) archive are 32-bit, so zlib takes them whole.
  if (size > UINT32_MAX || expectedSize > UINT32_MAX)
    return Status::error(fmt::format("{}: member too large", name));
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
    return Status::error(fmt::format("{}: cannot initialise zlib", name));
  // The output grows as data arrives, so that memory follows what the
  // member really holds rather than what the archive claims; one spare
  // byte past the expected size detects data longer than recorded.
  std::vector<uint8_t> out;
  uint8_t spare = 0;
  z.next_in = const_cast<Bytef *>(data);
  z.avail_in = uInt(size);
  int code = Z_OK;
  while (code == Z_OK && z.total_out <= expectedSize) {
    if (z.avail_out == 0) {
      size_t done = z.total_out;
      if (done < expectedSize) {
        out.resize(done + std::min(expectedSize - done, kOutputChunk));
        z.next_out = out.data() + done;
        z.avail_out = uInt(out.size() - done);
      } else {
        z.next_out = &spare;
        z.avail_out = 1;
      }
    }
    code = inflate(&z, Z_NO_FLUSH);
  }
  std::string message = zlibMessage(z, code);
  uint64_t total = z.total_out;
  inflateEnd(&z);
  if (total > expectedSize)
    return Status::error(fmt::format(
        "{}: deflate data is longer than the {} bytes the archive records",
        name, expectedSize));
  if (code == Z_BUF_ERROR)
    return Status::error(
        fmt::format("{}: truncated deflate data ({} of {} bytes)", name, total,
                    expectedSize));
  if (code != Z_STREAM_END)
    return Status::error(
        fmt::format("{}: corrupt deflate data: {}", name, message));
  if (total != expectedSize)
    return Status::error(
        fmt::format("{}: deflate data has {} bytes, the archive records {}",
                    name, total, expectedSize));
  return out;
}

} // namespace modelc::rt
