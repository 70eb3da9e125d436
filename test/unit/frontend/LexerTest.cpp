// Lexer: token kinds and values, the number/dot rules, strings, bad input,
// locations, and where newlines end statements.
#include "frontend/Lexer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

using namespace modelc;
using K = TokenKind;

namespace {

struct Lexed {
  std::vector<Token> tokens;
  unsigned errors = 0;
  std::string diagnostics;
};

// Keeps the SourceManager alive with the tokens' text views.
struct LexerFixture : ::testing::Test {
  SourceManager sm;

  Lexed lex(const std::string &source) {
    std::ostringstream out;
    DiagnosticEngine diag(sm, out);
    int id = sm.addBuffer("t.mdl", source);
    Lexed result;
    result.tokens = Lexer(id, sm, diag).lexAll();
    result.errors = diag.errorCount();
    result.diagnostics = out.str();
    return result;
  }

  /// Kinds of every token but the final Eof.
  std::vector<K> kinds(const std::string &source) {
    std::vector<K> result;
    for (const Token &t : lex(source).tokens)
      if (t.kind != K::Eof)
        result.push_back(t.kind);
    return result;
  }
};

using LexerTest = LexerFixture;

TEST_F(LexerTest, SimpleStatement) {
  EXPECT_EQ(kinds("let x = 1"),
            (std::vector<K>{K::KwLet, K::Identifier, K::Equal, K::Int}));
}

TEST_F(LexerTest, EveryKeyword) {
  EXPECT_EQ(kinds("import const block data train infer let param return for "
                  "in if else assert as input output true false"),
            (std::vector<K>{K::KwImport, K::KwConst, K::KwBlock, K::KwData,
                            K::KwTrain, K::KwInfer, K::KwLet, K::KwParam,
                            K::KwReturn, K::KwFor, K::KwIn, K::KwIf, K::KwElse,
                            K::KwAssert, K::KwAs, K::KwInput, K::KwOutput,
                            K::KwTrue, K::KwFalse}));
}

TEST_F(LexerTest, DTypeAndKindNamesAreIdentifiers) {
  for (const Token &t : lex("f32 bf16 u8 int float bool string").tokens) {
    if (t.kind != K::Eof) {
      EXPECT_EQ(t.kind, K::Identifier) << t.text;
    }
  }
}

TEST_F(LexerTest, EveryOperator) {
  EXPECT_EQ(
      kinds("+ - * / % @ ! == != < <= > >= && || = : , ; . .. ... & -> ( ) "
            "[ ] { }"),
      (std::vector<K>{
          K::Plus,   K::Minus,    K::Star,      K::Slash,     K::Percent,
          K::At,     K::Bang,     K::EqEq,      K::NotEq,     K::Less,
          K::LessEq, K::Greater,  K::GreaterEq, K::AmpAmp,    K::PipePipe,
          K::Equal,  K::Colon,    K::Comma,     K::Semicolon, K::Dot,
          K::DotDot, K::Ellipsis, K::Amp,       K::Arrow,     K::LParen,
          K::RParen, K::LBracket, K::RBracket,  K::LBrace,    K::RBrace}));
}

TEST_F(LexerTest, OperatorsWithoutSpaces) {
  EXPECT_EQ(kinds("a->b<=c&&!d"),
            (std::vector<K>{K::Identifier, K::Arrow, K::Identifier, K::LessEq,
                            K::Identifier, K::AmpAmp, K::Bang, K::Identifier}));
}

TEST_F(LexerTest, FloatForms) {
  struct Case {
    const char *text;
    double value;
  } cases[] = {{"1.5", 1.5},     {"1e-3", 1e-3}, {"3.", 3.0},
               {"2.5e+3", 2500}, {"1E2", 100},   {"0.25", 0.25}};
  for (const Case &c : cases) {
    Lexed l = lex(c.text);
    ASSERT_EQ(l.tokens.size(), 2u) << c.text;
    EXPECT_EQ(l.tokens[0].kind, K::Float) << c.text;
    EXPECT_DOUBLE_EQ(l.tokens[0].floatValue, c.value) << c.text;
    EXPECT_EQ(l.tokens[0].text, c.text);
    EXPECT_EQ(l.errors, 0u);
  }
}

TEST_F(LexerTest, IntegerValues) {
  Lexed l = lex("0 42 007 9223372036854775807");
  EXPECT_EQ(l.errors, 0u);
  EXPECT_EQ(l.tokens[0].intValue, 0);
  EXPECT_EQ(l.tokens[1].intValue, 42);
  EXPECT_EQ(l.tokens[2].intValue, 7);
  EXPECT_EQ(l.tokens[3].intValue, INT64_MAX);
}

TEST_F(LexerTest, IntegerOverflowIsAnError) {
  Lexed l = lex("9223372036854775808");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_EQ(l.tokens[0].kind, K::Int);
  EXPECT_NE(l.diagnostics.find("does not fit in 64 bits"), std::string::npos);
}

TEST_F(LexerTest, FloatOverflowIsAnError) {
  EXPECT_EQ(lex("1e999").errors, 1u);
}

TEST_F(LexerTest, RangeWithAndWithoutSpaces) {
  std::vector<K> range = {K::Int, K::DotDot, K::Identifier};
  EXPECT_EQ(kinds("0 .. n"), range);
  EXPECT_EQ(kinds("0..n"), range);
  EXPECT_EQ(kinds("0..10"), (std::vector<K>{K::Int, K::DotDot, K::Int}));
}

TEST_F(LexerTest, DigitsInParamPathAreIntegers) {
  EXPECT_EQ(kinds("&h.0.attn"),
            (std::vector<K>{K::Amp, K::Identifier, K::Dot, K::Int, K::Dot,
                            K::Identifier}));
}

TEST_F(LexerTest, TrailingDotFloatBeforePunctuation) {
  EXPECT_EQ(kinds("f(3.)"),
            (std::vector<K>{K::Identifier, K::LParen, K::Float, K::RParen}));
  EXPECT_EQ(kinds("3..."), (std::vector<K>{K::Int, K::Ellipsis}));
}

TEST_F(LexerTest, BadNumberSuffix) {
  Lexed l = lex("12abc + 1e");
  EXPECT_EQ(l.errors, 2u);
  EXPECT_NE(l.diagnostics.find("invalid suffix 'abc' on number '12'"),
            std::string::npos);
  // The lexer goes on: number, '+', number.
  EXPECT_EQ(l.tokens.size(), 4u);
}

TEST_F(LexerTest, StringEscapes) {
  Lexed l = lex(R"("a\"b\\c\nd")");
  EXPECT_EQ(l.errors, 0u);
  ASSERT_EQ(l.tokens[0].kind, K::String);
  EXPECT_EQ(l.tokens[0].stringValue, "a\"b\\c\nd");
}

TEST_F(LexerTest, StringKeepsUtf8) {
  Lexed l = lex("\"h\xC3\xA9llo\"");
  EXPECT_EQ(l.errors, 0u);
  EXPECT_EQ(l.tokens[0].stringValue, "h\xC3\xA9llo");
}

TEST_F(LexerTest, InvalidUtf8InStringIsOneError) {
  // Spec §2: source is UTF-8. One error per string, at the first bad byte;
  // lexing goes on after the string.
  Lexed l = lex("\"p\xFF\xFE.npy\" x \"\xC3\xA9\xC3\"");
  EXPECT_EQ(l.errors, 2u);
  EXPECT_NE(l.diagnostics.find(
                "t.mdl:1:3: error: invalid UTF-8 byte 0xFF in string"),
            std::string::npos);
  EXPECT_NE(l.diagnostics.find("invalid UTF-8 byte 0xC3 in string"),
            std::string::npos);
  ASSERT_EQ(l.tokens.size(), 4u); // string x string Eof
  EXPECT_EQ(l.tokens[0].kind, K::String);
  EXPECT_EQ(l.tokens[0].stringValue, "p.npy");
  EXPECT_EQ(l.tokens[1].kind, K::Identifier);
  EXPECT_EQ(l.tokens[2].stringValue, "\xC3\xA9");
}

TEST_F(LexerTest, UnknownEscapeIsAnError) {
  Lexed l = lex(R"("a\tb" x)");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diagnostics.find("unknown escape sequence '\\t'"),
            std::string::npos);
  EXPECT_EQ(l.tokens[1].kind, K::Identifier);
}

TEST_F(LexerTest, UnterminatedString) {
  Lexed l = lex("\"abc\nlet");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diagnostics.find("t.mdl:1:1: error: unterminated string"),
            std::string::npos);
  EXPECT_EQ(kinds("\"abc\nlet").back(), K::KwLet);
  EXPECT_EQ(lex("\"abc").errors, 1u);
  EXPECT_EQ(lex("\"abc\\").errors, 1u);
}

TEST_F(LexerTest, SingleQuotesAreReportedOnce) {
  Lexed l = lex("'nn' x");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_EQ(l.tokens[0].kind, K::String);
  EXPECT_EQ(l.tokens[0].stringValue, "nn");
}

TEST_F(LexerTest, CommentsRunToEndOfLine) {
  EXPECT_EQ(kinds("a # b c\nd"),
            (std::vector<K>{K::Identifier, K::Newline, K::Identifier}));
  EXPECT_EQ(kinds("# only a comment"), std::vector<K>{});
}

TEST_F(LexerTest, InvalidCharacterIsReportedAndSkipped) {
  Lexed l = lex("a $ b");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diagnostics.find("t.mdl:1:3: error: unexpected character '$'"),
            std::string::npos);
  EXPECT_EQ(kinds("a $ b"), (std::vector<K>{K::Identifier, K::Identifier}));
}

TEST_F(LexerTest, RunOfJunkIsOneError) {
  EXPECT_EQ(lex("a $?~^ b").errors, 1u);
  EXPECT_EQ(lex("a $ ? b").errors, 2u);
}

TEST_F(LexerTest, SinglePipeSuggestsOr) {
  Lexed l = lex("a | b");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diagnostics.find("did you mean '||'?"), std::string::npos);
}

TEST_F(LexerTest, NulAndInvalidUtf8) {
  Lexed l = lex(std::string("a \0 b \xFF\xFE c", 10));
  EXPECT_EQ(l.errors, 2u);
  EXPECT_NE(l.diagnostics.find("unexpected NUL byte"), std::string::npos);
  EXPECT_NE(l.diagnostics.find("byte 0xFF (not UTF-8)"), std::string::npos);
  EXPECT_EQ(l.tokens.size(), 4u); // a b c Eof
}

TEST_F(LexerTest, NonAsciiInNameIsOneErrorAndStillAName) {
  Lexed l = lex("h\xC3\xA9llo = 1");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diagnostics.find("U+00E9"), std::string::npos);
  EXPECT_EQ(l.tokens[0].kind, K::Identifier);
  EXPECT_EQ(l.tokens[1].kind, K::Equal);
}

TEST_F(LexerTest, LocationsAreOneBasedByteColumns) {
  Lexed l = lex("ab\n\tcd  e");
  ASSERT_EQ(l.tokens.size(), 5u);
  EXPECT_EQ(l.tokens[0].loc.line, 1u);
  EXPECT_EQ(l.tokens[0].loc.col, 1u);
  EXPECT_EQ(l.tokens[1].kind, K::Newline);
  EXPECT_EQ(l.tokens[1].loc.col, 3u);
  EXPECT_EQ(l.tokens[2].loc.line, 2u);
  EXPECT_EQ(l.tokens[2].loc.col, 2u);
  EXPECT_EQ(l.tokens[3].loc.col, 6u);
}

TEST_F(LexerTest, EofPointsAtEndOfLastLine) {
  Lexed l = lex("ab\n");
  EXPECT_EQ(l.tokens.back().kind, K::Eof);
  EXPECT_EQ(l.tokens.back().loc.line, 1u);
  EXPECT_EQ(l.tokens.back().loc.col, 3u);
  Lexed empty = lex("");
  ASSERT_EQ(empty.tokens.size(), 1u);
  EXPECT_EQ(empty.tokens[0].loc.line, 1u);
}

TEST_F(LexerTest, CrLfLineEndings) {
  EXPECT_EQ(kinds("a\r\nb\r\n"), (std::vector<K>{K::Identifier, K::Newline,
                                                 K::Identifier, K::Newline}));
}

//===----------------------------------------------------------------------===//
// Newline rule
//===----------------------------------------------------------------------===//

TEST_F(LexerTest, NewlineEndsStatement) {
  EXPECT_EQ(kinds("a\nb"),
            (std::vector<K>{K::Identifier, K::Newline, K::Identifier}));
}

TEST_F(LexerTest, BlankLinesAndLeadingNewlinesCollapse) {
  EXPECT_EQ(kinds("\n\n a\n\n\n b"),
            (std::vector<K>{K::Identifier, K::Newline, K::Identifier}));
}

TEST_F(LexerTest, NoNewlineInsideParensOrBrackets) {
  EXPECT_EQ(kinds("f(a,\n b\n)"),
            (std::vector<K>{K::Identifier, K::LParen, K::Identifier, K::Comma,
                            K::Identifier, K::RParen}));
  EXPECT_EQ(kinds("[1\n, 2\n]"), (std::vector<K>{K::LBracket, K::Int, K::Comma,
                                                 K::Int, K::RBracket}));
}

TEST_F(LexerTest, NoNewlineAfterBinaryOperatorOrComma) {
  for (const char *op : {"+", "-", "*", "/", "%", "@", "==", "<", "&&", "||",
                         "=", ",", "->", "."}) {
    std::vector<K> k = kinds(std::string("a ") + op + "\nb");
    EXPECT_EQ(k.size(), 3u) << op;
    EXPECT_EQ(std::count(k.begin(), k.end(), K::Newline), 0) << op;
  }
}

TEST_F(LexerTest, NewlineBeforeOperatorStillEndsStatement) {
  EXPECT_EQ(kinds("a\n+ b"), (std::vector<K>{K::Identifier, K::Newline, K::Plus,
                                             K::Identifier}));
}

TEST_F(LexerTest, NewlinesCountInsideBraces) {
  EXPECT_EQ(kinds("{\na\nb\n}"),
            (std::vector<K>{K::LBrace, K::Newline, K::Identifier, K::Newline,
                            K::Identifier, K::Newline, K::RBrace}));
}

TEST_F(LexerTest, BraceEndsUnclosedParen) {
  // The `(` is never closed; the body's newlines must still count.
  std::vector<K> k = kinds("f(x {\na\nb\n}\nc");
  EXPECT_EQ(std::count(k.begin(), k.end(), K::Newline), 4);
}

TEST_F(LexerTest, StatementKeywordEndsUnfinishedStatement) {
  // `relu(x` is unclosed and `y +` trails an operator: the newline before
  // the next `let` is emitted all the same.
  EXPECT_EQ(kinds("relu(x\nlet"),
            (std::vector<K>{K::Identifier, K::LParen, K::Identifier, K::Newline,
                            K::KwLet}));
  EXPECT_EQ(kinds("y +\n\nreturn"),
            (std::vector<K>{K::Identifier, K::Plus, K::Newline, K::KwReturn}));
  // The inserted newline points at the end of the unfinished line.
  Lexed l = lex("f(a\n\nlet");
  EXPECT_EQ(l.tokens[3].kind, K::Newline);
  EXPECT_EQ(l.tokens[3].loc.line, 1u);
  EXPECT_EQ(l.tokens[3].loc.col, 4u);
  // Having closed the group, later newlines count again.
  EXPECT_EQ(kinds("f(a\nlet x\ny").back(), K::Identifier);
  std::vector<K> k = kinds("f(a\nlet x\ny");
  EXPECT_EQ(std::count(k.begin(), k.end(), K::Newline), 2);
}

TEST_F(LexerTest, DeclarationKeywordEndsUnclosedGroup) {
  // `(1` is never closed; the next declaration closes it, so the newline
  // after `2` ends that declaration. No newline is inserted before `const`.
  EXPECT_EQ(kinds("const a = (1\nconst b = 2\nc"),
            (std::vector<K>{K::KwConst, K::Identifier, K::Equal, K::LParen,
                            K::Int, K::KwConst, K::Identifier, K::Equal, K::Int,
                            K::Newline, K::Identifier}));
  // At top level the keyword may be indented.
  std::vector<K> k = kinds("const a = [1\n  import \"nn\"\nc");
  EXPECT_EQ(std::count(k.begin(), k.end(), K::Newline), 1);
  // Inside a body, only in column 1.
  k = kinds("{\n  f(a\n  data\n  b\n}");
  EXPECT_EQ(std::count(k.begin(), k.end(), K::Newline), 1);
  k = kinds("{\n  f(a\ndata\n  b\n}");
  EXPECT_EQ(std::count(k.begin(), k.end(), K::Newline), 3);
  // A setting spelled like a keyword is not a declaration.
  k = kinds("f(a,\ndata = 1\n)\nb");
  EXPECT_EQ(std::count(k.begin(), k.end(), K::Newline), 1);
}

TEST_F(LexerTest, TokenAfterInvalidCharactersIsMarked) {
  Lexed l = lex("a $ b c\n\xC3\x97 2");
  ASSERT_EQ(l.tokens.size(), 6u);
  EXPECT_FALSE(l.tokens[0].afterInvalid);
  EXPECT_TRUE(l.tokens[1].afterInvalid); // b
  EXPECT_FALSE(l.tokens[2].afterInvalid);
  EXPECT_FALSE(l.tokens[3].afterInvalid); // newline
  EXPECT_TRUE(l.tokens[4].afterInvalid);  // 2
  EXPECT_FALSE(l.tokens[5].afterInvalid);
  // A newline that is dropped passes the mark on.
  l = lex("f(a $\n b)");
  ASSERT_EQ(l.tokens[3].kind, K::Identifier);
  EXPECT_TRUE(l.tokens[3].afterInvalid);
  // So does the end of the file.
  EXPECT_TRUE(lex("a $").tokens.back().afterInvalid);
}

TEST_F(LexerTest, DescribeToken) {
  Lexed l = lex("x 12 1.5 \"s\" } return");
  EXPECT_EQ(describeToken(l.tokens[0]), "identifier 'x'");
  EXPECT_EQ(describeToken(l.tokens[1]), "integer 12");
  EXPECT_EQ(describeToken(l.tokens[2]), "number 1.5");
  EXPECT_EQ(describeToken(l.tokens[3]), "string \"s\"");
  EXPECT_EQ(describeToken(l.tokens[4]), "'}'");
  EXPECT_EQ(describeToken(l.tokens[5]), "'return'");
  EXPECT_EQ(describeToken(l.tokens[6]), "end of file");
}

TEST_F(LexerTest, EveryByteValueTerminates) {
  std::string all;
  for (int c = 0; c < 256; ++c)
    all += static_cast<char>(c);
  Lexed l = lex(all + all);
  EXPECT_EQ(l.tokens.back().kind, K::Eof);
  EXPECT_GT(l.errors, 0u);
}

} // namespace
