// Decompression with zlib: gzip streams (idx files) and raw deflate data (npz
// members), bounded by what the caller expects so that a corrupt or hostile
// file cannot make us allocate without limit.
#pragma once

#include "runtime/support/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace modelc::rt {

/// Deflate cannot compress better than about 1032:1; an uncompressed size
/// beyond this many bytes per compressed byte means a corrupt header.
inline constexpr uint64_t kMaxDeflateRatio = 1032;

/// True when the bytes start with the gzip magic 1f 8b.
bool hasGzipMagic(const uint8_t *data, size_t size);

/// Reads the decompressed bytes of a gzip file held in memory, in pieces.
/// Concatenated gzip members are one stream, as gzip(1) treats them.
class GzipReader {
public:
  /// `name` prefixes every error message.
  GzipReader(const uint8_t *data, size_t size, std::string name);
  ~GzipReader();
  GzipReader(const GzipReader &) = delete;
  GzipReader &operator=(const GzipReader &) = delete;

  /// Fills `dst` with up to `size` bytes; fewer only at the end of the
  /// stream. Truncated or corrupt data is an error.
  Result<size_t> read(uint8_t *dst, size_t size);

private:
  struct State;
  std::unique_ptr<State> state_;
  std::string name_;
};

/// Inflates raw deflate data (an npz member) in pieces, straight into the
/// caller's buffers. The stream must decompress to exactly `expectedSize`
/// bytes (the caller checks that size against kMaxDeflateRatio first): data
/// beyond it is an error as soon as it appears, so nothing is ever inflated
/// past what the caller allocated.
class RawInflater {
public:
  /// `name` prefixes every error message.
  RawInflater(const uint8_t *data, size_t size, uint64_t expectedSize,
              std::string name);
  ~RawInflater();
  RawInflater(const RawInflater &) = delete;
  RawInflater &operator=(const RawInflater &) = delete;

  /// Fills `dst` with exactly `size` more bytes; a stream that ends first
  /// is an error.
  Status read(uint8_t *dst, size_t size);
  /// After `expectedSize` bytes: the stream must end there.
  Status finish();
  uint64_t produced() const;

private:
  struct State;
  std::unique_ptr<State> state_;
  std::string name_;
};

/// Inflates raw deflate data that must decompress to exactly `expectedSize`
/// bytes (the caller checks that size against kMaxDeflateRatio first).
Result<std::vector<uint8_t>> inflateRaw(const uint8_t *data, size_t size,
                                        size_t expectedSize,
                                        const std::string &name);

} // namespace modelc::rt
