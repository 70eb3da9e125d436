// Parser: expression precedence and forms, every statement, and the newline
// rule as the parser sees it. Declarations and types are tested in
// ParserDeclTest.cpp, error recovery in ParserRecoveryTest.cpp.
#include "ParserTestSupport.h"

using namespace modelc;
using namespace modelc::ast;
using modelc::test::ParserTest;
using modelc::test::sexpr;

namespace {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

TEST_F(ParserTest, Literals) {
  EXPECT_EQ(expr("42"), "42");
  EXPECT_EQ(expr("1e-3"), "0.001");
  EXPECT_EQ(expr("\"a\\nb\""), "\"a\\nb\"");
  EXPECT_EQ(expr("true"), "true");
  EXPECT_EQ(expr("false"), "false");
  EXPECT_EQ(expr("x"), "x");
}

TEST_F(ParserTest, Precedence) {
  EXPECT_EQ(expr("a || b && c"), "(|| a (&& b c))");
  EXPECT_EQ(expr("a && b == c"), "(&& a (== b c))");
  EXPECT_EQ(expr("a < b + c"), "(< a (+ b c))");
  EXPECT_EQ(expr("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(expr("a - b @ c % d"), "(- a (% (@ b c) d))");
  EXPECT_EQ(expr("-a * b"), "(* (neg a) b)");
  EXPECT_EQ(expr("!a && b"), "(&& (not a) b)");
  EXPECT_EQ(expr("(a + b) * c"), "(* (+ a b) c)");
  EXPECT_EQ(expr("- - a"), "(neg (neg a))");
}

TEST_F(ParserTest, LeftAssociative) {
  EXPECT_EQ(expr("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(expr("a / b * c"), "(* (/ a b) c)");
  EXPECT_EQ(expr("a || b || c"), "(|| (|| a b) c)");
}

TEST_F(ParserTest, AllComparisons) {
  EXPECT_EQ(expr("a == b"), "(== a b)");
  EXPECT_EQ(expr("a != b"), "(!= a b)");
  EXPECT_EQ(expr("a <= b"), "(<= a b)");
  EXPECT_EQ(expr("a > b"), "(> a b)");
  EXPECT_EQ(expr("a >= b"), "(>= a b)");
}

TEST_F(ParserTest, ChainedComparisonIsAnError) {
  EXPECT_EQ(expr("a < b < c"), "<error>");
  EXPECT_NE(out.str().find("comparisons cannot be chained"), std::string::npos);
  EXPECT_EQ(expr("(a < b) == c"), "(== (< a b) c)");
}

TEST_F(ParserTest, PostfixBindsTighterThanUnary) {
  EXPECT_EQ(expr("-x[0]"), "(neg (index x 0))");
  EXPECT_EQ(expr("-f(x)"), "(neg (call f x))");
  EXPECT_EQ(expr("-f(x) as a"), "(neg (as (call f x) a))");
  EXPECT_EQ(expr("a.b.c"), "(. (. a b) c)");
  EXPECT_EQ(expr("f(x)(y)[0].z"), "(. (index (call (call f x) y) 0) z)");
}

TEST_F(ParserTest, Calls) {
  EXPECT_EQ(expr("f()"), "(call f)");
  EXPECT_EQ(expr("nn.linear(x, 10)"), "(call (. nn linear) x 10)");
  EXPECT_EQ(expr("softmax(x, axis = -1)"), "(call softmax x axis=(neg 1))");
  EXPECT_EQ(expr("adamw(lr = 1e-3, weight_decay = 0.01)"),
            "(call adamw lr=0.001 weight_decay=0.01)");
  EXPECT_EQ(expr("f(a, b,)"), "(call f a b)");
  EXPECT_EQ(expr("f(data = x)"), "(call f data=x)");
}

TEST_F(ParserTest, CallLocations) {
  ExprPtr e = Parser(sm.addBuffer("e.mdl", "  f(x, k = 1)"), sm, diag)
                  .parseStandaloneExpression();
  ASSERT_TRUE(e);
  const auto *call = e->as<CallExpr>();
  ASSERT_TRUE(call);
  EXPECT_EQ(call->loc.col, 3u);
  EXPECT_EQ(call->kwargs[0].loc.col, 8u);
}

TEST_F(ParserTest, PositionalAfterKeywordIsAnError) {
  EXPECT_EQ(expr("f(a, k = v, b)"), "<error>");
  EXPECT_NE(out.str().find("e.mdl:1:13: error: positional argument after a "
                           "keyword argument"),
            std::string::npos);
}

TEST_F(ParserTest, Indexing) {
  EXPECT_EQ(expr("x[:, 0:T]"), "(index x _:_:_ 0:T:_)");
  EXPECT_EQ(expr("x[..., -1]"), "(index x ... (neg 1))");
  EXPECT_EQ(expr("x[::2]"), "(index x _:_:2)");
  EXPECT_EQ(expr("x[1:]"), "(index x 1:_:_)");
  EXPECT_EQ(expr("x[:n - 1]"), "(index x _:(- n 1):_)");
  EXPECT_EQ(expr("x[a:b:c]"), "(index x a:b:c)");
  EXPECT_EQ(expr("x[i, j]"), "(index x i j)");
  EXPECT_EQ(expr("x[]"), "<error>");
}

TEST_F(ParserTest, Lists) {
  EXPECT_EQ(expr("[]"), "[]");
  EXPECT_EQ(expr("[B, 784]"), "[B 784]");
  EXPECT_EQ(expr("[0.9, 0.999,]"), "[0.9 0.999]");
  EXPECT_EQ(expr("[[1], [2, 3]]"), "[[1] [2 3]]");
}

TEST_F(ParserTest, AsScopes) {
  EXPECT_EQ(expr("nn.linear(x, 10) as fc1"),
            "(as (call (. nn linear) x 10) fc1)");
  EXPECT_EQ(expr("f(x) as blocks[i]"), "(as (call f x) blocks[i])");
  EXPECT_EQ(expr("f(x) as transformer.h[i + 1]"),
            "(as (call f x) transformer.h[(+ i 1)])");
  EXPECT_EQ(expr("relu(f(x) as fc1)"), "(call relu (as (call f x) fc1))");
  EXPECT_EQ(expr("f(x) as"), "<error>");
}

TEST_F(ParserTest, ParamRefs) {
  EXPECT_EQ(expr("&wte"), "&wte");
  EXPECT_EQ(expr("&h.0.attn.w"), "&h.0.attn.w");
  EXPECT_EQ(expr("&h[i].attn"), "&h[i].attn");
  // `0.5` lexes as one float; in a path it is two components.
  ExprPtr e = Parser(sm.addBuffer("e.mdl", "&h.0.5.w"), sm, diag)
                  .parseStandaloneExpression();
  ASSERT_TRUE(e);
  const auto *ref = e->as<ParamRefExpr>();
  ASSERT_TRUE(ref);
  ASSERT_EQ(ref->path.size(), 4u);
  EXPECT_EQ(ref->path[1].name, "0");
  EXPECT_EQ(ref->path[2].name, "5");
  EXPECT_EQ(ref->path[2].loc.col, 6u);
  EXPECT_EQ(expr("&"), "<error>");
}

TEST_F(ParserTest, ExpressionErrors) {
  EXPECT_EQ(expr("(a, b)"), "<error>");
  EXPECT_NE(out.str().find("tuples are not values"), std::string::npos);
  EXPECT_EQ(expr("a +"), "<error>");
  EXPECT_EQ(expr("f(a b)"), "<error>");
  EXPECT_NE(out.str().find("expected ',' or ')' in the call started at 1:2, "
                           "found identifier 'b'"),
            std::string::npos);
  EXPECT_EQ(expr("x.1"), "<error>");
  EXPECT_EQ(expr("a b"), "<error>");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

TEST_F(ParserTest, Let) {
  const StmtList &body = blockBody("let h = relu(x)");
  ASSERT_EQ(body.size(), 1u);
  const auto *let = body[0]->as<LetStmt>();
  ASSERT_TRUE(let);
  EXPECT_FALSE(let->destructure);
  EXPECT_EQ(let->names, std::vector<std::string>{"h"});
  EXPECT_EQ(let->nameLocs[0].col, 5u);
  EXPECT_EQ(sexpr(*let->value), "(call relu x)");
}

TEST_F(ParserTest, LetDestructure) {
  const StmtList &body = blockBody("let (q, k, v) = split(x, 3, axis = -1)");
  const auto *let = body.at(0)->as<LetStmt>();
  ASSERT_TRUE(let);
  EXPECT_TRUE(let->destructure);
  EXPECT_EQ(let->names, (std::vector<std::string>{"q", "k", "v"}));
  EXPECT_EQ(let->nameLocs[2].col, 12u);
}

TEST_F(ParserTest, AssignAndReturn) {
  const StmtList &body = blockBody("x = x + 1\nreturn x, y\nreturn");
  ASSERT_EQ(body.size(), 3u);
  const auto *assign = body[0]->as<AssignStmt>();
  ASSERT_TRUE(assign);
  EXPECT_EQ(assign->name, "x");
  EXPECT_EQ(body[1]->as<ReturnStmt>()->values.size(), 2u);
  EXPECT_TRUE(body[2]->as<ReturnStmt>()->values.empty());
}

TEST_F(ParserTest, For) {
  const StmtList &body =
      blockBody("for i in 0 .. n {\n  x = f(x) as blocks[i]\n}");
  const auto *loop = body.at(0)->as<ForStmt>();
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->var, "i");
  EXPECT_EQ(sexpr(*loop->lo), "0");
  EXPECT_EQ(sexpr(*loop->hi), "n");
  EXPECT_EQ(loop->body.size(), 1u);
  EXPECT_TRUE(blockBody("for i in 0..L - 1 { }").at(0)->as<ForStmt>());
}

TEST_F(ParserTest, IfElseChains) {
  const StmtList &body = blockBody("if a { x = 1 } else if b { x = 2 }\n"
                                   "else { x = 3 }");
  ASSERT_EQ(body.size(), 1u);
  const auto *outer = body[0]->as<IfStmt>();
  ASSERT_TRUE(outer);
  EXPECT_EQ(outer->thenBody.size(), 1u);
  ASSERT_EQ(outer->elseBody.size(), 1u);
  const auto *inner = outer->elseBody[0]->as<IfStmt>();
  ASSERT_TRUE(inner);
  EXPECT_EQ(sexpr(*inner->cond), "b");
  EXPECT_EQ(inner->elseBody.size(), 1u);
}

TEST_F(ParserTest, IfWithoutElse) {
  const StmtList &body = blockBody("if causal {\n  x = 1\n}\nx = 2");
  ASSERT_EQ(body.size(), 2u);
  EXPECT_TRUE(body[0]->as<IfStmt>()->elseBody.empty());
}

TEST_F(ParserTest, Assert) {
  const StmtList &body =
      blockBody("assert n % h == 0, \"heads must divide n\"\nassert ok");
  const auto *a = body.at(0)->as<AssertStmt>();
  ASSERT_TRUE(a);
  EXPECT_EQ(sexpr(*a->cond), "(== (% n h) 0)");
  EXPECT_EQ(a->message->as<StringExpr>()->value, "heads must divide n");
  EXPECT_FALSE(body.at(1)->as<AssertStmt>()->message);
}

TEST_F(ParserTest, Param) {
  const StmtList &body =
      blockBody("param weight: f32[out, n] = kaiming_uniform(n)");
  const auto *p = body.at(0)->as<ParamStmt>();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "weight");
  EXPECT_EQ(p->nameLoc.col, 7u);
  EXPECT_EQ(formatType(p->type), "f32[out, n]");
  EXPECT_EQ(sexpr(*p->init), "(call kaiming_uniform n)");
}

TEST_F(ParserTest, ExpressionStatement) {
  const auto *s = blockBody("f(x) as probe").at(0)->as<ExprStmt>();
  ASSERT_TRUE(s);
  EXPECT_EQ(sexpr(*s->value), "(as (call f x) probe)");
}

TEST_F(ParserTest, SemicolonsSeparateStatements) {
  EXPECT_EQ(blockBody("let a = 1; let b = 2;; a = b").size(), 3u);
}

TEST_F(ParserTest, ContinuationLines) {
  const StmtList &body = blockBody("let y = f(x,\n"
                                   "          axis = -1)\n"
                                   "let z = a +\n"
                                   "        b\n"
                                   "let w = [1,\n"
                                   "  2]");
  ASSERT_EQ(body.size(), 3u);
  EXPECT_EQ(sexpr(*body[1]->as<LetStmt>()->value), "(+ a b)");
}

} // namespace
