// Parsing of top-level declarations (spec §3, §7, §8) and of types (§4).
#include "frontend/Parser.h"

namespace modelc {

void Parser::parseTopLevel(ast::Module &module) {
  bool ok = false;
  switch (tok().kind) {
  case TokenKind::KwImport:
    ok = parseImport(module);
    break;
  case TokenKind::KwConst:
    ok = parseConst(module);
    break;
  case TokenKind::KwBlock:
    ok = parseBlock(module);
    break;
  case TokenKind::KwData:
    ok = parseData(module);
    break;
  case TokenKind::KwTrain:
  case TokenKind::KwInfer:
    ok = parseEntry(module);
    break;
  case TokenKind::RBrace:
    error(tok(), "unexpected '}' at top level (no '{' is open)");
    take();
    return;
  default:
    if (tok().isKeyword())
      error(tok(), "unexpected " + found() + " at top level");
    else
      error(tok(), "expected a declaration (import, const, block, data, "
                   "train or infer), found " +
                       found());
    break;
  }
  if (!ok)
    synchronizeTopLevel();
}

namespace {
/// Spelled like an identifier (keywords aside).
bool isValidName(const std::string &name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
    return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}
} // namespace

bool Parser::parseImport(ast::Module &module) {
  ast::ImportDecl import;
  import.loc = take().loc;
  if (!at(TokenKind::String)) {
    error(tok(), "expected a quoted path after 'import' (e.g. import \"nn\"), "
                 "found " +
                     found());
    return false;
  }
  const Token &path = take();
  import.path = path.stringValue;
  // The alias is the file's stem: "nn" -> nn, "models/gpt.mdl" -> gpt.
  std::string stem = import.path.substr(import.path.find_last_of('/') + 1);
  const std::string ext = ".mdl";
  if (stem.size() > ext.size() &&
      stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0)
    stem.resize(stem.size() - ext.size());
  if (import.path.empty()) {
    error(path, "the import path is empty");
    return false;
  }
  if (!isValidName(stem) || isKeywordSpelling(stem)) {
    error(path, "cannot import \"" + import.path + "\": its name '" + stem +
                    "' is not a valid identifier");
    return false;
  }
  import.alias = stem;
  if (!atStatementEnd()) {
    error(tok(), "expected end of line after the import, found " + found());
    return false;
  }
  module.imports.push_back(std::move(import));
  return true;
}

bool Parser::parseConst(ast::Module &module) {
  ast::ConstDecl decl;
  decl.loc = take().loc;
  SourceLoc nameLoc;
  if (!expectName(decl.name, nameLoc, "after 'const'") ||
      !expect(TokenKind::Equal, "after 'const " + decl.name + "'"))
    return false;
  decl.value = parseExpr();
  if (!decl.value)
    return false;
  if (!atStatementEnd()) {
    error(tok(), "expected end of line after the const, found " + found());
    return false;
  }
  module.consts.push_back(std::move(decl));
  return true;
}

bool Parser::parseBlock(ast::Module &module) {
  ast::BlockDecl block;
  block.loc = take().loc;
  SourceLoc nameLoc;
  bool header =
      expectName(block.name, nameLoc, "after 'block'") && parseBlockArgs(block);
  // The result types may begin the next line: `block f(x: T)` then
  // `    -> U {`.
  if (header && at(TokenKind::Newline)) {
    size_t ahead = 1;
    while (peek(ahead).kind == TokenKind::Newline)
      ++ahead;
    if (peek(ahead).kind == TokenKind::Arrow)
      skipNewlines();
  }
  if (header && accept(TokenKind::Arrow)) {
    if (at(TokenKind::LParen)) {
      const Token &open = take();
      do {
        block.results.emplace_back();
        header = parseType(block.results.back());
      } while (header && accept(TokenKind::Comma) && !at(TokenKind::RParen));
      if (header && !accept(TokenKind::RParen)) {
        error(tok(), "expected ')' to close the result types started at " +
                         lineCol(open.loc) + ", found " + found());
        header = false;
      }
    } else {
      block.results.emplace_back();
      header = parseType(block.results.back());
    }
  }
  if (!header && !synchronizeHeader())
    return false;
  bool body = parseBody(Context::Block, block.body,
                        "the body of block '" + block.name + "'");
  if (!header || !body)
    return false;
  module.blocks.push_back(std::move(block));
  return true;
}

bool Parser::parseBlockArgs(ast::BlockDecl &block) {
  if (!at(TokenKind::LParen)) {
    error(tok(),
          "expected '(' after 'block " + block.name + "', found " + found());
    return false;
  }
  const Token &open = take();
  while (!at(TokenKind::RParen)) {
    ast::BlockArg arg;
    if (!expectName(arg.name, arg.loc, "for a block argument") ||
        !expect(TokenKind::Colon, "after argument '" + arg.name +
                                      "' (arguments are 'name: type')") ||
        !parseType(arg.type))
      return false;
    if (accept(TokenKind::Equal)) {
      arg.defaultValue = parseExpr();
      if (!arg.defaultValue)
        return false;
    }
    block.args.push_back(std::move(arg));
    if (accept(TokenKind::Comma))
      continue;
    if (!at(TokenKind::RParen)) {
      error(tok(), "expected ',' or ')' to close the arguments started at " +
                       lineCol(open.loc) + ", found " + found());
      return false;
    }
  }
  take();
  return true;
}

bool Parser::parseData(ast::Module &module) {
  ast::DataDecl data;
  data.loc = take().loc;
  SourceLoc nameLoc;
  bool header = expectName(data.name, nameLoc, "after 'data'");
  if (!header && !synchronizeHeader())
    return false;
  bool body = parseBody(Context::Data, data.settings,
                        "the body of data '" + data.name + "'", &data);
  if (!header || !body)
    return false;
  module.data.push_back(std::move(data));
  return true;
}

bool Parser::parseDataField(ast::DataDecl &data) {
  ast::DataField field;
  field.loc = tok().loc;
  field.name = std::string(take().text);
  take(); // ':'
  if (!parseType(field.type) ||
      !expect(TokenKind::Equal,
              "after the type of field '" + field.name +
                  "' (a field is 'name: type = source(...)')"))
    return false;
  field.source = parseExpr();
  if (!field.source)
    return false;
  if (!atStatementEnd()) {
    error(tok(),
          "expected end of statement (a newline or ';'), found " + found());
    return false;
  }
  data.fields.push_back(std::move(field));
  return true;
}

bool Parser::parseEntry(ast::Module &module) {
  ast::EntryDecl entry;
  bool train = at(TokenKind::KwTrain);
  entry.kind =
      train ? ast::EntryDecl::Kind::Train : ast::EntryDecl::Kind::Infer;
  entry.loc = take().loc;
  SourceLoc nameLoc;
  const char *keyword = train ? "train" : "infer";
  bool header =
      expectName(entry.name, nameLoc, std::string("after '") + keyword + "'");
  if (!header && !synchronizeHeader())
    return false;
  bool body = parseBody(train ? Context::Train : Context::Infer, entry.body,
                        "the body of " + std::string(keyword) + " '" +
                            entry.name + "'");
  if (!header || !body)
    return false;
  module.entries.push_back(std::move(entry));
  return true;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

namespace {
bool isElementType(std::string_view name) {
  for (const char *dtype :
       {"f32", "f16", "bf16", "f64", "i32", "i64", "u8", "u16", "bool"})
    if (name == dtype)
      return true;
  return false;
}
bool isScalarKind(std::string_view name) {
  return name == "int" || name == "float" || name == "bool" || name == "string";
}
} // namespace

bool Parser::parseType(ast::TypeExpr &type) {
  const Token &name = tok();
  if (!name.is(TokenKind::Identifier) ||
      (!isElementType(name.text) && !isScalarKind(name.text))) {
    error(name, "expected a type (a tensor type such as f32[b, n], or int, "
                "float, bool, string), found " +
                    found());
    return false;
  }
  type.loc = name.loc;
  type.name = std::string(take().text);
  if (at(TokenKind::LBracket)) {
    if (!isElementType(type.name)) {
      error(tok(), "'" + type.name +
                       "' is a scalar kind and takes no dimensions (tensor "
                       "types start with an element type such as f32)");
      return false;
    }
    return parseDims(type);
  }
  if (!isScalarKind(type.name)) {
    error(tok(), "expected '[' after element type '" + type.name +
                     "' (a tensor type lists its dimensions: " + type.name +
                     "[n], or " + type.name + "[] for a scalar), found " +
                     found());
    return false;
  }
  return true;
}

bool Parser::parseDims(ast::TypeExpr &type) {
  type.isTensor = true;
  const Token &open = take();
  while (!at(TokenKind::RBracket)) {
    ast::DimExpr dim;
    dim.loc = tok().loc;
    if (accept(TokenKind::Star)) {
      dim.variadic = true;
      SourceLoc nameLoc;
      if (!expectName(dim.variadicName, nameLoc, "after '*' in a dimension"))
        return false;
    } else {
      dim.size = parseExpr();
      if (!dim.size)
        return false;
    }
    type.dims.push_back(std::move(dim));
    if (accept(TokenKind::Comma))
      continue;
    if (!at(TokenKind::RBracket)) {
      error(tok(), "expected ',' or ']' to close the dimensions started at " +
                       lineCol(open.loc) + ", found " + found());
      return false;
    }
  }
  take();
  return true;
}

} // namespace modelc
