// POSIX file access for the runtime: mapping (with a SIGBUS guard), whole
// reads of regular files, atomic writes.
#include "runtime/io/Files.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <libgen.h>
#include <random>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

// Mapped files, so that a SIGBUS (the file shrank under its mapping) can
// name the file. The handler only reads the table: a slot is published by
// storing its base last and withdrawn by clearing it first.
struct MappedRange {
  std::atomic<uintptr_t> base{0};
  size_t size = 0;
  char path[480] = {};
};
constexpr size_t kMappedRanges = 256;
MappedRange mappedRanges[kMappedRanges];
std::atomic<bool> slotTaken[kMappedRanges];
char guardProgram[128] = "program";

int registerMapping(const void *base, size_t size, const std::string &path) {
  for (size_t i = 0; i < kMappedRanges; ++i) {
    if (slotTaken[i].exchange(true))
      continue;
    MappedRange &r = mappedRanges[i];
    r.size = size;
    std::snprintf(r.path, sizeof(r.path), "%s", path.c_str());
    r.base.store(reinterpret_cast<uintptr_t>(base));
    return int(i);
  }
  return -1; // more mappings than slots: a SIGBUS there is not named
}

void unregisterMapping(int slot) {
  if (slot < 0)
    return;
  mappedRanges[slot].base.store(0);
  slotTaken[slot].store(false);
}

void writeAll(const char *text) {
  size_t n = std::strlen(text);
  while (n > 0) {
    ssize_t put = ::write(STDERR_FILENO, text, n);
    if (put <= 0)
      return;
    text += put;
    n -= size_t(put);
  }
}

void onSigbus(int sig, siginfo_t *info, void *) {
  uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const MappedRange &r : mappedRanges) {
    uintptr_t base = r.base.load();
    if (base == 0 || addr < base || addr - base >= r.size)
      continue;
    writeAll(guardProgram);
    writeAll(": error: ");
    writeAll(r.path);
    writeAll(": the file became shorter while the program read it (it is "
             "mapped); do not change input files during a run\n");
    ::_exit(2);
  }
  // Not one of our files: the default action.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

class MappedBlob final : public Blob {
public:
  MappedBlob(void *base, size_t size, const std::string &path)
      : Blob(static_cast<const uint8_t *>(base), size), base_(base),
        slot_(registerMapping(base, size, path)) {}
  ~MappedBlob() override {
    unregisterMapping(slot_);
    ::munmap(base_, size());
  }

private:
  void *base_;
  int slot_;
};

/// Opens a regular file for reading. The path is checked before it is
/// opened, and opened non-blocking, so that a FIFO never blocks the
/// program.
Result<int> openRegularFile(const std::string &path, struct stat &st) {
  if (::stat(path.c_str(), &st) != 0)
    return errnoError(path, "cannot open");
  if (!S_ISREG(st.st_mode))
    return Status::error(fmt::format(
        "{}: not a regular file ({}); give a file", path,
        S_ISDIR(st.st_mode)    ? "a directory"
        : S_ISFIFO(st.st_mode) ? "a FIFO"
        : S_ISSOCK(st.st_mode) ? "a socket"
                               : "a device"));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return errnoError(path, "cannot open");
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(fmt::format("{}: not a regular file", path));
  }
  return fd;
}

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

/// A suffix no other temporary file of this process uses, and that other
/// processes are unlikely to guess.
std::string uniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device()();
  uint64_t n = counter.fetch_add(1);
  return fmt::format("{}.{:06x}", ::getpid(), (salt + n * 0x9E3779B97F4A7C15ull) & 0xffffff);
}

} // namespace

std::string directoryOf(const std::string &path) {
  std::string copy = path;
  return ::dirname(copy.data());
}

void installMappedFileGuard(const std::string &programName) {
  std::snprintf(guardProgram, sizeof(guardProgram), "%s", programName.c_str());
  struct sigaction action = {};
  action.sa_sigaction = onSigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, nullptr);
}

Blob::~Blob() = default;

Result<std::shared_ptr<const Blob>> mapFile(const std::string &path) {
  struct stat st;
  Result<int> fd = openRegularFile(path, st);
  if (!fd)
    return fd.status();
  FdCloser closer(*fd);
  size_t size = size_t(st.st_size);
  if (size == 0)
    return makeBlob({});
  void *base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, *fd, 0);
  if (base == MAP_FAILED)
    return errnoError(path, "cannot map");
  return std::shared_ptr<const Blob>(
      std::make_shared<MappedBlob>(base, size, path));
}

std::shared_ptr<const Blob> makeBlob(std::vector<uint8_t> bytes) {
  return std::make_shared<VectorBlob>(std::move(bytes));
}

Result<std::string> readWholeFile(const std::string &path, size_t maxBytes) {
  struct stat st;
  Result<int> opened = openRegularFile(path, st);
  if (!opened)
    return opened.status();
  int fd = *opened;
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
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return Status::error(fmt::format("{}: is a directory; give a file name",
                                     path));
  // A new name each time: O_EXCL fails on anything already there, a link
  // included, rather than writing through it.
  for (int attempt = 0;; ++attempt) {
    std::string tmpPath = path + ".tmp." + uniqueSuffix();
    int fd = ::open(tmpPath.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0)
      return AtomicFile(path, std::move(tmpPath), fd);
    if (errno != EEXIST || attempt == 16)
      return errnoError(tmpPath, "cannot create");
  }
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
  return syncDirectory(directoryOf(path_));
}

Result<std::string> createUniqueDirectory(const std::string &prefix) {
  for (int attempt = 0;; ++attempt) {
    std::string path = prefix + uniqueSuffix();
    if (::mkdir(path.c_str(), 0777) == 0)
      return path;
    if (errno != EEXIST || attempt == 16)
      return errnoError(path, "cannot create the directory");
  }
}

Status syncDirectory(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errnoError(dir, "cannot open the directory to sync it");
  FdCloser closer(fd);
  if (::fsync(fd) != 0 && errno != EINVAL)
    return errnoError(dir, "cannot sync the directory");
  return Status();
}

Status checkWritable(const std::string &path, const std::string &what) {
  std::string dir = directoryOf(path);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::error(fmt::format(
        "{} {}: the directory {} does not exist; create it first", what, path,
        dir));
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return Status::error(
        fmt::format("{} {}: is a directory; give a file name", what, path));
  Result<AtomicFile> probe = AtomicFile::create(path);
  if (!probe)
    return Status::error(fmt::format("{} {}: cannot write there: {}", what,
                                     path, probe.status().message()));
  return Status(); // the probe's temporary file is removed here
}

std::optional<uint64_t> freeBytes(const std::string &dir) {
  struct statvfs vfs;
  if (::statvfs(dir.c_str(), &vfs) != 0)
    return std::nullopt;
  return uint64_t(vfs.f_bavail) * uint64_t(vfs.f_frsize);
}

Status writeFileAtomically(const std::string &path, const std::string &bytes) {
  Result<AtomicFile> file = AtomicFile::create(path);
  if (!file)
    return file.status();
  MODELC_RETURN_IF_ERROR(file->write(bytes.data(), bytes.size()));
  return file->commit();
}

} // namespace modelc::rt
