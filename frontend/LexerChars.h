// Character classes shared by the lexer's source files (private to them).
#pragma once

namespace modelc::lexer_chars {

inline bool isDigit(char c) { return c >= '0' && c <= '9'; }
inline bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
inline bool isNonAscii(char c) { return static_cast<unsigned char>(c) >= 0x80; }

} // namespace modelc::lexer_chars
