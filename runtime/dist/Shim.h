// Loading a shim (docs/runtime/distributed.md, "Shims"): the libraries of
// distributed runs that Debian ships as shared objects only (Gloo,
// cpp-httplib) are linked by small shared objects of ours, the shims, and a
// program must start on a machine without those libraries (it needs nothing
// but glibc, test/Driver/portable-executable.test). So the build embeds each
// shim's bytes in the runtime (runtime/dist/shim/Embed.cmake) and a run that
// needs one writes it to an anonymous file (memfd_create) and dlopens it:
// then, and only then, its library must be installed.
#pragma once

#include "runtime/support/Status.h"

#include <cstddef>

namespace modelc::rt::dist {

struct ShimImage {
  const unsigned char *bytes;
  size_t size;
  const char *symbol;  // the one exported function, returning its API
  const char *purpose; // "CPU ranks (--ranks, --nnodes on the CPU) use Gloo"
  const char *package; // "libgloo0", to install where it is missing
  /// The API struct's first member, an int, must equal this.
  int abiVersion;
};

/// dlopens the shim and calls its symbol; the API pointer it returns,
/// whose ABI version matches. An error (exit 2) naming what the loader
/// could not find and `package`.
Result<const void *> loadShim(const ShimImage &image);

} // namespace modelc::rt::dist
