// Parsing of expressions: precedence climbing over the binary operators of
// spec §5, then unary operators, postfix call/index/member/`as`, and atoms.
#include "frontend/Parser.h"

#include <algorithm>

namespace modelc {

using namespace ast;

namespace {

constexpr int kComparison = 3;

/// Binding strength of a binary operator token (0: not one).
int precedence(TokenKind kind) {
  switch (kind) {
  case TokenKind::PipePipe:
    return 1;
  case TokenKind::AmpAmp:
    return 2;
  case TokenKind::EqEq:
  case TokenKind::NotEq:
  case TokenKind::Less:
  case TokenKind::LessEq:
  case TokenKind::Greater:
  case TokenKind::GreaterEq:
    return kComparison;
  case TokenKind::Plus:
  case TokenKind::Minus:
    return 4;
  case TokenKind::Star:
  case TokenKind::Slash:
  case TokenKind::Percent:
  case TokenKind::At:
    return 5;
  default:
    return 0;
  }
}

BinaryExpr::Op binaryOp(TokenKind kind) {
  switch (kind) {
  case TokenKind::PipePipe:
    return BinaryExpr::Op::Or;
  case TokenKind::AmpAmp:
    return BinaryExpr::Op::And;
  case TokenKind::EqEq:
    return BinaryExpr::Op::Eq;
  case TokenKind::NotEq:
    return BinaryExpr::Op::Ne;
  case TokenKind::Less:
    return BinaryExpr::Op::Lt;
  case TokenKind::LessEq:
    return BinaryExpr::Op::Le;
  case TokenKind::Greater:
    return BinaryExpr::Op::Gt;
  case TokenKind::GreaterEq:
    return BinaryExpr::Op::Ge;
  case TokenKind::Plus:
    return BinaryExpr::Op::Add;
  case TokenKind::Minus:
    return BinaryExpr::Op::Sub;
  case TokenKind::Star:
    return BinaryExpr::Op::Mul;
  case TokenKind::Slash:
    return BinaryExpr::Op::Div;
  case TokenKind::Percent:
    return BinaryExpr::Op::Mod;
  default:
    return BinaryExpr::Op::MatMul;
  }
}

/// Tokens that cannot continue an unclosed bracket: report the missing
/// closer there instead of "expected an expression".
bool endsGroup(TokenKind kind) {
  return kind == TokenKind::RBrace || kind == TokenKind::Eof ||
         kind == TokenKind::Newline || kind == TokenKind::Semicolon;
}

} // namespace

ExprPtr Parser::parseExpr() { return parseBinary(1); }

bool Parser::setHeight(Expr &expr, unsigned childHeight, const Token &at) {
  expr.height = childHeight + 1;
  if (nesting + static_cast<int64_t>(expr.height) <= kMaxNesting)
    return true;
  error(at, expressionTooDeep());
  return false;
}

// Left-associative precedence climbing; comparisons do not chain (`a < b < c`
// means something else in Python than it would here, so it is an error).
ExprPtr Parser::parseBinary(int minPrecedence) {
  ExprPtr lhs = parseUnary();
  if (!lhs)
    return nullptr;
  for (;;) {
    int prec = precedence(tok().kind);
    if (prec == 0 || prec < minPrecedence)
      return lhs;
    const Token &op = take();
    ExprPtr rhs = parseBinary(prec + 1);
    if (!rhs)
      return nullptr;
    if (prec == kComparison && precedence(tok().kind) == kComparison) {
      error(tok(), "comparisons cannot be chained; combine them with '&&' "
                   "or use parentheses");
      return nullptr;
    }
    unsigned childHeight = std::max(lhs->height, rhs->height);
    lhs = std::make_unique<BinaryExpr>(op.loc, binaryOp(op.kind),
                                       std::move(lhs), std::move(rhs));
    if (!setHeight(*lhs, childHeight, op))
      return nullptr;
  }
}

ExprPtr Parser::parseUnary() {
  NestingGuard guard(*this, /*expression=*/true);
  if (!guard)
    return nullptr;
  if (at(TokenKind::Minus) || at(TokenKind::Bang)) {
    const Token &op = take();
    ExprPtr operand = parseUnary();
    if (!operand)
      return nullptr;
    auto kind =
        op.is(TokenKind::Minus) ? UnaryExpr::Op::Neg : UnaryExpr::Op::Not;
    unsigned childHeight = operand->height;
    auto unary = std::make_unique<UnaryExpr>(op.loc, kind, std::move(operand));
    if (!setHeight(*unary, childHeight, op))
      return nullptr;
    return unary;
  }
  return parsePostfix();
}

ExprPtr Parser::parsePostfix() {
  ExprPtr expr = parsePrimary();
  while (expr) {
    // Each suffix wraps the expression so far: a long chain is a deep tree.
    const Token &suffix = tok();
    if (at(TokenKind::LParen)) {
      expr = parseCall(std::move(expr));
    } else if (at(TokenKind::LBracket)) {
      expr = parseIndex(std::move(expr));
    } else if (at(TokenKind::Dot)) {
      unsigned childHeight = expr->height;
      take();
      if (!tok().isWord()) {
        error(tok(), "expected a field name after '.', found " + found());
        return nullptr;
      }
      SourceLoc loc = expr->loc;
      auto member = std::make_unique<MemberExpr>(loc, std::move(expr),
                                                 std::string(tok().text));
      member->fieldLoc = take().loc;
      if (!setHeight(*member, childHeight, suffix))
        return nullptr;
      expr = std::move(member);
    } else if (at(TokenKind::KwAs)) {
      unsigned childHeight = expr->height;
      take();
      SourceLoc loc = expr->loc;
      auto scoped = std::make_unique<AsExpr>(loc, std::move(expr));
      if (!parsePath(scoped->scope, "after 'as'"))
        return nullptr;
      for (const PathComponent &c : scoped->scope)
        if (c.index)
          childHeight = std::max(childHeight, c.index->height);
      if (!setHeight(*scoped, childHeight, suffix))
        return nullptr;
      expr = std::move(scoped);
    } else {
      break;
    }
  }
  return expr;
}

ExprPtr Parser::parsePrimary() {
  const Token &token = tok();
  switch (token.kind) {
  case TokenKind::Int:
    take();
    return std::make_unique<IntExpr>(token.loc, token.intValue);
  case TokenKind::Float:
    take();
    return std::make_unique<FloatExpr>(token.loc, token.floatValue);
  case TokenKind::String:
    take();
    return std::make_unique<StringExpr>(token.loc, token.stringValue);
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
    take();
    return std::make_unique<BoolExpr>(token.loc, token.is(TokenKind::KwTrue));
  case TokenKind::Identifier:
    if (atInterpolatedName())
      return parseInterpolatedName();
    take();
    return std::make_unique<NameExpr>(token.loc, std::string(token.text));
  case TokenKind::LParen:
    return parseParenthesised();
  case TokenKind::LBracket:
    return parseList();
  case TokenKind::Amp:
    return parseParamRef();
  default:
    error(token, "expected an expression, found " + found());
    return nullptr;
  }
}

namespace {
/// `next` is written right after `token`, with no space between.
bool adjacent(const Token &token, const Token &next) {
  return next.loc.line == token.loc.line &&
         next.loc.col == token.loc.col + token.text.size();
}
} // namespace

bool Parser::atInterpolatedName() const {
  if (!at(TokenKind::Identifier) || !peek(1).is(TokenKind::LBrace) ||
      !adjacent(tok(), peek(1)))
    return false;
  // `if flag{ return x }` and `if flag{` at a line's end open a block.
  const Token &first = peek(2);
  return !first.is(TokenKind::Newline) && !first.is(TokenKind::RBrace) &&
         (!first.isKeyword() || first.is(TokenKind::KwTrue) ||
          first.is(TokenKind::KwFalse));
}

ExprPtr Parser::parseInterpolatedName() {
  Token last = take();
  auto name = std::make_unique<InterpolatedNameExpr>(last.loc);
  name->texts.emplace_back(last.text);
  unsigned childHeight = 0;
  while (at(TokenKind::LBrace) && adjacent(last, tok())) {
    const Token open = take();
    auto unclosed = [&] {
      error(tok(), "expected a part of a name and '}' after the '{' at " +
                       std::to_string(open.loc.line) + ":" +
                       std::to_string(open.loc.col) + ", found " + found() +
                       " (a name such as weight_ih_l{i} has no space before "
                       "'{'; a block or group needs one)");
      return nullptr;
    };
    ExprPtr part = parseExpr();
    if (!part)
      return nullptr;
    childHeight = std::max(childHeight, part->height);
    if (!at(TokenKind::RBrace))
      return unclosed();
    last = take();
    std::string text;
    if (at(TokenKind::Identifier) && adjacent(last, tok())) {
      last = take();
      text = std::string(last.text);
    }
    name->parts.push_back(std::move(part));
    name->texts.push_back(std::move(text));
  }
  if (!setHeight(*name, childHeight, last))
    return nullptr;
  return name;
}

ExprPtr Parser::parseParenthesised() {
  const Token &open = take();
  if (endsGroup(tok().kind) || at(TokenKind::RParen)) {
    error(tok(), "expected an expression after '(', found " + found());
    return nullptr;
  }
  ExprPtr inner = parseExpr();
  if (!inner)
    return nullptr;
  if (!accept(TokenKind::RParen)) {
    std::string hint =
        at(TokenKind::Comma) ? " (tuples are not values in this language)" : "";
    error(tok(), "expected ')' to close the '(' at " + lineCol(open.loc) +
                     ", found " + found() + hint);
    return nullptr;
  }
  return inner;
}

ExprPtr Parser::parseCall(ExprPtr callee) {
  const Token &open = take();
  unsigned childHeight = callee->height;
  auto call = std::make_unique<CallExpr>(callee->loc, std::move(callee));
  const std::string where = "the call started at " + lineCol(open.loc);
  bool sawKeyword = false;
  while (!at(TokenKind::RParen)) {
    if (endsGroup(tok().kind)) {
      error(tok(), "expected ')' to close " + where + ", found " + found());
      return nullptr;
    }
    if (atAssignment()) {
      KeywordArg kwarg;
      kwarg.loc = tok().loc;
      kwarg.name = std::string(take().text);
      take(); // '='
      kwarg.value = parseExpr();
      if (!kwarg.value)
        return nullptr;
      childHeight = std::max(childHeight, kwarg.value->height);
      call->kwargs.push_back(std::move(kwarg));
      sawKeyword = true;
    } else {
      ExprPtr arg = parseExpr();
      if (!arg)
        return nullptr;
      childHeight = std::max(childHeight, arg->height);
      if (sawKeyword)
        errorAt(arg->loc, "positional argument after a keyword argument "
                          "(positional arguments come first)");
      call->args.push_back(std::move(arg));
    }
    if (accept(TokenKind::Comma))
      continue;
    if (!at(TokenKind::RParen)) {
      error(tok(), (endsGroup(tok().kind) ? "expected ')' to close "
                                          : "expected ',' or ')' in ") +
                       where + ", found " + found());
      return nullptr;
    }
  }
  take();
  if (!setHeight(*call, childHeight, open))
    return nullptr;
  return call;
}

ExprPtr Parser::parseIndex(ExprPtr base) {
  const Token &open = take();
  unsigned childHeight = base->height;
  auto index = std::make_unique<IndexExpr>(base->loc, std::move(base));
  const std::string where = "the index started at " + lineCol(open.loc);
  if (at(TokenKind::RBracket)) {
    error(tok(), "expected an index or slice inside '[]'");
    return nullptr;
  }
  while (!at(TokenKind::RBracket)) {
    if (endsGroup(tok().kind)) {
      error(tok(), "expected ']' to close " + where + ", found " + found());
      return nullptr;
    }
    IndexItem item;
    if (!parseIndexItem(item))
      return nullptr;
    for (const ExprPtr *part : {&item.index, &item.lo, &item.hi, &item.step})
      if (*part)
        childHeight = std::max(childHeight, (*part)->height);
    index->items.push_back(std::move(item));
    if (accept(TokenKind::Comma))
      continue;
    if (!at(TokenKind::RBracket)) {
      error(tok(), (endsGroup(tok().kind) ? "expected ']' to close "
                                          : "expected ',' or ']' in ") +
                       where + ", found " + found());
      return nullptr;
    }
  }
  take();
  if (!setHeight(*index, childHeight, open))
    return nullptr;
  return index;
}

// `e`, `...`, or a slice `lo:hi:step` with every part optional.
bool Parser::parseIndexItem(IndexItem &item) {
  item.loc = tok().loc;
  if (accept(TokenKind::Ellipsis)) {
    item.kind = IndexItem::Kind::Ellipsis;
    return true;
  }
  auto partEnds = [&] {
    return at(TokenKind::Colon) || at(TokenKind::Comma) ||
           at(TokenKind::RBracket);
  };
  ExprPtr first;
  if (!at(TokenKind::Colon)) {
    first = parseExpr();
    if (!first)
      return false;
  }
  if (!accept(TokenKind::Colon)) {
    item.kind = IndexItem::Kind::Single;
    item.index = std::move(first);
    return true;
  }
  item.kind = IndexItem::Kind::Slice;
  item.lo = std::move(first);
  if (!partEnds() && !(item.hi = parseExpr()))
    return false;
  if (accept(TokenKind::Colon) && !partEnds() && !(item.step = parseExpr()))
    return false;
  return true;
}

ExprPtr Parser::parseList() {
  const Token &open = take();
  auto list = std::make_unique<ListExpr>(open.loc);
  unsigned childHeight = 0;
  while (!at(TokenKind::RBracket)) {
    if (endsGroup(tok().kind)) {
      error(tok(), "expected ']' to close the list started at " +
                       lineCol(open.loc) + ", found " + found());
      return nullptr;
    }
    ExprPtr element = parseExpr();
    if (!element)
      return nullptr;
    childHeight = std::max(childHeight, element->height);
    list->elements.push_back(std::move(element));
    if (accept(TokenKind::Comma))
      continue;
    if (!at(TokenKind::RBracket)) {
      error(tok(),
            std::string(endsGroup(tok().kind) ? "expected ']' to close"
                                              : "expected ',' or ']' in") +
                " the list started at " + lineCol(open.loc) + ", found " +
                found());
      return nullptr;
    }
  }
  take();
  if (!setHeight(*list, childHeight, open))
    return nullptr;
  return list;
}

ExprPtr Parser::parseParamRef() {
  const Token &amp = take();
  auto ref = std::make_unique<ParamRefExpr>(amp.loc);
  if (!parsePath(ref->path, "after '&'"))
    return nullptr;
  unsigned childHeight = 0;
  for (const PathComponent &c : ref->path)
    if (c.index)
      childHeight = std::max(childHeight, c.index->height);
  if (!setHeight(*ref, childHeight, amp))
    return nullptr;
  return ref;
}

// `a.b[i].0.c`: names (any word), integers, and names with one index. A
// component pair such as `0.5` arrives lexed as one float and is split.
bool Parser::parsePath(std::vector<PathComponent> &path, const char *after) {
  for (;;) {
    PathComponent component;
    component.loc = tok().loc;
    if (tok().isWord()) {
      component.name = std::string(take().text);
      if (at(TokenKind::LBracket)) {
        const Token &open = take();
        component.index = parseExpr();
        if (!component.index)
          return false;
        if (!accept(TokenKind::RBracket)) {
          error(tok(), "expected ']' to close the index started at " +
                           lineCol(open.loc) + ", found " + found());
          return false;
        }
      }
    } else if (at(TokenKind::Int)) {
      component.name = std::to_string(take().intValue);
    } else if (at(TokenKind::Float) &&
               tok().text.find_first_not_of("0123456789.") ==
                   std::string_view::npos &&
               tok().text.back() != '.') {
      // Spelled like the integers it stands for: "007" names "7".
      auto integer = [](std::string_view digits) {
        size_t nonZero = digits.find_first_not_of('0');
        return std::string(
            nonZero == std::string_view::npos ? "0" : digits.substr(nonZero));
      };
      std::string_view text = tok().text;
      size_t dot = text.find('.');
      component.name = integer(text.substr(0, dot));
      PathComponent second;
      second.loc = component.loc;
      second.loc.col += static_cast<uint32_t>(dot + 1);
      second.name = integer(text.substr(dot + 1));
      take();
      path.push_back(std::move(component));
      component = std::move(second);
    } else {
      error(tok(), std::string("expected a scope name ") +
                       (path.empty() ? after : "after '.'") + ", found " +
                       found());
      return false;
    }
    path.push_back(std::move(component));
    if (!accept(TokenKind::Dot))
      return true;
  }
}

} // namespace modelc
