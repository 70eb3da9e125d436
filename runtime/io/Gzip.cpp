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

struct RawInflater::State {
  z_stream stream{};
  uint64_t expectedSize;
  bool tooLarge = false;
  bool initialised = false;
  bool ended = false; // Z_STREAM_END seen
};

RawInflater::RawInflater(const uint8_t *data, size_t size,
                         uint64_t expectedSize, std::string name)
    : state_(std::make_unique<State>()), name_(std::move(name)) {
  state_->expectedSize = expectedSize;
  // Sizes in a (non-zip64) archive are 32-bit, so zlib takes them whole.
  state_->tooLarge = size > UINT32_MAX || expectedSize > UINT32_MAX;
  if (state_->tooLarge)
    return;
  z_stream &z = state_->stream;
  z.next_in = const_cast<Bytef *>(data);
  z.avail_in = uInt(size);
  state_->initialised = inflateInit2(&z, -MAX_WBITS) == Z_OK;
}

RawInflater::~RawInflater() {
  if (state_->initialised)
    inflateEnd(&state_->stream);
}

uint64_t RawInflater::produced() const { return state_->stream.total_out; }

Status RawInflater::read(uint8_t *dst, size_t size) {
  State &s = *state_;
  z_stream &z = s.stream;
  if (!s.initialised)
    return Status::error(
        s.tooLarge ? fmt::format("{}: member too large", name_)
                   : fmt::format("{}: cannot initialise zlib", name_));
  if (size > s.expectedSize - z.total_out)
    return Status::error(
        fmt::format(
            "{}: internal error: reading past the {} bytes the archive records",
            name_, s.expectedSize),
        kExitInternal);
  z.next_out = dst;
  z.avail_out = uInt(size);
  while (z.avail_out > 0) {
    if (s.ended)
      return Status::error(
          fmt::format("{}: deflate data has {} bytes, the archive records {}",
                      name_, z.total_out, s.expectedSize));
    int code = inflate(&z, Z_NO_FLUSH);
    if (code == Z_STREAM_END) {
      s.ended = true;
      continue;
    }
    if (code == Z_BUF_ERROR && z.avail_in == 0)
      return Status::error(
          fmt::format("{}: truncated deflate data ({} of {} bytes)", name_,
                      z.total_out, s.expectedSize));
    if (code != Z_OK)
      return Status::error(fmt::format("{}: corrupt deflate data: {}", name_,
                                       zlibMessage(z, code)));
  }
  return Status();
}

Status RawInflater::finish() {
  State &s = *state_;
  z_stream &z = s.stream;
  if (!s.initialised || z.total_out != s.expectedSize)
    return Status::error(
        fmt::format("{}: internal error: finished after {} of {} bytes", name_,
                    z.total_out, s.expectedSize),
        kExitInternal);
  // One spare byte: the stream must end without producing it.
  uint8_t spare;
  while (!s.ended) {
    z.next_out = &spare;
    z.avail_out = 1;
    int code = inflate(&z, Z_NO_FLUSH);
    if (z.avail_out == 0)
      return Status::error(fmt::format(
          "{}: deflate data is longer than the {} bytes the archive records",
          name_, s.expectedSize));
    if (code == Z_STREAM_END)
      s.ended = true;
    else if (code == Z_BUF_ERROR && z.avail_in == 0)
      return Status::error(
          fmt::format("{}: truncated deflate data ({} of {} bytes)", name_,
                      z.total_out, s.expectedSize));
    else if (code != Z_OK)
      return Status::error(fmt::format("{}: corrupt deflate data: {}", name_,
                                       zlibMessage(z, code)));
  }
  return Status();
}

Result<std::vector<uint8_t>> inflateRaw(const uint8_t *data, size_t size,
                                        size_t expectedSize,
                                        const std::string &name) {
  RawInflater inflater(data, size, expectedSize, name);
  std::vector<uint8_t> out;
  // Grown as data arrives, so that memory follows what the stream really
  // holds rather than what the archive claims.
  while (out.size() < expectedSize) {
    size_t done = out.size();
    out.resize(done + std::min(expectedSize - done, kOutputChunk));
    MODELC_RETURN_IF_ERROR(inflater.read(out.data() + done, out.size() - done));
  }
  MODELC_RETURN_IF_ERROR(inflater.finish());
  return out;
}

} // namespace modelc::rt
