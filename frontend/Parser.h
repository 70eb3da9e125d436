// The recursive-descent parser for .mdl files (spec §2-§8). It reports each
// syntax error at the offending token, skips to the end of the statement and
// carries on, so that one run shows every independent mistake.
#pragma once

#include "frontend/AST.h"
#include "frontend/Lexer.h"

#include <memory>
#include <string>
#include <vector>

namespace modelc {

class Parser {
public:
  /// Lexes the whole file up front; lexical errors are reported here.
  Parser(int fileId, const SourceManager &sm, DiagnosticEngine &diag);

  /// Parses the file. Null when any lexical or syntax error was reported.
  std::unique_ptr<ast::Module> parseModule();
  /// Parses a file that holds exactly one expression (a `-D` value, tests).
  /// Null on any error.
  ast::ExprPtr parseStandaloneExpression();

  /// Deepest nesting accepted: bodies, brackets, plus the height of the
  /// expression tree (operator chains, calls, indexing, members, `as`).
  static constexpr int kMaxNesting = 1000;

private:
  /// Where a statement appears; decides which statements are allowed.
  enum class Context { Block, Train, Infer, Data, Group };
  struct NestingGuard;

  // Token stream.
  const Token &tok() const { return tokens[pos]; }
  const Token &peek(size_t ahead) const;
  bool at(TokenKind kind) const { return tok().kind == kind; }
  const Token &take();
  bool accept(TokenKind kind);
  bool expect(TokenKind kind, const std::string &context);
  bool expectName(std::string &name, SourceLoc &loc,
                  const std::string &context);
  bool atStatementEnd() const;
  bool atDeclarationStart() const;
  bool atDeclarationInBody() const;
  bool atAssignment() const;
  void skipNewlines();
  void skipSeparators();

  // Errors and recovery.
  void error(const Token &at, const std::string &message);
  void errorAt(SourceLoc loc, const std::string &message);
  std::string found() const;
  void synchronizeStatement();
  void synchronizeTopLevel();
  bool synchronizeHeader();

  // Declarations and types (ParserDecl.cpp).
  void parseTopLevel(ast::Module &module);
  bool parseImport(ast::Module &module);
  bool parseConst(ast::Module &module);
  bool parseBlock(ast::Module &module);
  bool parseBlockArgs(ast::BlockDecl &block);
  bool parseData(ast::Module &module);
  bool parseEntry(ast::Module &module);
  bool parseDataField(ast::DataDecl &data);
  bool parseType(ast::TypeExpr &type);
  bool parseDims(ast::TypeExpr &type);

  // Statements (ParserStmt.cpp).
  bool parseBody(Context context, ast::StmtList &body, const std::string &what,
                 ast::DataDecl *data = nullptr);
  ast::StmtPtr parseStatement(Context context);
  ast::StmtPtr parseLet();
  ast::StmtPtr parseAssign();
  ast::StmtPtr parseReturn();
  ast::StmtPtr parseFor(Context context);
  ast::StmtPtr parseIf(Context context);
  ast::StmtPtr parseAssert();
  ast::StmtPtr parseParam(); // `param` or `buffer`
  /// At `buffer NAME:` (a contextual keyword).
  bool atBuffer() const;
  ast::StmtPtr parseInput();
  ast::StmtPtr parseOutput();
  ast::StmtPtr parseGroup();
  bool checkAllowed(Context context, const ast::Stmt &stmt);

  // Expressions (ParserExpr.cpp).
  ast::ExprPtr parseExpr();
  ast::ExprPtr parseBinary(int minPrecedence);
  ast::ExprPtr parseUnary();
  ast::ExprPtr parsePostfix();
  ast::ExprPtr parsePrimary();
  ast::ExprPtr parseCall(ast::ExprPtr callee);
  ast::ExprPtr parseIndex(ast::ExprPtr base);
  bool parseIndexItem(ast::IndexItem &item);
  ast::ExprPtr parseList();
  ast::ExprPtr parseParenthesised();
  ast::ExprPtr parseParamRef();
  /// At an identifier with a `{` right after it: `weight_ih_l{i}`.
  bool atInterpolatedName() const;
  ast::ExprPtr parseInterpolatedName();
  /// Sets `expr`'s height from `childHeight` (the tallest child's) and
  /// reports an error at `at` (returning false) when the tree, counted from
  /// the current nesting, passes kMaxNesting.
  static std::string expressionTooDeep();
  bool setHeight(ast::Expr &expr, unsigned childHeight, const Token &at);
  bool parsePath(std::vector<ast::PathComponent> &path, const char *after);

  int fileId;
  DiagnosticEngine &diag;
  std::vector<Token> tokens;
  size_t pos = 0;
  int nesting = 0;
  bool hadError = false;
  const Token *lastErrorToken = nullptr;
  unsigned errorsBefore = 0;
};

/// Counts one level of nesting for as long as it lives; false (after an
/// error) when the nesting is deeper than Parser::kMaxNesting.
struct Parser::NestingGuard {
  /// `expression`: an expression (not a body) is being nested.
  explicit NestingGuard(Parser &parser, bool expression = false);
  ~NestingGuard() { --parser.nesting; }
  NestingGuard(const NestingGuard &) = delete;
  NestingGuard &operator=(const NestingGuard &) = delete;
  explicit operator bool() const { return ok; }

private:
  Parser &parser;
  bool ok;
};

/// "line:col" of `loc`, for messages that point back at an opening bracket.
std::string lineCol(SourceLoc loc);

} // namespace modelc
