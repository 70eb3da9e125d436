// Shared by the parser tests: a fixture that parses in-memory sources and a
// fully parenthesised rendering of expressions that shows the tree's shape.
#pragma once

#include "frontend/ASTDump.h"
#include "frontend/Frontend.h"
#include "frontend/Parser.h"

#include <gtest/gtest.h>

#include <sstream>

namespace modelc::test {

using namespace modelc::ast;

inline const char *opName(BinaryExpr::Op op) {
  static const char *const kNames[] = {"||", "&&", "==", "!=", "<", "<=", ">",
                                       ">=", "+",  "-",  "*",  "/", "%",  "@"};
  return kNames[static_cast<int>(op)];
}

/// A fully parenthesised rendering that shows the tree's shape.
inline std::string sexpr(const Expr &e) {
  switch (e.kind) {
  case Expr::Kind::Unary: {
    const auto *u = e.as<UnaryExpr>();
    return std::string(u->op == UnaryExpr::Op::Neg ? "(neg " : "(not ") +
           sexpr(*u->operand) + ")";
  }
  case Expr::Kind::Binary: {
    const auto *b = e.as<BinaryExpr>();
    return std::string("(") + opName(b->op) + " " + sexpr(*b->lhs) + " " +
           sexpr(*b->rhs) + ")";
  }
  case Expr::Kind::Call: {
    const auto *c = e.as<CallExpr>();
    std::string s = "(call " + sexpr(*c->callee);
    for (const ExprPtr &a : c->args)
      s += " " + sexpr(*a);
    for (const KeywordArg &k : c->kwargs)
      s += " " + k.name + "=" + sexpr(*k.value);
    return s + ")";
  }
  case Expr::Kind::Member: {
    const auto *m = e.as<MemberExpr>();
    return "(. " + sexpr(*m->base) + " " + m->field + ")";
  }
  case Expr::Kind::Index: {
    const auto *x = e.as<IndexExpr>();
    std::string s = "(index " + sexpr(*x->base);
    for (const IndexItem &item : x->items) {
      if (item.kind == IndexItem::Kind::Ellipsis)
        s += " ...";
      else if (item.kind == IndexItem::Kind::Single)
        s += " " + sexpr(*item.index);
      else
        s += " " + (item.lo ? sexpr(*item.lo) : "_") + ":" +
             (item.hi ? sexpr(*item.hi) : "_") + ":" +
             (item.step ? sexpr(*item.step) : "_");
    }
    return s + ")";
  }
  case Expr::Kind::List: {
    std::string s = "[";
    for (const ExprPtr &el : e.as<ListExpr>()->elements)
      s += (s.size() > 1 ? " " : "") + sexpr(*el);
    return s + "]";
  }
  case Expr::Kind::As: {
    const auto *a = e.as<AsExpr>();
    std::string path;
    for (const PathComponent &c : a->scope)
      path += (path.empty() ? "" : ".") + c.name +
              (c.index ? "[" + sexpr(*c.index) + "]" : "");
    return "(as " + sexpr(*a->call) + " " + path + ")";
  }
  default:
    return formatExpr(e);
  }
}

struct ParserTest : ::testing::Test {
  SourceManager sm;
  std::ostringstream out;
  DiagnosticEngine diag{sm, out};

  std::unique_ptr<Module> parse(const std::string &source) {
    return parseFile(sm.addBuffer("t.mdl", source), sm, diag);
  }
  /// The expression's shape, or "<error>".
  std::string expr(const std::string &source) {
    ExprPtr e = Parser(sm.addBuffer("e.mdl", source), sm, diag)
                    .parseStandaloneExpression();
    return e ? sexpr(*e) : "<error>";
  }
  /// The body of `block f() { <source> }`.
  const StmtList &blockBody(const std::string &source) {
    module = parse("block f() {\n" + source + "\n}\n");
    EXPECT_TRUE(module) << out.str();
    static const StmtList empty;
    return module ? module->blocks.at(0).body : empty;
  }
  std::unique_ptr<Module> module;
};

} // namespace modelc::test
