// Console number formatting (see Text.h).
#include "runtime/driver/Text.h"

#include <fmt/format.h>

namespace modelc::rt {

std::string formatCount(int64_t n) {
  std::string digits = std::to_string(n);
  size_t first = digits[0] == '-' ? 1 : 0;
  std::string out = digits.substr(0, first);
  for (size_t i = first; i < digits.size(); ++i) {
    if (i > first && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024)
    return fmt::format("{} B", bytes);
  double v = double(bytes) / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

} // namespace modelc::rt
