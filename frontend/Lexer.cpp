// The .mdl lexer: tokens, names, operators and the newline rule (numbers
// and strings are in LexerLiterals.cpp).
#include "frontend/Lexer.h"
#include "frontend/LexerChars.h"
#include "frontend/Utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace modelc {

using namespace lexer_chars;

namespace {

struct Spelling {
  TokenKind kind;
  const char *text;
};

constexpr Spelling kKeywords[] = {
    {TokenKind::KwImport, "import"}, {TokenKind::KwConst, "const"},
    {TokenKind::KwBlock, "block"},   {TokenKind::KwData, "data"},
    {TokenKind::KwTrain, "train"},   {TokenKind::KwInfer, "infer"},
    {TokenKind::KwLet, "let"},       {TokenKind::KwParam, "param"},
    {TokenKind::KwReturn, "return"}, {TokenKind::KwFor, "for"},
    {TokenKind::KwIn, "in"},         {TokenKind::KwIf, "if"},
    {TokenKind::KwElse, "else"},     {TokenKind::KwAssert, "assert"},
    {TokenKind::KwAs, "as"},         {TokenKind::KwInput, "input"},
    {TokenKind::KwOutput, "output"}, {TokenKind::KwTrue, "true"},
    {TokenKind::KwFalse, "false"},
};

// Longest spellings first, so that `...` wins over `..` and `.`.
constexpr Spelling kPunctuation[] = {
    {TokenKind::Ellipsis, "..."}, {TokenKind::DotDot, ".."},
    {TokenKind::EqEq, "=="},      {TokenKind::NotEq, "!="},
    {TokenKind::LessEq, "<="},    {TokenKind::GreaterEq, ">="},
    {TokenKind::AmpAmp, "&&"},    {TokenKind::PipePipe, "||"},
    {TokenKind::Arrow, "->"},     {TokenKind::Plus, "+"},
    {TokenKind::Minus, "-"},      {TokenKind::Star, "*"},
    {TokenKind::Slash, "/"},      {TokenKind::Percent, "%"},
    {TokenKind::At, "@"},         {TokenKind::Bang, "!"},
    {TokenKind::Less, "<"},       {TokenKind::Greater, ">"},
    {TokenKind::Equal, "="},      {TokenKind::Colon, ":"},
    {TokenKind::Comma, ","},      {TokenKind::Semicolon, ";"},
    {TokenKind::Dot, "."},        {TokenKind::Amp, "&"},
    {TokenKind::LParen, "("},     {TokenKind::RParen, ")"},
    {TokenKind::LBracket, "["},   {TokenKind::RBracket, "]"},
    {TokenKind::LBrace, "{"},     {TokenKind::RBrace, "}"},
};

/// Bytes that cannot start any token: everything but whitespace, names,
/// numbers, strings, comments and operator characters.
bool isInvalidByte(char c) {
  static const std::string_view kStarts =
      " \t\r\f\v\n#\"'+-*/%@!=<>&|:,;.()[]{}";
  return !isIdentChar(c) && kStarts.find(c) == std::string_view::npos;
}

/// How the character at `s[i]` reads in a message.
std::string describeChar(std::string_view s, size_t i) {
  unsigned char c = s[i];
  char hex[32];
  if (c == 0)
    return "NUL byte";
  if (c < 0x20 || c == 0x7F) {
    std::snprintf(hex, sizeof hex, "control character 0x%02X", c);
    return hex;
  }
  if (c < 0x80)
    return std::string("character '") + static_cast<char>(c) + "'";
  uint32_t cp = 0;
  size_t len = decodeUtf8(s, i, cp);
  if (len == 0) {
    std::snprintf(hex, sizeof hex, "byte 0x%02X (not UTF-8)", c);
    return hex;
  }
  std::snprintf(hex, sizeof hex, "character U+%04X '", cp);
  return hex + std::string(s.substr(i, len)) + "'";
}

} // namespace

std::string tokenKindName(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Newline:
    return "end of line";
  case TokenKind::Identifier:
    return "identifier";
  case TokenKind::Int:
    return "integer";
  case TokenKind::Float:
    return "number";
  case TokenKind::String:
    return "string";
  default:
    break;
  }
  for (const Spelling &k : kKeywords)
    if (k.kind == kind)
      return std::string("'") + k.text + "'";
  for (const Spelling &p : kPunctuation)
    if (p.kind == kind)
      return std::string("'") + p.text + "'";
  return "token";
}

std::string describeToken(const Token &token) {
  switch (token.kind) {
  case TokenKind::Identifier:
    return "identifier '" + std::string(token.text) + "'";
  case TokenKind::Int:
  case TokenKind::Float:
    return tokenKindName(token.kind) + " " + std::string(token.text);
  case TokenKind::String: {
    constexpr size_t kMax = 24;
    std::string text(token.text.substr(0, kMax));
    return "string " + text + (token.text.size() > kMax ? "...\"" : "");
  }
  default:
    return tokenKindName(token.kind);
  }
}

bool isKeywordSpelling(std::string_view text) {
  for (const Spelling &k : kKeywords)
    if (text == k.text)
      return true;
  return false;
}

bool continuesStatement(TokenKind kind) {
  // Plus..Comma are the binary operators, `!`, `=`, `:` and `,` (Lexer.h).
  return (kind >= TokenKind::Plus && kind <= TokenKind::Comma) ||
         kind == TokenKind::Dot || kind == TokenKind::DotDot ||
         kind == TokenKind::Amp || kind == TokenKind::Arrow ||
         kind == TokenKind::KwAs || kind == TokenKind::KwIn;
}

Lexer::Lexer(int fileId, const SourceManager &sm, DiagnosticEngine &diag)
    : fileId(fileId), file(sm.file(fileId)), buf(file.buffer), diag(diag) {}

SourceLoc Lexer::locAt(size_t offset) const {
  auto next = std::upper_bound(file.lineStarts.begin(), file.lineStarts.end(),
                               static_cast<uint32_t>(offset));
  size_t line = next - file.lineStarts.begin();
  SourceLoc loc;
  loc.file = fileId;
  loc.line = static_cast<uint32_t>(line);
  loc.col = static_cast<uint32_t>(offset - file.lineStarts[line - 1] + 1);
  return loc;
}

Token Lexer::make(TokenKind kind, size_t start) const {
  Token token;
  token.kind = kind;
  token.loc = locAt(start);
  token.text = buf.substr(start, pos - start);
  return token;
}

namespace {
bool isStatementKeyword(TokenKind kind) {
  return kind == TokenKind::KwLet || kind == TokenKind::KwReturn ||
         kind == TokenKind::KwFor || kind == TokenKind::KwIf ||
         kind == TokenKind::KwAssert || kind == TokenKind::KwElse;
}

bool isDeclarationKeyword(TokenKind kind) {
  return kind == TokenKind::KwImport || kind == TokenKind::KwConst ||
         kind == TokenKind::KwBlock || kind == TokenKind::KwData ||
         kind == TokenKind::KwTrain || kind == TokenKind::KwInfer;
}
} // namespace

// As the parser sees it: a declaration keyword that is not a setting's name
// (`data = mnist`), at top level or, inside a body, in column 1. `pos` is
// just past the keyword.
bool Lexer::startsDeclaration(const Token &token) const {
  bool inBody = std::find(brackets.begin(), brackets.end(), Bracket::Brace) !=
                brackets.end();
  if (!isDeclarationKeyword(token.kind) || (inBody && token.loc.col != 1))
    return false;
  size_t p = pos;
  while (peekChar(p) == ' ' || peekChar(p) == '\t')
    ++p;
  return peekChar(p) != '=' || peekChar(p + 1) == '=';
}

void Lexer::closeGroups() {
  while (!brackets.empty() && brackets.back() != Bracket::Brace)
    brackets.pop_back();
}

Token Lexer::next() {
  if (hasPending) {
    hasPending = false;
    trackBrackets(pending.kind);
    previous = pending.kind;
    return std::move(pending);
  }
  for (;;) {
    Token token = lexRaw();
    token.afterInvalid = skippedInvalid;
    skippedInvalid = false;
    bool inGroup = !brackets.empty() && brackets.back() != Bracket::Brace;
    if (token.kind == TokenKind::Newline &&
        (previous == TokenKind::Newline || inGroup ||
         continuesStatement(previous))) {
      if (previous != TokenKind::Newline && !droppedNewlineSeen) {
        droppedNewlineSeen = true;
        droppedNewline = token;
      }
      // A dropped newline passes its mark on to the token after it.
      skippedInvalid = token.afterInvalid;
      continue;
    }
    bool unfinished = droppedNewlineSeen && isStatementKeyword(token.kind);
    droppedNewlineSeen = false;
    if (startsDeclaration(token))
      closeGroups();
    if (unfinished) {
      closeGroups();
      pending = std::move(token);
      hasPending = true;
      previous = TokenKind::Newline;
      return droppedNewline;
    }
    trackBrackets(token.kind);
    previous = token.kind;
    return token;
  }
}

std::vector<Token> Lexer::lexAll() {
  std::vector<Token> tokens;
  do
    tokens.push_back(next());
  while (tokens.back().kind != TokenKind::Eof);
  return tokens;
}

// `{` never occurs inside `()` or `[]` in this grammar, so an opening brace
// closes any group still open (after an error) and a closing brace closes
// everything since its partner; newlines thus stay significant in bodies
// even after an unbalanced parenthesis.
void Lexer::trackBrackets(TokenKind kind) {
  auto closeTo = [&](Bracket open) {
    for (size_t i = brackets.size(); i-- > 0;) {
      if (brackets[i] == open) {
        brackets.resize(i);
        return;
      }
      if (brackets[i] == Bracket::Brace)
        return; // an unmatched `)` or `]` inside a body: ignore it
    }
    if (open == Bracket::Brace)
      brackets.clear();
  };
  switch (kind) {
  case TokenKind::LParen:
    brackets.push_back(Bracket::Paren);
    break;
  case TokenKind::LBracket:
    brackets.push_back(Bracket::Square);
    break;
  case TokenKind::LBrace:
    closeGroups();
    brackets.push_back(Bracket::Brace);
    break;
  case TokenKind::RParen:
    closeTo(Bracket::Paren);
    break;
  case TokenKind::RBracket:
    closeTo(Bracket::Square);
    break;
  case TokenKind::RBrace:
    closeTo(Bracket::Brace);
    break;
  default:
    break;
  }
}

Token Lexer::lexRaw() {
  for (;;) {
    if (pos >= buf.size()) {
      // Point at the final newline rather than at an empty last line.
      size_t at =
          !buf.empty() && buf.back() == '\n' ? buf.size() - 1 : buf.size();
      Token token;
      token.loc = locAt(at);
      return token;
    }
    char c = buf[pos];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++pos;
      continue;
    }
    if (c == '#') {
      while (pos < buf.size() && buf[pos] != '\n')
        ++pos;
      continue;
    }
    size_t start = pos;
    if (c == '\n') {
      ++pos;
      return make(TokenKind::Newline, start);
    }
    if (isDigit(c))
      return lexNumber(start);
    if (c == '"' || c == '\'')
      return lexString(start);
    Token token;
    if (isIdentStart(c) || isNonAscii(c)) {
      if (lexWord(start, token))
        return token;
      skippedInvalid = true;
      continue;
    }
    if (lexPunctuation(start, token))
      return token;
    skipInvalid(start);
    skippedInvalid = true;
  }
}

bool Lexer::lexWord(size_t start, Token &token) {
  size_t p = start;
  size_t firstNonAscii = std::string_view::npos;
  bool hasAscii = false;
  while (isIdentChar(peekChar(p)) || isNonAscii(peekChar(p))) {
    if (isNonAscii(buf[p]) && firstNonAscii == std::string_view::npos)
      firstNonAscii = p;
    hasAscii |= !isNonAscii(buf[p]);
    ++p;
  }
  pos = p;
  if (firstNonAscii != std::string_view::npos) {
    std::string what = describeChar(buf, firstNonAscii);
    if (!hasAscii) {
      diag.error(locAt(start), "unexpected " + what);
      return false;
    }
    diag.error(locAt(firstNonAscii),
               "unexpected " + what +
                   " in a name (names use ASCII letters, digits and '_')");
  }
  token = make(TokenKind::Identifier, start);
  for (const Spelling &k : kKeywords)
    if (token.text == k.text)
      token.kind = k.kind;
  return true;
}

bool Lexer::lexPunctuation(size_t start, Token &token) {
  std::string_view rest = buf.substr(start);
  for (const Spelling &p : kPunctuation) {
    std::string_view spelling(p.text);
    if (rest.substr(0, spelling.size()) == spelling) {
      pos = start + spelling.size();
      token = make(p.kind, start);
      return true;
    }
  }
  return false;
}

void Lexer::skipInvalid(size_t start) {
  std::string message = "unexpected " + describeChar(buf, start);
  if (buf[start] == '|')
    message += " (did you mean '||'?)";
  diag.error(locAt(start), message);
  // One error for a run of junk; it ends where a token could start.
  pos = start + 1;
  while (pos < buf.size() && isInvalidByte(buf[pos]))
    ++pos;
}

} // namespace modelc
