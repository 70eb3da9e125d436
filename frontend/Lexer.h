// The .mdl lexer (spec §2): turns a source buffer into tokens, reporting bad
// characters and literals and carrying on after them.
#pragma once

#include "frontend/Diagnostics.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace modelc {

enum class TokenKind {
  Eof,
  Newline, // a statement-ending newline (see Lexer)
  Identifier,
  Int,
  Float,
  String,
  // Keywords.
  KwImport,
  KwConst,
  KwBlock,
  KwData,
  KwTrain,
  KwInfer,
  KwLet,
  KwParam,
  KwReturn,
  KwFor,
  KwIn,
  KwIf,
  KwElse,
  KwAssert,
  KwAs,
  KwInput,
  KwOutput,
  KwTrue,
  KwFalse,
  // Operators and punctuation; Plus..Comma continue a statement over a
  // newline (continuesStatement), so keep them together.
  Plus,      // +
  Minus,     // -
  Star,      // *
  Slash,     // /
  Percent,   // %
  At,        // @
  Bang,      // !
  EqEq,      // ==
  NotEq,     // !=
  Less,      // <
  LessEq,    // <=
  Greater,   // >
  GreaterEq, // >=
  AmpAmp,    // &&
  PipePipe,  // ||
  Equal,     // =
  Colon,     // :
  Comma,     // ,
  Semicolon, // ;
  Dot,       // .
  DotDot,    // ..
  Ellipsis,  // ...
  Amp,       // &
  Arrow,     // ->
  LParen,    // (
  RParen,    // )
  LBracket,  // [
  RBracket,  // ]
  LBrace,    // {
  RBrace,    // }
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  SourceLoc loc;
  /// The spelling in the source buffer (owned by the SourceManager, whose
  /// buffers never move).
  std::string_view text;
  int64_t intValue = 0;    // Int
  double floatValue = 0;   // Float
  std::string stringValue; // String, escapes decoded
  /// Comes right after characters that the lexer reported and skipped. The
  /// parser reports nothing at such a token: what it finds there is a
  /// consequence of that error, which is the statement's one message.
  bool afterInvalid = false;

  bool is(TokenKind k) const { return kind == k; }
  bool isKeyword() const {
    return kind >= TokenKind::KwImport && kind <= TokenKind::KwFalse;
  }
  /// An identifier or a keyword: anything spelled like a name.
  bool isWord() const { return kind == TokenKind::Identifier || isKeyword(); }
};

/// How a token kind reads in a message: "'+'", "'return'", "identifier".
std::string tokenKindName(TokenKind kind);
/// How a token reads in a message: "identifier 'x'", "'}'", "integer 12",
/// "end of file".
std::string describeToken(const Token &token);
/// True when `text` is spelled like a keyword (`data`, `as`, ...).
bool isKeywordSpelling(std::string_view text);
/// True for tokens after which a newline does not end a statement: binary
/// operators, `,`, `=`, `->`, `:`, `.`, `..`, `!`, `&`, `as`, `in`.
bool continuesStatement(TokenKind kind);

/// Splits one file into tokens. Newline tokens are emitted only where they
/// can end a statement: never inside `()` or `[]` (unless a `{` opened since),
/// never after a token for which continuesStatement() holds, never at the
/// start of the file, and never twice in a row. A statement keyword (`let`,
/// `return`, `for`, `if`, `assert`, `else`) cannot continue an expression:
/// when one follows a dropped newline, the statement before it was left
/// unfinished (an unclosed `(`, a trailing `+`), so the lexer closes any open
/// `()`/`[]` and emits the Newline after all, for the parser to report. A
/// declaration keyword (`const`, `block`, ... not followed by `=`) at top
/// level, or in column 1 inside a body, likewise closes any open `()`/`[]`,
/// without a Newline: the declaration before it was left unfinished, and the
/// parser reports that at the keyword. Errors go to `diag`; the lexer skips
/// the offending characters, marks the next token `afterInvalid` and carries
/// on.
class Lexer {
public:
  Lexer(int fileId, const SourceManager &sm, DiagnosticEngine &diag);

  /// The next token; Eof forever at the end.
  Token next();
  /// Every token up to and including Eof.
  std::vector<Token> lexAll();

private:
  enum class Bracket { Paren, Square, Brace };

  Token lexRaw();
  Token lexNumber(size_t start);
  bool lexWord(size_t start, Token &token);
  Token lexString(size_t start);
  bool lexPunctuation(size_t start, Token &token);
  void skipInvalid(size_t start);
  void trackBrackets(TokenKind kind);
  void closeGroups();
  bool startsDeclaration(const Token &token) const;
  Token make(TokenKind kind, size_t start) const;
  SourceLoc locAt(size_t offset) const;
  char peekChar(size_t offset) const {
    return offset < buf.size() ? buf[offset] : '\0';
  }

  int fileId;
  const SourceFile &file;
  std::string_view buf;
  DiagnosticEngine &diag;
  size_t pos = 0;
  std::vector<Bracket> brackets;
  TokenKind previous = TokenKind::Newline; // kind of the last token returned
  bool skippedInvalid = false; // characters rejected since the last token
  // A newline dropped inside `()`/`[]` or after an operator, and a token
  // held back behind the Newline that next() inserts when the statement
  // turns out to be unfinished.
  bool droppedNewlineSeen = false;
  Token droppedNewline;
  bool hasPending = false;
  Token pending;
};

} // namespace modelc
