// Parser error recovery: one error per independent mistake, messages at the
// offending token, and no hang or crash on any input.
#include "frontend/AST.h"
#include "frontend/Frontend.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

using namespace modelc;

namespace {

struct ParserRecoveryTest : ::testing::Test {
  SourceManager sm;
  std::ostringstream out;
  DiagnosticEngine diag{sm, out};

  /// Parses `source` and returns how many errors it reported.
  unsigned errorsIn(const std::string &source) {
    unsigned before = diag.errorCount();
    out.str("");
    auto module = parseFile(sm.addBuffer("t.mdl", source), sm, diag);
    unsigned errors = diag.errorCount() - before;
    EXPECT_EQ(module == nullptr, errors != 0) << source;
    return errors;
  }
  bool reported(const std::string &text) const {
    return out.str().find(text) != std::string::npos;
  }
};

TEST_F(ParserRecoveryTest, ThreeBrokenStatementsThreeErrors) {
  EXPECT_EQ(errorsIn("block f(x: f32[n]) -> f32[n] {\n"
                     "  let a = relu(x\n"
                     "  let b = x +\n"
                     "  let c = )\n"
                     "  return a\n"
                     "}\n"),
            3u)
      << out.str();
  EXPECT_TRUE(reported("t.mdl:2:17: error: expected ')' to close the call "
                       "started at 2:15, found end of line"));
  EXPECT_TRUE(reported("t.mdl:3:14: error: expected an expression, found end "
                       "of line"));
  EXPECT_TRUE(reported("t.mdl:4:11: error: expected an expression, found ')'"));
}

TEST_F(ParserRecoveryTest, ErrorsInSeveralDeclarations) {
  EXPECT_EQ(errorsIn("const = 3\n"
                     "block f() { let = 1 }\n"
                     "train t { data fashion }\n"
                     "infer i { output y x }\n"),
            4u)
      << out.str();
  EXPECT_TRUE(reported("t.mdl:1:7: error: expected a name after 'const', "
                       "found '='"));
  EXPECT_TRUE(reported("expected a name after 'let', found '='"));
}

TEST_F(ParserRecoveryTest, UnexpectedTopLevelKeyword) {
  EXPECT_EQ(errorsIn("return x\nconst a = 1\nlet y = 2\n"), 2u);
  EXPECT_TRUE(reported("t.mdl:1:1: error: unexpected 'return' at top level"));
  EXPECT_TRUE(reported("t.mdl:3:1: error: unexpected 'let' at top level"));
}

TEST_F(ParserRecoveryTest, StrayTopLevelTokens) {
  EXPECT_EQ(errorsIn("foo bar\n}\nconst a = 1"), 2u);
  EXPECT_TRUE(reported("expected a declaration (import, const, block, data, "
                       "train or infer), found identifier 'foo'"));
  EXPECT_TRUE(reported("unexpected '}' at top level"));
}

TEST_F(ParserRecoveryTest, MissingCloseBraceBeforeNextDeclaration) {
  EXPECT_EQ(errorsIn("block f() {\n  let x = 1\n\nblock g() {\n  let = 2\n}\n"),
            2u)
      << out.str();
  EXPECT_TRUE(reported("t.mdl:4:1: error: expected '}' to close the body of "
                       "block 'f' started at 1:11, found 'block'"));
  // g was still parsed: its own error is reported too.
  EXPECT_TRUE(reported("t.mdl:5:7: error: expected a name after 'let'"));
}

TEST_F(ParserRecoveryTest, MissingCloseBraceAtEndOfFileIsOneError) {
  EXPECT_EQ(errorsIn("block f() {\n  for i in 0 .. 3 {\n    if a {\n"), 1u)
      << out.str();
  EXPECT_TRUE(reported("found end of file"));
}

TEST_F(ParserRecoveryTest, BrokenHeaderStillChecksBody) {
  EXPECT_EQ(errorsIn("block f(x: f32[n] -> f32[n] {\n  let = 1\n}\n"
                     "const ok = 1"),
            2u)
      << out.str();
  EXPECT_TRUE(reported("expected ',' or ')' to close the arguments started "
                       "at 1:8, found '->'"));
}

TEST_F(ParserRecoveryTest, ErrorsInsideNestedBodies) {
  EXPECT_EQ(errorsIn("block f() {\n"
                     "  for i in 0 .. n {\n"
                     "    let a = (1\n"
                     "    if c { let b = * } else { x = }\n"
                     "  }\n"
                     "  return ]\n"
                     "}\n"),
            4u)
      << out.str();
}

TEST_F(ParserRecoveryTest, MissingRangeAndBraces) {
  EXPECT_EQ(errorsIn("block f() {\n  for i in n { }\n  if x y { }\n}"), 2u)
      << out.str();
  EXPECT_TRUE(reported("expected '..' in the range of the 'for' loop"));
  EXPECT_TRUE(reported("expected '{' to start the body of the 'if', found "
                       "identifier 'y'"));
}

TEST_F(ParserRecoveryTest, ElseWithoutIf) {
  EXPECT_EQ(errorsIn("block f() {\n  else { }\n  let x = 1\n}"), 1u);
  EXPECT_TRUE(reported("'else' without a matching 'if'"));
}

TEST_F(ParserRecoveryTest, AssignmentToNonName) {
  EXPECT_EQ(errorsIn("block f() {\n  x.y = 1\n  x[0] = 2\n}"), 2u);
  EXPECT_TRUE(reported("only a name can be assigned to"));
}

TEST_F(ParserRecoveryTest, MissingStatementSeparator) {
  EXPECT_EQ(errorsIn("block f() {\n  let a = 1 let b = 2\n}"), 1u);
  EXPECT_TRUE(reported("t.mdl:2:13: error: expected end of statement (a "
                       "newline or ';'), found 'let'"));
}

TEST_F(ParserRecoveryTest, LexicalErrorsMakeParseFail) {
  EXPECT_EQ(errorsIn("const a = 1 $\n"), 1u);
  EXPECT_EQ(errorsIn("const s = \"abc\n"), 1u);
}

TEST_F(ParserRecoveryTest, NoErrorRightAfterAnInvalidCharacter) {
  // The lexer's message is the statement's one message; a later,
  // independent mistake is still reported.
  EXPECT_EQ(errorsIn("infer f {\n"
                     "  output y = x $ 2\n"
                     "  let z = $\n"
                     "  let w = g(1, $)\n"
                     "  let v = )\n"
                     "}\n"),
            4u)
      << out.str();
  EXPECT_TRUE(reported("t.mdl:5:11: error: expected an expression, found ')'"));
}

TEST_F(ParserRecoveryTest, UnclosedBracketInTopLevelConstIsOneError) {
  EXPECT_EQ(errorsIn("const a = (1 + 2\n"
                     "const b = 3\n"
                     "\n"
                     "const c = [1, 2\n"
                     "  const d = 4\n"
                     "const e = max(1,\n"
                     "block f(x: f32[n]) -> f32[n] {\n"
                     "  return x\n"
                     "}\n"
                     "const g = 5\n"),
            3u)
      << out.str();
  EXPECT_TRUE(reported("t.mdl:2:1: error: expected ')' to close the '(' at "
                       "1:11, found 'const'"));
  EXPECT_TRUE(reported("t.mdl:5:3: error: expected ',' or ']' in the list "
                       "started at 4:11, found 'const'"));
  EXPECT_TRUE(reported("t.mdl:7:1: error: expected an expression, found "
                       "'block'"));
}

TEST_F(ParserRecoveryTest, DeepParenthesesAreOneError) {
  std::string deep = "const a = " + std::string(100000, '(') + "1" +
                     std::string(100000, ')') + "\nconst b = (";
  EXPECT_EQ(errorsIn(deep), 2u) << out.str().substr(0, 2000);
  EXPECT_TRUE(reported("expression is too deeply nested (more than 1000 levels)"));
}

TEST_F(ParserRecoveryTest, DeepUnaryAndBrackets) {
  EXPECT_EQ(errorsIn("const a = " + std::string(50000, '-') + "1"), 1u);
  EXPECT_EQ(errorsIn("const a = " + std::string(50000, '[')), 1u);
  EXPECT_EQ(errorsIn("const a = " + std::string(50000, '!') + "1"), 1u);
}

TEST_F(ParserRecoveryTest, LongOperatorAndPostfixChainsAreOneError) {
  auto repeat = [](const std::string &part, int n) {
    std::string s;
    for (int i = 0; i < n; ++i)
      s += part;
    return s;
  };
  const std::string message =
      "expression is too deeply nested (more than 1000 levels)";
  const char *const chains[] = {"+1", "*1", "[:, :]", "(1)", ".a", " as a"};
  for (const char *part : chains) {
    EXPECT_EQ(errorsIn("const a = 1" + repeat(part, 100000) + "\n"), 1u)
        << part << out.str().substr(0, 2000);
    EXPECT_TRUE(reported(message)) << part;
  }
  EXPECT_EQ(errorsIn("const a = " + repeat("f(", 3000) + "1" +
                     repeat(")", 3000)),
            1u);
  EXPECT_EQ(errorsIn("block f() {\n  return x" + repeat("[:]", 300000) +
                     "\n}\nconst b = ("),
            2u);
  EXPECT_TRUE(reported("t.mdl:2:3002: error: " + message)) << out.str();
}

TEST_F(ParserRecoveryTest, LongFlatSumParses) {
  std::string sum = "const a = 1";
  for (int i = 1; i < 700; ++i)
    sum += "+1";
  EXPECT_EQ(errorsIn(sum + "\n"), 0u) << out.str().substr(0, 2000);
}

TEST_F(ParserRecoveryTest, NestingJustUnderTheLimitIsFine) {
  std::string ok =
      "const a = " + std::string(200, '(') + "1" + std::string(200, ')');
  EXPECT_EQ(errorsIn(ok), 0u) << out.str();
}

TEST_F(ParserRecoveryTest, DeepBodiesAndElseIfChains) {
  std::string ifs = "block f() {\n";
  for (int i = 0; i < 2000; ++i)
    ifs += "if a {\n";
  for (int i = 0; i < 2000; ++i)
    ifs += "}\n";
  ifs += "}\n";
  EXPECT_EQ(errorsIn(ifs), 1u);
  std::string chain = "block f() {\n  if a { }";
  for (int i = 0; i < 5000; ++i)
    chain += " else if a { }";
  chain += "\n}\n";
  EXPECT_EQ(errorsIn(chain), 1u);
}

TEST_F(ParserRecoveryTest, ErrorLimitStopsOutputNotParsing) {
  diag.setErrorLimit(3);
  std::string many;
  for (int i = 0; i < 20; ++i)
    many += "let\n";
  EXPECT_EQ(errorsIn(many), 20u);
  EXPECT_TRUE(reported("error: too many errors emitted, stopping now"));
}

//===----------------------------------------------------------------------===//
// Robustness: no crash or hang on arbitrary input
//===----------------------------------------------------------------------===//

const char *const kValidProgram = R"(import "nn"
const B = 128
block mlp(x: f32[b, n], hidden: int, eps: float = 1e-5) -> f32[b, 10] {
  let h = relu(nn.linear(x, hidden) as fc1)
  for i in 0 .. 3 { h = nn.linear(h, hidden) as blocks[i] }
  if hidden > 2 { h = h * 2.0 } else { h = -h }
  let (a, b2) = split(h[:, 0:4], 2, axis = -1)
  param w: f32[n] = zeros()
  assert n % 2 == 0, "even"
  return nn.linear(h, 10) as fc2 + (&fc1.weight)[0, ...]
}
data d { image: u8[28, 28] = idx("x.gz"); shuffle = false }
train t {
  data = d
  batch = B
  loss = cross_entropy(mlp(f32(batch.image), 256), batch.label)
  metrics { accuracy = accuracy(x, y) }
  optimizer = adamw(lr = 1e-3, betas = [0.9, 0.999])
}
infer i {
  input image: u8[B, 28, 28]
  output label = argmax(mlp(image, 256), axis = -1)
}
)";

TEST_F(ParserRecoveryTest, ValidProgramParses) {
  EXPECT_EQ(errorsIn(kValidProgram), 0u) << out.str();
}

TEST_F(ParserRecoveryTest, RandomBytesNeverCrash) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 500; ++round) {
    std::string bytes(rng() % 300, '\0');
    for (char &c : bytes)
      c = static_cast<char>(rng() % 256);
    errorsIn(bytes);
  }
}

TEST_F(ParserRecoveryTest, TokenSoupNeverCrashes) {
  static const char *const kPieces[] = {
      "block", "data", "train", "infer",  "let", "param", "return", "for",
      "in",    "if",   "else",  "assert", "as",  "input", "output", "import",
      "const", "x",    "f32",   "int",    "1",   "2.5",   "\"s\"",  "(",
      ")",     "[",    "]",     "{",      "}",   ",",     ";",      "\n",
      "=",     "==",   "+",     "-",      "*",   "@",     ":",      ".",
      "..",    "...",  "&",     "->",     "!",   "&&",    "$",      "#c\n"};
  constexpr size_t kCount = sizeof(kPieces) / sizeof(kPieces[0]);
  std::mt19937 rng(99);
  for (int round = 0; round < 1500; ++round) {
    std::string source;
    size_t length = rng() % 80;
    for (size_t i = 0; i < length; ++i)
      source += std::string(kPieces[rng() % kCount]) + " ";
    errorsIn(source);
  }
}

TEST_F(ParserRecoveryTest, MutatedProgramsNeverCrash) {
  std::mt19937 rng(7);
  std::string valid = kValidProgram;
  for (int round = 0; round < 1500; ++round) {
    std::string source = valid;
    for (int edits = 1 + rng() % 4; edits > 0; --edits) {
      size_t at = rng() % source.size();
      switch (rng() % 3) {
      case 0:
        source.erase(at, 1 + rng() % 5);
        break;
      case 1:
        source.insert(at, 1, "(){}[],;=\n.\"#"[rng() % 14]);
        break;
      default:
        source[at] = static_cast<char>(rng() % 256);
      }
      if (source.empty())
        source = "x";
    }
    errorsIn(source);
  }
}

} // namespace
