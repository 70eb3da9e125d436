// Reading files whole or mapped, and writing them atomically (a temporary
// name, fsync, then rename), so that a crash never leaves a half file.
#pragma once

#include "runtime/support/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace modelc::rt {

/// Read-only bytes that stay valid while the Blob lives: a mapped file or an
/// owned buffer.
class Blob {
public:
  virtual ~Blob();
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

protected:
  Blob(const uint8_t *data, size_t size) : data_(data), size_(size) {}

private:
  const uint8_t *data_;
  size_t size_;
};

/// Maps a regular file read-only. Errors name the path and the reason.
Result<std::shared_ptr<const Blob>> mapFile(const std::string &path);

/// Wraps bytes already in memory.
std::shared_ptr<const Blob> makeBlob(std::vector<uint8_t> bytes);

/// Reads a file (or a pipe) whole; larger than `maxBytes` is an error.
Result<std::string> readWholeFile(const std::string &path, size_t maxBytes);

/// A file written under PATH.tmp and renamed to PATH by commit(). Destroying
/// it uncommitted removes the temporary file.
class AtomicFile {
public:
  static Result<AtomicFile> create(const std::string &path);
  AtomicFile(AtomicFile &&other) noexcept;
  AtomicFile &operator=(AtomicFile &&other) = delete;
  AtomicFile(const AtomicFile &) = delete;
  ~AtomicFile();

  Status write(const void *data, size_t size);
  /// Flushes to disk, renames into place and syncs the directory.
  Status commit();

private:
  AtomicFile(std::string path, std::string tmpPath, int fd)
      : path_(std::move(path)), tmpPath_(std::move(tmpPath)), fd_(fd) {}
  std::string path_;
  std::string tmpPath_;
  int fd_;
};

/// Writes `bytes` to `path` through an AtomicFile.
Status writeFileAtomically(const std::string &path, const std::string &bytes);

} // namespace modelc::rt
