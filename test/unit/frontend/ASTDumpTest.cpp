// ASTDump: the tree format of --emit=ast and the source-like text of
// expressions and types.
#include "frontend/ASTDump.h"
#include "frontend/Frontend.h"
#include "frontend/Parser.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace modelc;

namespace {

struct ASTDumpTest : ::testing::Test {
  SourceManager sm;
  std::ostringstream errors;
  DiagnosticEngine diag{sm, errors};

  std::string dump(const std::string &source) {
    auto module = parseFile(sm.addBuffer("d.mdl", source), sm, diag);
    if (!module)
      return "<error>\n" + errors.str();
    std::ostringstream out;
    dumpAST(*module, sm, out);
    return out.str();
  }
  /// Parses and prints back one expression.
  std::string roundTrip(const std::string &source) {
    ast::ExprPtr e = Parser(sm.addBuffer("e.mdl", source), sm, diag)
                         .parseStandaloneExpression();
    return e ? formatExpr(*e) : "<error>";
  }
};

TEST_F(ASTDumpTest, DeclarationsInSourceOrder) {
  EXPECT_EQ(dump("const B = 2\n"
                 "import \"nn\"\n"
                 "block mlp(x: f32[b, n], k: int = 3) -> f32[b, k] {\n"
                 "  let h = relu(nn.linear(x, k) as fc1)\n"
                 "  return h\n"
                 "}\n"),
            "Module d.mdl\n"
            "  Const B 1:1\n"
            "    Int 2 1:11\n"
            "  Import \"nn\" as nn 2:1\n"
            "  Block mlp 3:1\n"
            "    Arg x : f32[b, n] 3:11\n"
            "    Arg k : int 3:25\n"
            "      Int 3 3:34\n"
            "    Result f32[b, k] 3:40\n"
            "    Let h 4:3\n"
            "      Call 4:11\n"
            "        Name relu 4:11\n"
            "        As fc1 4:16\n"
            "          Call 4:16\n"
            "            Member linear 4:16\n"
            "              Name nn 4:16\n"
            "            Name x 4:26\n"
            "            Name k 4:29\n"
            "    Return 5:3\n"
            "      Name h 5:10\n");
}

TEST_F(ASTDumpTest, StatementsAndExpressions) {
  EXPECT_EQ(dump("block f(x: f32[*lead, n]) {\n"
                 "  for i in 0 .. 2 { x = -x[..., 1:] @ &h.0.w }\n"
                 "  if !c { assert n > 1, \"s\" } else { f(x, axis = -1) }\n"
                 "  param w: bf16[] = full(0.5)\n"
                 "  let (a, b) = [1.0, true]\n"
                 "}\n"),
            "Module d.mdl\n"
            "  Block f 1:1\n"
            "    Arg x : f32[*lead, n] 1:9\n"
            "    For i 2:3\n"
            "      Range\n"
            "        Int 0 2:12\n"
            "        Int 2 2:17\n"
            "      Body\n"
            "        Assign x 2:21\n"
            "          Binary @ 2:37\n"
            "            Unary - 2:25\n"
            "              Index 2:26\n"
            "                Name x 2:26\n"
            "                Ellipsis 2:28\n"
            "                Slice 1: 2:33\n"
            "                  Int 1 2:33\n"
            "            ParamRef h.0.w 2:39\n"
            "    If 3:3\n"
            "      Unary ! 3:6\n"
            "        Name c 3:7\n"
            "      Then\n"
            "        Assert 3:11\n"
            "          Binary > 3:20\n"
            "            Name n 3:18\n"
            "            Int 1 3:22\n"
            "          String \"s\" 3:25\n"
            "      Else\n"
            "        ExprStmt 3:38\n"
            "          Call 3:38\n"
            "            Name f 3:38\n"
            "            Name x 3:40\n"
            "            Kwarg axis 3:43\n"
            "              Unary - 3:50\n"
            "                Int 1 3:51\n"
            "    Param w : bf16[] 4:3\n"
            "      Call 4:21\n"
            "        Name full 4:21\n"
            "        Float 0.5 4:26\n"
            "    Let (a, b) 5:3\n"
            "      List 5:16\n"
            "        Float 1.0 5:17\n"
            "        Bool true 5:22\n");
}

TEST_F(ASTDumpTest, DataAndEntries) {
  EXPECT_EQ(dump("data d {\n  image: u8[28, 28] = idx(\"a\")\n  shuffle = "
                 "false\n}\n"
                 "train t { data = d; metrics { acc = 1 } }\n"
                 "infer i {\n  input x: u8[B, 4]\n  output y = x\n}\n"),
            "Module d.mdl\n"
            "  Data d 1:1\n"
            "    Field image : u8[28, 28] 2:3\n"
            "      Call 2:23\n"
            "        Name idx 2:23\n"
            "        String \"a\" 2:27\n"
            "    Assign shuffle 3:3\n"
            "      Bool false 3:13\n"
            "  Train t 5:1\n"
            "    Assign data 5:11\n"
            "      Name d 5:18\n"
            "    Group metrics 5:21\n"
            "      Assign acc 5:31\n"
            "        Int 1 5:37\n"
            "  Infer i 6:1\n"
            "    Input x : u8[B, 4] 7:3\n"
            "    Output y 8:3\n"
            "      Name x 8:14\n");
}

TEST_F(ASTDumpTest, FormatExprAddsOnlyNeededParentheses) {
  EXPECT_EQ(roundTrip("a + b * c"), "a + b * c");
  EXPECT_EQ(roundTrip("(a + b) * c"), "(a + b) * c");
  EXPECT_EQ(roundTrip("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(roundTrip("(a - b) - c"), "a - b - c");
  EXPECT_EQ(roundTrip("-(a + b)"), "-(a + b)");
  EXPECT_EQ(roundTrip("(a < b) == c"), "(a < b) == c");
  EXPECT_EQ(roundTrip("(-x)[0]"), "(-x)[0]");
  EXPECT_EQ(roundTrip("(f(x) as a).b"), "(f(x) as a).b");
  EXPECT_EQ(roundTrip("nn.linear(x, 10, bias = true) as h[i]"),
            "nn.linear(x, 10, bias = true) as h[i]");
  EXPECT_EQ(roundTrip("x[:, ::2, ..., 1:n]"), "x[:, ::2, ..., 1:n]");
  EXPECT_EQ(roundTrip("[1e-3, 2.0, \"q\\\"\"]"), "[0.001, 2.0, \"q\\\"\"]");
}

TEST_F(ASTDumpTest, FloatsPrintLikePythonRepr) {
  EXPECT_EQ(roundTrip("2500.0"), "2500.0");
  EXPECT_EQ(roundTrip("3."), "3.0");
  EXPECT_EQ(roundTrip("0.1"), "0.1");
  EXPECT_EQ(roundTrip("1e-4"), "0.0001");
  EXPECT_EQ(roundTrip("1e-5"), "1e-05");
  EXPECT_EQ(roundTrip("1.5e20"), "1.5e+20");
  EXPECT_EQ(roundTrip("0.30000000000000004"), "0.30000000000000004");
}

} // namespace
