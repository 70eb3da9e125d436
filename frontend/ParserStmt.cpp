// Parsing of bodies and statements, and which statements each body allows.
#include "frontend/Parser.h"

#include "frontend/ASTDump.h"

namespace modelc {

using namespace ast;

bool Parser::parseBody(Context context, StmtList &body, const std::string &what,
                       DataDecl *data) {
  skipNewlines();
  if (!at(TokenKind::LBrace)) {
    error(tok(), "expected '{' to start " + what + ", found " + found());
    return false;
  }
  NestingGuard guard(*this);
  if (!guard)
    return false;
  const Token &open = take();
  for (;;) {
    skipSeparators();
    if (accept(TokenKind::RBrace))
      return true;
    // Stop at a declaration so that it is parsed at top level.
    if (at(TokenKind::Eof) || atDeclarationInBody()) {
      error(tok(), "expected '}' to close " + what + " started at " +
                       lineCol(open.loc) + ", found " + found());
      return false;
    }
    size_t before = pos;
    bool ok;
    if (data && tok().isWord() && peek(1).is(TokenKind::Colon)) {
      ok = parseDataField(*data);
    } else {
      StmtPtr stmt = parseStatement(context);
      ok = stmt != nullptr;
      if (stmt)
        body.push_back(std::move(stmt));
    }
    if (!ok && !atDeclarationInBody())
      synchronizeStatement();
    if (pos == before && !at(TokenKind::RBrace) && !at(TokenKind::Eof))
      take();
  }
}

StmtPtr Parser::parseStatement(Context context) {
  StmtPtr stmt;
  bool braced = false; // ends with `}`, so needs no separator after it
  switch (tok().kind) {
  case TokenKind::KwLet:
    stmt = parseLet();
    break;
  case TokenKind::KwReturn:
    stmt = parseReturn();
    break;
  case TokenKind::KwFor:
    stmt = parseFor(context);
    braced = true;
    break;
  case TokenKind::KwIf:
    stmt = parseIf(context);
    braced = true;
    break;
  case TokenKind::KwAssert:
    stmt = parseAssert();
    break;
  case TokenKind::KwParam:
    stmt = atAssignment() ? parseAssign() : parseParam();
    break;
  case TokenKind::KwInput:
    stmt = atAssignment() ? parseAssign() : parseInput();
    break;
  case TokenKind::KwOutput:
    stmt = atAssignment() ? parseAssign() : parseOutput();
    break;
  case TokenKind::KwElse:
    error(tok(), "'else' without a matching 'if'");
    return nullptr;
  default:
    if (atAssignment()) {
      stmt = parseAssign();
    } else if (atBuffer()) {
      stmt = parseParam();
    } else if (at(TokenKind::Identifier) && peek(1).is(TokenKind::LBrace)) {
      stmt = parseGroup();
      braced = true;
    } else if (tok().isKeyword() && !at(TokenKind::KwTrue) &&
               !at(TokenKind::KwFalse)) {
      error(tok(), "unexpected " + found() + " at the start of a statement");
      return nullptr;
    } else {
      SourceLoc loc = tok().loc;
      ExprPtr value = parseExpr();
      if (!value)
        return nullptr;
      if (at(TokenKind::Equal)) {
        error(tok(), "only a name can be assigned to ('name = value')");
        return nullptr;
      }
      stmt = std::make_unique<ExprStmt>(loc, std::move(value));
    }
  }
  if (!stmt)
    return nullptr;
  if (!braced && !atStatementEnd()) {
    error(tok(),
          "expected end of statement (a newline or ';'), found " + found());
    return nullptr;
  }
  checkAllowed(context, *stmt);
  return stmt;
}

namespace {
const char *describeStmt(Stmt::Kind kind) {
  switch (kind) {
  case Stmt::Kind::Let:
    return "'let'";
  case Stmt::Kind::Assign:
    return "an assignment";
  case Stmt::Kind::Return:
    return "'return'";
  case Stmt::Kind::For:
    return "'for'";
  case Stmt::Kind::If:
    return "'if'";
  case Stmt::Kind::Assert:
    return "'assert'";
  case Stmt::Kind::Param:
    return "'param'";
  case Stmt::Kind::Group:
    return "a settings group";
  case Stmt::Kind::Input:
    return "'input'";
  case Stmt::Kind::Output:
    return "'output'";
  case Stmt::Kind::Expr:
    return "an expression statement";
  }
  return "a statement";
}
} // namespace

// The parser, not sema, rejects statements in the wrong kind of body: the
// grammar of each body is small and fixed (spec §3, §7, §8).
bool Parser::checkAllowed(Context context, const Stmt &stmt) {
  using K = Stmt::Kind;
  K kind = stmt.kind;
  bool ok = false;
  const char *where = "";
  switch (context) {
  case Context::Block:
    ok = kind != K::Group && kind != K::Input && kind != K::Output;
    where = "a block";
    break;
  case Context::Train:
    ok = kind == K::Let || kind == K::Assign || kind == K::Group ||
         kind == K::Assert;
    where = "a train entry";
    break;
  case Context::Infer:
    ok = kind == K::Let || kind == K::Assign || kind == K::Group ||
         kind == K::Assert || kind == K::Input || kind == K::Output;
    where = "an infer entry";
    break;
  case Context::Data:
    ok = kind == K::Assign;
    where = "a data declaration (it holds fields 'name: type = source(...)' "
            "and settings 'key = value')";
    break;
  case Context::Group:
    ok = kind == K::Assign;
    where = "a settings group (it holds settings 'key = value')";
    break;
  }
  if (ok)
    return true;
  std::string hint;
  if (kind == K::Param)
    hint = stmt.as<ParamStmt>()->buffer
               ? " (buffers are created inside blocks)"
               : " (parameters are created inside blocks)";
  else if (kind == K::Input || kind == K::Output)
    hint = " (inputs and outputs belong to infer entries)";
  else if (kind == K::Return)
    hint = " (only blocks return values)";
  std::string what = kind == K::Param && stmt.as<ParamStmt>()->buffer
                         ? "'buffer'"
                         : describeStmt(kind);
  errorAt(stmt.loc, what + " is not allowed in " +
                        where + hint);
  return false;
}

StmtPtr Parser::parseLet() {
  auto let = std::make_unique<LetStmt>(take().loc);
  std::string name;
  SourceLoc loc;
  if (at(TokenKind::LParen)) {
    const Token &open = take();
    let->destructure = true;
    do {
      if (!expectName(name, loc, "in 'let (...)'"))
        return nullptr;
      let->names.push_back(name);
      let->nameLocs.push_back(loc);
    } while (accept(TokenKind::Comma) && !at(TokenKind::RParen));
    if (!accept(TokenKind::RParen)) {
      error(tok(), "expected ')' to close the names started at " +
                       lineCol(open.loc) + ", found " + found());
      return nullptr;
    }
  } else {
    if (!expectName(name, loc, "after 'let'"))
      return nullptr;
    let->names.push_back(name);
    let->nameLocs.push_back(loc);
  }
  if (!expect(TokenKind::Equal, let->destructure ? "after 'let (...)'"
                                                 : "after 'let " + name + "'"))
    return nullptr;
  let->value = parseExpr();
  return let->value ? std::move(let) : nullptr;
}

StmtPtr Parser::parseAssign() {
  SourceLoc loc = tok().loc;
  std::string name(take().text);
  take(); // '='
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<AssignStmt>(loc, std::move(name), std::move(value));
}

StmtPtr Parser::parseReturn() {
  auto ret = std::make_unique<ReturnStmt>(take().loc);
  if (atStatementEnd())
    return ret;
  do {
    ExprPtr value = parseExpr();
    if (!value)
      return nullptr;
    ret->values.push_back(std::move(value));
  } while (accept(TokenKind::Comma));
  return ret;
}

StmtPtr Parser::parseFor(Context context) {
  auto loop = std::make_unique<ForStmt>(take().loc);
  if (!expectName(loop->var, loop->varLoc, "after 'for'") ||
      !expect(TokenKind::KwIn, "after 'for " + loop->var + "'"))
    return nullptr;
  loop->lo = parseExpr();
  if (!loop->lo ||
      !expect(TokenKind::DotDot, "in the range of the 'for' loop (for " +
                                     loop->var + " in lo .. hi)"))
    return nullptr;
  loop->hi = parseExpr();
  if (!loop->hi ||
      !parseBody(context, loop->body, "the body of the 'for' loop"))
    return nullptr;
  return loop;
}

StmtPtr Parser::parseIf(Context context) {
  NestingGuard guard(*this); // `else if` chains recurse
  if (!guard)
    return nullptr;
  auto stmt = std::make_unique<IfStmt>(take().loc);
  stmt->cond = parseExpr();
  if (!stmt->cond ||
      !parseBody(context, stmt->thenBody, "the body of the 'if'"))
    return nullptr;
  // `else` may start the next line.
  size_t afterThen = pos;
  skipNewlines();
  if (!accept(TokenKind::KwElse)) {
    pos = afterThen;
    return stmt;
  }
  skipNewlines();
  if (at(TokenKind::KwIf)) {
    StmtPtr nested = parseIf(context);
    if (!nested)
      return nullptr;
    stmt->elseBody.push_back(std::move(nested));
  } else if (!parseBody(context, stmt->elseBody, "the body of the 'else'")) {
    return nullptr;
  }
  return stmt;
}

StmtPtr Parser::parseAssert() {
  auto stmt = std::make_unique<AssertStmt>(take().loc);
  stmt->cond = parseExpr();
  if (!stmt->cond)
    return nullptr;
  if (accept(TokenKind::Comma)) {
    stmt->message = parseExpr();
    if (!stmt->message)
      return nullptr;
  }
  return stmt;
}

bool Parser::atBuffer() const {
  // `buffer` is a keyword only where a buffer statement starts, so that
  // programs keep it as a name elsewhere.
  if (!at(TokenKind::Identifier) || tok().text != "buffer" ||
      !peek(1).is(TokenKind::Identifier))
    return false;
  const Token &name = peek(1), &next = peek(2);
  return next.is(TokenKind::Colon) ||
         (next.is(TokenKind::LBrace) && next.loc.line == name.loc.line &&
          next.loc.col == name.loc.col + name.text.size());
}

StmtPtr Parser::parseParam() {
  auto param = std::make_unique<ParamStmt>(tok().loc);
  param->buffer = !at(TokenKind::KwParam);
  std::string keyword = param->buffer ? "buffer" : "param";
  std::string noun = param->buffer ? "buffer" : "parameter";
  take();
  if (atInterpolatedName()) {
    param->nameLoc = tok().loc;
    param->interpolated = parseInterpolatedName();
    if (!param->interpolated)
      return nullptr;
    param->name = formatExpr(*param->interpolated);
  } else if (!expectName(param->name, param->nameLoc,
                         "after '" + keyword + "'")) {
    return nullptr;
  }
  if (!expect(TokenKind::Colon,
              "after '" + keyword + " " + param->name + "' (a " + noun +
                  " is '" + keyword + " name: type = init(...)')") ||
      !parseType(param->type) ||
      !expect(TokenKind::Equal,
              "after the type of " + noun + " '" + param->name + "' (a " +
                  noun + " needs an initialiser, e.g. = zeros())"))
    return nullptr;
  param->init = parseExpr();
  return param->init ? std::move(param) : nullptr;
}

StmtPtr Parser::parseInput() {
  auto input = std::make_unique<InputStmt>(take().loc);
  SourceLoc nameLoc;
  if (!expectName(input->name, nameLoc, "after 'input'") ||
      !expect(TokenKind::Colon, "after 'input " + input->name +
                                    "' (an input is 'input name: type')") ||
      !parseType(input->type))
    return nullptr;
  return input;
}

StmtPtr Parser::parseOutput() {
  auto output = std::make_unique<OutputStmt>(take().loc);
  SourceLoc nameLoc;
  if (!expectName(output->name, nameLoc, "after 'output'") ||
      !expect(TokenKind::Equal, "after 'output " + output->name +
                                    "' (an output is 'output name = expr')"))
    return nullptr;
  output->value = parseExpr();
  return output->value ? std::move(output) : nullptr;
}

StmtPtr Parser::parseGroup() {
  auto group = std::make_unique<GroupStmt>(tok().loc, std::string(tok().text));
  take();
  if (!parseBody(Context::Group, group->body,
                 "settings group '" + group->name + "'"))
    return nullptr;
  return group;
}

} // namespace modelc
