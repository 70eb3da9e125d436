// Loading a shim (Shim.h).
#include "runtime/dist/Shim.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace modelc::rt::dist {

Result<const void *> loadShim(const ShimImage &image) {
  int fd = ::memfd_create(image.symbol, MFD_CLOEXEC);
  if (fd < 0)
    return Status::error(fmt::format("cannot load the shim of {}: "
                                     "memfd_create failed: {}",
                                     image.purpose, std::strerror(errno)),
                         kExitInternal);
  size_t written = 0;
  while (written < image.size) {
    ssize_t n = ::write(fd, image.bytes + written, image.size - written);
    if (n <= 0) {
      ::close(fd);
      return Status::error(fmt::format("cannot load the shim of {}: "
                                       "writing it failed",
                                       image.purpose),
                           kExitInternal);
    }
    written += size_t(n);
  }
  // Nothing is left on disk; the library is looked up by the dynamic
  // loader as usual. The descriptor stays open: the loader knows a shim by
  // its path, and a second shim loaded from a reused /proc/self/fd/N would
  // be taken for the first.
  std::string path = fmt::format("/proc/self/fd/{}", fd);
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    ::close(fd);
  if (!handle)
    return Status::error(fmt::format("{}, which could not be loaded: {}; "
                                     "install it (Debian, Ubuntu: apt "
                                     "install {})",
                                     image.purpose, ::dlerror(),
                                     image.package));
  auto get = reinterpret_cast<const void *(*)()>(
      ::dlsym(handle, image.symbol));
  const void *api = get ? get() : nullptr;
  if (!api)
    return Status::error(fmt::format("internal error: the embedded shim "
                                     "has no {}",
                                     image.symbol),
                         kExitInternal);
  if (*static_cast<const int *>(api) != image.abiVersion)
    return Status::error(fmt::format("internal error: the embedded shim of "
                                     "{} does not match the runtime",
                                     image.symbol),
                         kExitInternal);
  return api;
}

} // namespace modelc::rt::dist
