// The lexer's literals: numbers (ints, floats and their range checks) and
// strings (escapes, well-formed UTF-8).
#include "frontend/Lexer.h"
#include "frontend/LexerChars.h"
#include "frontend/Utf8.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace modelc {

using namespace lexer_chars;

Token Lexer::lexNumber(size_t start) {
  size_t p = start;
  while (isDigit(peekChar(p)))
    ++p;
  bool isFloat = false;
  // `1.5` and `3.` are floats; `0..n` and `h.0.attn` are not.
  if (peekChar(p) == '.') {
    char after = peekChar(p + 1);
    if (isDigit(after)) {
      isFloat = true;
      p += 1;
      while (isDigit(peekChar(p)))
        ++p;
    } else if (after != '.' && !isIdentStart(after)) {
      isFloat = true;
      p += 1;
    }
  }
  if (peekChar(p) == 'e' || peekChar(p) == 'E') {
    size_t q = p + 1;
    if (peekChar(q) == '+' || peekChar(q) == '-')
      ++q;
    if (isDigit(peekChar(q))) {
      isFloat = true;
      p = q;
      while (isDigit(peekChar(p)))
        ++p;
    }
  }
  pos = p;
  Token token = make(isFloat ? TokenKind::Float : TokenKind::Int, start);
  if (isIdentChar(peekChar(p)) || isNonAscii(peekChar(p))) {
    size_t q = p;
    while (isIdentChar(peekChar(q)) || isNonAscii(peekChar(q)))
      ++q;
    diag.error(locAt(p), "invalid suffix '" +
                             std::string(buf.substr(p, q - p)) +
                             "' on number '" + std::string(token.text) + "'");
    pos = q;
    return token;
  }
  if (isFloat) {
    std::string text(token.text);
    token.floatValue = std::strtod(text.c_str(), nullptr);
    if (std::isinf(token.floatValue)) {
      diag.error(token.loc, "number '" + text + "' is too large for a float");
      token.floatValue = 0;
    }
    return token;
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (char d : token.text) {
    int digit = d - '0';
    if (token.intValue > (kMax - digit) / 10) {
      diag.error(token.loc, "integer '" + std::string(token.text) +
                                "' does not fit in 64 bits");
      token.intValue = 0;
      break;
    }
    token.intValue = token.intValue * 10 + digit;
  }
  return token;
}

Token Lexer::lexString(size_t start) {
  // A single-quoted string is reported once and then read like a string.
  char quote = buf[start];
  if (quote == '\'')
    diag.error(locAt(start), "strings use double quotes");
  std::string value;
  bool badUtf8 = false;
  size_t p = start + 1;
  for (;;) {
    if (p >= buf.size() || buf[p] == '\n') {
      diag.error(locAt(start), "unterminated string (a string ends with '\"' "
                               "on the line where it starts)");
      break;
    }
    char c = buf[p];
    if (c == quote) {
      ++p;
      break;
    }
    if (c == '\0') {
      diag.error(locAt(p), "NUL byte in a string");
      ++p;
      continue;
    }
    if (isNonAscii(c)) {
      // Source is UTF-8 (spec §2): a string keeps only well-formed
      // sequences. The first bad byte is reported; the others are dropped.
      size_t len = utf8SequenceLength(buf, p);
      if (len == 0) {
        if (!badUtf8) {
          char hex[48];
          std::snprintf(hex, sizeof hex, "invalid UTF-8 byte 0x%02X in string",
                        static_cast<unsigned char>(c));
          diag.error(locAt(p), hex);
          badUtf8 = true;
        }
        ++p;
        continue;
      }
      value.append(buf.substr(p, len));
      p += len;
      continue;
    }
    if (c != '\\') {
      value += c;
      ++p;
      continue;
    }
    char escaped = peekChar(p + 1);
    if (escaped == '"' || escaped == '\\' || escaped == 'n') {
      value += escaped == 'n' ? '\n' : escaped;
      p += 2;
      continue;
    }
    if (p + 1 >= buf.size() || escaped == '\n') {
      ++p; // the loop reports the unterminated string
      continue;
    }
    uint32_t cp = 0;
    size_t len = isNonAscii(escaped) ? decodeUtf8(buf, p + 1, cp) : 1;
    diag.error(locAt(p), "unknown escape sequence '\\" +
                             std::string(buf.substr(p + 1, len ? len : 1)) +
                             "' (the escapes are \\\", \\\\ and \\n)");
    p += 1 + (len ? len : 1);
  }
  pos = p;
  Token token = make(TokenKind::String, start);
  token.stringValue = std::move(value);
  return token;
}

} // namespace modelc
