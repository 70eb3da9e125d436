// Reading files whole or mapped, and writing them atomically (a temporary
// name created exclusively, fsync, rename, fsync of the directory), so that
// a crash never leaves a half file and a planted link is never followed.
#pragma once

#include "runtime/support/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
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

/// Maps a regular file read-only. Errors name the path and the reason; a
/// FIFO, device or directory is refused before it is opened for reading.
/// While the mapping lives, a file that shrinks under it ends the program
/// with a message naming it (see installMappedFileGuard).
Result<std::shared_ptr<const Blob>> mapFile(const std::string &path);

/// Installs a SIGBUS handler: a read past the end of a mapped file (another
/// process truncated it) prints "PROGRAM: error: PATH: ..." and exits with
/// status 2 instead of dying silently; other SIGBUSes keep the default.
void installMappedFileGuard(const std::string &programName);

/// Wraps bytes already in memory.
std::shared_ptr<const Blob> makeBlob(std::vector<uint8_t> bytes);

/// Reads a regular file whole; larger than `maxBytes` is an error.
Result<std::string> readWholeFile(const std::string &path, size_t maxBytes);

/// A file written under PATH.tmp.XXXXXX and renamed over PATH by commit().
/// The temporary name is new (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0644 under the
/// umask), so a link planted there is never written through. Destroying it
/// uncommitted removes the temporary file.
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

/// Creates a new directory PREFIX + a unique suffix (mode 0777 under the
/// umask; never an existing one) and returns its path.
Result<std::string> createUniqueDirectory(const std::string &prefix);

/// Makes a directory's entries (a rename into it) durable.
Status syncDirectory(const std::string &dir);

/// The directory part of a path ("." for a bare name).
std::string directoryOf(const std::string &path);

/// Checks before a run that `path` can be written later: its directory
/// exists and a new file can be created in it (tried and removed), and
/// `path` itself is not a directory. `what` names the option in messages
/// ("--save").
Status checkWritable(const std::string &path, const std::string &what);

/// Bytes free to an unprivileged user on the file system holding `dir`, or
/// nullopt when it cannot be told.
std::optional<uint64_t> freeBytes(const std::string &dir);

} // namespace modelc::rt
