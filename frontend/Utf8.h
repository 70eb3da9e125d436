// UTF-8 decoding shared by the lexer (which reports bad characters) and the
// diagnostics printer (which must not garble a source line).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace modelc {

/// Length of the well-formed UTF-8 sequence at `s[i]` (0 when ill-formed),
/// and its code point in `cp`.
inline size_t decodeUtf8(std::string_view s, size_t i, uint32_t &cp) {
  unsigned char c = s[i];
  size_t len = c >= 0xF0 && c <= 0xF4   ? 4
               : c >= 0xE0 && c <= 0xEF ? 3
               : c >= 0xC2 && c <= 0xDF ? 2
                                        : 0;
  if (len == 0 || i + len > s.size())
    return 0;
  cp = c & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    unsigned char cont = s[i + k];
    if ((cont & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (cont & 0x3F);
  }
  return len;
}

/// Length of the well-formed UTF-8 sequence at `s[i]`, or 0.
inline size_t utf8SequenceLength(std::string_view s, size_t i) {
  uint32_t cp = 0;
  return decodeUtf8(s, i, cp);
}

} // namespace modelc
