// Numbers as the console shows them: counts with thousands separators and
// byte sizes in binary units.
#pragma once

#include <cstdint>
#include <string>

namespace modelc::rt {

/// 203530 -> "203,530".
std::string formatCount(int64_t n);

/// 12884901 -> "12.3 MiB"; below 1 KiB, "512 B".
std::string formatBytes(uint64_t bytes);

} // namespace modelc::rt
