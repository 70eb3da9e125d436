// The parser's token stream, nesting limit and error recovery, and the loop
// over a file's declarations. Declarations and types are parsed in
// ParserDecl.cpp, statements in ParserStmt.cpp, expressions in ParserExpr.cpp.
#include "frontend/Parser.h"

#include "frontend/Frontend.h"

namespace modelc {

std::unique_ptr<ast::Module> parseFile(int fileId, const SourceManager &sm,
                                       DiagnosticEngine &diag) {
  return Parser(fileId, sm, diag).parseModule();
}

std::string lineCol(SourceLoc loc) {
  return std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

Parser::Parser(int fileId, const SourceManager &sm, DiagnosticEngine &diag)
    : fileId(fileId), diag(diag), errorsBefore(diag.errorCount()) {
  tokens = Lexer(fileId, sm, diag).lexAll();
}

//===----------------------------------------------------------------------===//
// Token stream
//===----------------------------------------------------------------------===//

const Token &Parser::peek(size_t ahead) const {
  return tokens[std::min(pos + ahead, tokens.size() - 1)];
}

const Token &Parser::take() {
  const Token &token = tokens[pos];
  if (pos + 1 < tokens.size())
    ++pos;
  return token;
}

bool Parser::accept(TokenKind kind) {
  if (!at(kind))
    return false;
  take();
  return true;
}

bool Parser::expect(TokenKind kind, const std::string &context) {
  if (accept(kind))
    return true;
  error(tok(), "expected " + tokenKindName(kind) + " " + context + ", found " +
                   found());
  return false;
}

bool Parser::expectName(std::string &name, SourceLoc &loc,
                        const std::string &context) {
  if (!at(TokenKind::Identifier)) {
    error(tok(), "expected a name " + context + ", found " + found());
    return false;
  }
  loc = tok().loc;
  name = std::string(take().text);
  return true;
}

bool Parser::atStatementEnd() const {
  return at(TokenKind::Newline) || at(TokenKind::Semicolon) ||
         at(TokenKind::RBrace) || at(TokenKind::Eof);
}

bool Parser::atDeclarationStart() const {
  switch (tok().kind) {
  case TokenKind::KwImport:
  case TokenKind::KwConst:
  case TokenKind::KwBlock:
  case TokenKind::KwData:
  case TokenKind::KwTrain:
  case TokenKind::KwInfer:
    return !peek(1).is(TokenKind::Equal);
  default:
    return false;
  }
}

// Inside a body, a declaration keyword in column 1 most likely means that
// the body's `}` is missing; indented, it is just a misplaced word.
bool Parser::atDeclarationInBody() const {
  return tok().loc.col == 1 && atDeclarationStart();
}

// `name = value`. Settings may be spelled like keywords (`data = mnist`);
// keywords that start statements themselves (`let`, `return`, ...) may not.
bool Parser::atAssignment() const {
  if (!peek(1).is(TokenKind::Equal))
    return false;
  switch (tok().kind) {
  case TokenKind::Identifier:
  case TokenKind::KwImport:
  case TokenKind::KwConst:
  case TokenKind::KwBlock:
  case TokenKind::KwData:
  case TokenKind::KwTrain:
  case TokenKind::KwInfer:
  case TokenKind::KwInput:
  case TokenKind::KwOutput:
  case TokenKind::KwParam:
    return true;
  default:
    return false;
  }
}

void Parser::skipNewlines() {
  while (at(TokenKind::Newline))
    take();
}

void Parser::skipSeparators() {
  while (at(TokenKind::Newline) || at(TokenKind::Semicolon))
    take();
}

Parser::NestingGuard::NestingGuard(Parser &parser, bool expression)
    : parser(parser), ok(++parser.nesting <= kMaxNesting) {
  if (!ok)
    parser.error(parser.tok(),
                 expression ? expressionTooDeep()
                            : "nesting is too deep (the limit is " +
                                  std::to_string(kMaxNesting) + " levels)");
}

std::string Parser::expressionTooDeep() {
  return "expression is too deeply nested (more than " +
         std::to_string(kMaxNesting) + " levels)";
}

//===----------------------------------------------------------------------===//
// Errors and recovery
//===----------------------------------------------------------------------===//

// Only the first error at a token is shown: the enclosing constructs that
// fail because of it would otherwise repeat it. None is shown at a token
// right after characters the lexer rejected: that error explains this one.
void Parser::error(const Token &token, const std::string &message) {
  hadError = true;
  if (&token == lastErrorToken || token.afterInvalid)
    return;
  lastErrorToken = &token;
  diag.error(token.loc, message);
}

void Parser::errorAt(SourceLoc loc, const std::string &message) {
  hadError = true;
  diag.error(loc, message);
}

std::string Parser::found() const { return describeToken(tok()); }

// The lexer emits a Newline only where it can end a statement (never inside
// an open `(` or `[`), so recovery needs to track braces alone.

// Skips the rest of a broken statement inside a body: up to and including
// the next newline or `;`, but not past the body's `}` or a declaration that
// starts a line.
void Parser::synchronizeStatement() {
  int braces = 0;
  while (!at(TokenKind::Eof)) {
    TokenKind kind = tok().kind;
    if (braces == 0) {
      if (kind == TokenKind::Newline || kind == TokenKind::Semicolon) {
        take();
        return;
      }
      if (kind == TokenKind::RBrace || atDeclarationInBody())
        return;
    }
    if (kind == TokenKind::LBrace)
      ++braces;
    else if (kind == TokenKind::RBrace)
      --braces;
    take();
  }
}

// Skips a broken top-level construct, including any braced body it has.
void Parser::synchronizeTopLevel() {
  int braces = 0;
  while (!at(TokenKind::Eof)) {
    TokenKind kind = tok().kind;
    if (braces == 0 && (kind == TokenKind::Newline ||
                        kind == TokenKind::Semicolon || atDeclarationStart()))
      return;
    if (kind == TokenKind::LBrace)
      ++braces;
    else if (kind == TokenKind::RBrace && braces > 0)
      --braces;
    take();
  }
}

// After an error in a declaration's header: skips to its `{` (true: the body
// can still be checked) or to the end of the line (false).
bool Parser::synchronizeHeader() {
  while (!at(TokenKind::Eof)) {
    if (at(TokenKind::LBrace))
      return true;
    if (at(TokenKind::Newline) || at(TokenKind::Semicolon) ||
        at(TokenKind::RBrace) || atDeclarationInBody())
      return false;
    take();
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

std::unique_ptr<ast::Module> Parser::parseModule() {
  auto module = std::make_unique<ast::Module>();
  module->file = fileId;
  for (;;) {
    skipSeparators();
    if (at(TokenKind::Eof))
      break;
    size_t before = pos;
    parseTopLevel(*module);
    if (pos == before)
      take();
  }
  if (hadError || diag.errorCount() != errorsBefore)
    return nullptr;
  return module;
}

ast::ExprPtr Parser::parseStandaloneExpression() {
  skipSeparators();
  ast::ExprPtr expr = parseExpr();
  if (expr) {
    skipSeparators();
    if (!at(TokenKind::Eof))
      error(tok(), "unexpected " + found() + " after the expression");
  }
  if (hadError || diag.errorCount() != errorsBefore)
    return nullptr;
  return expr;
}

} // namespace modelc
