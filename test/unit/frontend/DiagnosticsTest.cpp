// SourceManager and DiagnosticEngine: the clang-style format, caret
// placement, call-chain notes, the error limit, and unprintable input.
#include "frontend/Diagnostics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

using namespace modelc;

namespace {

struct DiagnosticsTest : ::testing::Test {
  SourceManager sm;
  std::ostringstream out;
  DiagnosticEngine diag{sm, out};

  SourceLoc loc(int file, uint32_t line, uint32_t col) {
    SourceLoc l;
    l.file = file;
    l.line = line;
    l.col = col;
    return l;
  }
};

TEST_F(DiagnosticsTest, LineStartsAndLineText) {
  int id = sm.addBuffer("a.mdl", "one\ntwo\r\n\nfour");
  EXPECT_EQ(sm.file(id).lineStarts, (std::vector<uint32_t>{0, 4, 9, 10}));
  EXPECT_EQ(sm.lineText(id, 1), "one");
  EXPECT_EQ(sm.lineText(id, 2), "two"); // CR dropped
  EXPECT_EQ(sm.lineText(id, 3), "");
  EXPECT_EQ(sm.lineText(id, 4), "four");
  EXPECT_EQ(sm.lineText(id, 5), "");
  EXPECT_EQ(sm.lineText(id, 0), "");
  EXPECT_EQ(sm.lineText(7, 1), "");
}

TEST_F(DiagnosticsTest, FormatLocations) {
  int id = sm.addBuffer("dir/a.mdl", "x");
  EXPECT_EQ(sm.format(loc(id, 3, 14)), "dir/a.mdl:3:14");
  EXPECT_EQ(sm.format(SourceLoc()), "<unknown>");
}

TEST_F(DiagnosticsTest, LoadFile) {
  std::string path = ::testing::TempDir() + "diag_test_input.mdl";
  {
    std::ofstream f(path, std::ios::binary);
    f << "const a = 1\n";
  }
  std::string error;
  int id = sm.loadFile(path, error);
  ASSERT_GE(id, 0) << error;
  EXPECT_EQ(sm.file(id).buffer, "const a = 1\n");
  EXPECT_EQ(sm.file(id).path, path);
  std::remove(path.c_str());

  EXPECT_EQ(sm.loadFile("/nonexistent/x.mdl", error), -1);
  EXPECT_NE(error.find("cannot open '/nonexistent/x.mdl'"), std::string::npos);
  EXPECT_EQ(sm.loadFile(::testing::TempDir(), error), -1);
  EXPECT_NE(error.find("directory"), std::string::npos);
}

TEST_F(DiagnosticsTest, ErrorWithSourceLineAndCaret) {
  int id = sm.addBuffer("m.mdl", "const a = 1\nlet h = relu(x)\n");
  diag.error(loc(id, 2, 9), "unknown name 'relu'");
  EXPECT_EQ(out.str(), "m.mdl:2:9: error: unknown name 'relu'\n"
                       "let h = relu(x)\n"
                       "        ^\n");
  EXPECT_EQ(diag.errorCount(), 1u);
  EXPECT_TRUE(diag.hasErrors());
}

TEST_F(DiagnosticsTest, CaretKeepsTabs) {
  int id = sm.addBuffer("m.mdl", "\tlet\tx = $\n");
  diag.error(loc(id, 1, 10), "bad");
  EXPECT_EQ(out.str(), "m.mdl:1:10: error: bad\n"
                       "\tlet\tx = $\n"
                       "\t   \t    ^\n");
}

TEST_F(DiagnosticsTest, CaretAfterMultibyteCharacters) {
  // "é" is two bytes but one column on screen.
  int id = sm.addBuffer("m.mdl", "\"\xC3\xA9\" x\n");
  diag.error(loc(id, 1, 6), "here");
  EXPECT_EQ(out.str(), "m.mdl:1:6: error: here\n"
                       "\"\xC3\xA9\" x\n"
                       "    ^\n");
}

TEST_F(DiagnosticsTest, CaretPastEndOfLine) {
  int id = sm.addBuffer("m.mdl", "f(x\n");
  diag.error(loc(id, 1, 4), "expected ')'");
  EXPECT_EQ(out.str(), "m.mdl:1:4: error: expected ')'\nf(x\n   ^\n");
}

TEST_F(DiagnosticsTest, UnprintableBytesKeepCaretAligned) {
  int id = sm.addBuffer("m.mdl", std::string("a\0\xFF\x01 b\n", 7));
  diag.error(loc(id, 1, 6), "x");
  EXPECT_EQ(out.str(), "m.mdl:1:6: error: x\na??? b\n     ^\n");
}

TEST_F(DiagnosticsTest, UnprintableBytesInMessage) {
  diag.error(SourceLoc(), std::string("bad \0\xFF name", 11));
  EXPECT_EQ(out.str(), "error: bad ?? name\n");
}

TEST_F(DiagnosticsTest, UnknownLocationHasNoSourceLine) {
  diag.error(SourceLoc(), "no input files");
  EXPECT_EQ(out.str(), "error: no input files\n");
}

TEST_F(DiagnosticsTest, LongLinesAreCut) {
  std::string line(1000, 'a');
  line[600] = 'X';
  int id = sm.addBuffer("m.mdl", line);
  diag.error(loc(id, 1, 601), "x");
  std::string text = out.str();
  std::string shown = text.substr(text.find('\n') + 1);
  shown = shown.substr(0, shown.find('\n'));
  EXPECT_LT(shown.size(), 400u);
  EXPECT_EQ(shown.substr(0, 3), "...");
  std::string caret = text.substr(text.rfind('\n', text.size() - 2) + 1);
  // The caret sits under the X.
  EXPECT_EQ(shown[caret.find('^')], 'X');
}

TEST_F(DiagnosticsTest, WarningsAndNotes) {
  int id = sm.addBuffer("m.mdl", "a\nb\n");
  diag.warning(loc(id, 1, 1), "unused");
  diag.error(loc(id, 2, 1), "duplicate 'b'");
  diag.note(loc(id, 1, 1), "previous definition is here");
  EXPECT_EQ(out.str(), "m.mdl:1:1: warning: unused\na\n^\n"
                       "m.mdl:2:1: error: duplicate 'b'\nb\n^\n"
                       "m.mdl:1:1: note: previous definition is here\na\n^\n");
  EXPECT_EQ(diag.errorCount(), 1u);
}

TEST_F(DiagnosticsTest, CallChainInnermostFirst) {
  int id = sm.addBuffer("m.mdl", "main()\n  mlp(x)\n    nn.linear(x)\n");
  diag.pushCall("mlp", loc(id, 1, 1));
  diag.pushCall("nn.linear", loc(id, 2, 3));
  EXPECT_EQ(diag.callDepth(), 2u);
  diag.error(loc(id, 3, 5), "shape mismatch");
  EXPECT_EQ(out.str(), "m.mdl:3:5: error: shape mismatch\n"
                       "    nn.linear(x)\n"
                       "    ^\n"
                       "m.mdl:2:3: note: in call to 'nn.linear' from here\n"
                       "  mlp(x)\n"
                       "  ^\n"
                       "m.mdl:1:1: note: in call to 'mlp' from here\n"
                       "main()\n"
                       "^\n");
  out.str("");
  diag.warning(loc(id, 1, 1), "w");
  EXPECT_EQ(out.str().find("note"), std::string::npos);
  diag.popCall();
  diag.popCall();
  diag.popCall(); // popping an empty chain is harmless
  EXPECT_EQ(diag.callDepth(), 0u);
  out.str("");
  diag.error(loc(id, 1, 1), "plain");
  EXPECT_EQ(out.str().find("note"), std::string::npos);
}

TEST_F(DiagnosticsTest, ErrorLimit) {
  int id = sm.addBuffer("m.mdl", "x\n");
  diag.setErrorLimit(2);
  for (int i = 0; i < 5; ++i) {
    diag.error(loc(id, 1, 1), "e" + std::to_string(i));
    diag.note(loc(id, 1, 1), "n" + std::to_string(i));
  }
  diag.warning(loc(id, 1, 1), "w");
  EXPECT_EQ(out.str(), "m.mdl:1:1: error: e0\nx\n^\n"
                       "m.mdl:1:1: note: n0\nx\n^\n"
                       "m.mdl:1:1: error: e1\nx\n^\n"
                       "m.mdl:1:1: note: n1\nx\n^\n"
                       "error: too many errors emitted, stopping now\n");
  EXPECT_EQ(diag.errorCount(), 5u);
}

TEST_F(DiagnosticsTest, ZeroErrorLimitMeansNoLimit) {
  diag.setErrorLimit(0);
  for (int i = 0; i < 100; ++i)
    diag.error(SourceLoc(), "e");
  EXPECT_EQ(out.str().find("too many"), std::string::npos);
  EXPECT_EQ(diag.errorCount(), 100u);
}

TEST_F(DiagnosticsTest, DefaultLimitIsFifty) {
  for (int i = 0; i < 60; ++i)
    diag.error(SourceLoc(), "e");
  std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 51);
}

} // namespace
