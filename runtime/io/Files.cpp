// POSIX file access for the runtime: mapping, whole reads, atomic writes.
#include "runtime/io/Files.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <libgen.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the runtime's file formats assume a little-endian host");

namespace modelc::rt {

namespace {

Status errnoError(const std::string &path, const char *what) {
  return Status::error(fmt::format("{}: {}: {}", path, what, strerror(errno)));
}

/// Closes a descriptor on every path out of a function.
class FdCloser {
public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() { ::close(fd_); }
  FdCloser(const FdCloser &) = delete;
  FdCloser &operator=(const FdCloser &) = delete;

private:
  int fd_;
};

class MappedBlob final : public Blob {
public:
  MappedBlob(void *base, size_t size)
      : Blob(static_cast<const uint8_t *>(base), size), base_(base) {}
  ~MappedBlob() override { ::munmap(base_, size()); }

private:
  void *base_;
};

/// Holds the vector so that it is constructed before the Blob base, which
/// points into it (base-from-member).
struct VectorHolder {
  std::vector<uint8_t> bytes;
};

class VectorBlob final : private VectorHolder, public Blob {
public:
  explicit VectorBlob(std::vector<uint8_t> bytes)
      : VectorHolder{std::move(bytes)},
        Blob(VectorHolder::bytes.data(), VectorHolder::bytes.size()) {}
};

std::string directoryOf(const std::string &path) {
  std::string copy = path;
  return ::dirname(copy.data());
}

} // namespace

Blob::~Blob() = default;

Result<std::shared_ptr<const Blob>> mapFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errnoError(path, "cannot open");
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return errnoError(path, "cannot stat");
  if (!S_ISREG(st.st_mode))
    return Status::error(fmt::format("{}: not a regular file", path));
  size_t size = size_t(st.st_size);
  if (size == 0)
    return makeBlob({});
  void *base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED)
    return errnoError(path, "cannot map");
  return std::shared_ptr<const Blob>(std::make_shared<MappedBlob>(base, size));
}

std::shared_ptr<const Blob> makeBlob(std::vector<uint8_t> bytes) {
  return std::make_shared<VectorBlob>(std::move(bytes));
}

Result<std::string> readWholeFile(const std::string &path, size_t maxBytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errnoError(path, "cannot open");
  FdCloser closer(fd);
  std::string bytes;
  char chunk[65536];
  while (true) {
    ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return errnoError(path, "cannot read");
    if (got == 0)
      return bytes;
    if (bytes.size() + size_t(got) > maxBytes)
      return Status::error(
          fmt::format("{}: larger than the limit of {} bytes", path, maxBytes));
    bytes.append(chunk, size_t(got));
  }
}

Result<AtomicFile> AtomicFile::create(const std::string &path) {
  std::string tmpPath = path + ".tmp";
  int fd =
      ::open(tmpPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return errnoError(tmpPath, "cannot create");
  return AtomicFile(path, std::move(tmpPath), fd);
}

AtomicFile::AtomicFile(AtomicFile &&other) noexcept
    : path_(std::move(other.path_)), tmpPath_(std::move(other.tmpPath_)),
      fd_(other.fd_) {
  other.fd_ = -1;
  other.tmpPath_.clear();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!tmpPath_.empty())
    ::unlink(tmpPath_.c_str());
}

Status AtomicFile::write(const void *data, size_t size) {
  if (fd_ < 0)
    return Status::error(fmt::format("{}: already closed", tmpPath_));
  const char *bytes = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t put = ::write(fd_, bytes, size);
    if (put < 0 && errno == EINTR)
      continue;
    if (put < 0)
      return errnoError(tmpPath_, "cannot write");
    bytes += put;
    size -= size_t(put);
  }
  return Status();
}

Status AtomicFile::commit() {
  if (fd_ < 0)
    return Status::error(fmt::format("{}: already closed", tmpPath_));
  if (::fsync(fd_) != 0)
    return errnoError(tmpPath_, "cannot sync");
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    return errnoError(tmpPath_, "cannot close");
  if (::rename(tmpPath_.c_str(), path_.c_str()) != 0)
    return errnoError(path_, "cannot rename the temporary file into place");
  tmpPath_.clear();
  // Make the rename itself durable.
  int dirFd = ::open(directoryOf(path_).c_str(), O_RDONLY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
  return Status();
}

Status writeFileAtomically(const std::string &path, const std::string &bytes) {
  Result<AtomicFile> file = AtomicFile::create(path);
  if (!file)
    return file.status();
  MODELC_RETURN_IF_ERROR(file->write(bytes.data(), bytes.size()));
  return file->commit();
}

} // namespace modelc::rt
