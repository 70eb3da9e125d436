// Parser: every top-level declaration, block signatures and types, and the
// statements each kind of body allows.
#include "ParserTestSupport.h"

using namespace modelc;
using namespace modelc::ast;
using ParserDeclTest = modelc::test::ParserTest;
using modelc::test::sexpr;

namespace {

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

TEST_F(ParserDeclTest, Imports) {
  auto m = parse("import \"nn\"\nimport \"models/gpt.mdl\"\nimport \"x.mdl\"");
  ASSERT_TRUE(m) << out.str();
  ASSERT_EQ(m->imports.size(), 3u);
  EXPECT_EQ(m->imports[0].path, "nn");
  EXPECT_EQ(m->imports[0].alias, "nn");
  EXPECT_EQ(m->imports[1].alias, "gpt");
  EXPECT_EQ(m->imports[2].alias, "x");
  EXPECT_FALSE(parse("import \"my-lib.mdl\""));
  EXPECT_NE(out.str().find("'my-lib' is not a valid identifier"),
            std::string::npos);
  EXPECT_FALSE(parse("import \"lib/data.mdl\"")); // `data` is a keyword
  EXPECT_FALSE(parse("import \"\""));
  EXPECT_FALSE(parse("import nn"));
}

TEST_F(ParserDeclTest, Const) {
  auto m = parse("const B = 128\nconst lr = 3e-4\nconst name = \"gpt\"");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->consts.size(), 3u);
  EXPECT_EQ(m->consts[0].name, "B");
  EXPECT_EQ(m->consts[0].value->as<IntExpr>()->value, 128);
}

TEST_F(ParserDeclTest, BlockSignature) {
  auto m = parse("block attn(x: f32[*lead, t, n], heads: int, eps: float = "
                 "1e-5, causal: bool = true, mask: bool[t, t]) -> (f32[*lead, "
                 "t, n], f32[]) {\n  return x, x\n}");
  ASSERT_TRUE(m) << out.str();
  const BlockDecl &b = m->blocks.at(0);
  EXPECT_EQ(b.name, "attn");
  ASSERT_EQ(b.args.size(), 5u);
  EXPECT_EQ(formatType(b.args[0].type), "f32[*lead, t, n]");
  EXPECT_TRUE(b.args[0].type.dims[0].variadic);
  EXPECT_EQ(b.args[0].type.dims[0].variadicName, "lead");
  EXPECT_FALSE(b.args[1].type.isTensor);
  EXPECT_EQ(b.args[1].type.name, "int");
  EXPECT_EQ(formatExpr(*b.args[2].defaultValue), "1e-05");
  EXPECT_FALSE(b.args[3].type.isTensor); // `bool` alone: a scalar kind
  EXPECT_TRUE(b.args[4].type.isTensor);  // `bool[...]`: a tensor
  ASSERT_EQ(b.results.size(), 2u);
  EXPECT_EQ(formatType(b.results[1]), "f32[]");
  EXPECT_TRUE(b.results[1].dims.empty());
}

TEST_F(ParserDeclTest, BlockWithoutResultsAndMultilineArgs) {
  auto m = parse("block f(\n  x: f32[n],\n  k: int,\n)\n{\n}");
  ASSERT_TRUE(m) << out.str();
  EXPECT_EQ(m->blocks.at(0).args.size(), 2u);
  EXPECT_TRUE(m->blocks.at(0).results.empty());
}

// Result types may start the next line, as a long signature is wrapped
// (issue 16).
TEST_F(ParserDeclTest, ResultArrowOnTheNextLine) {
  auto m = parse("block mlp(x: f32[b, n], hidden: int)\n    -> f32[b, 10] "
                 "{\n  return x\n}\nblock two(x: f32[n])\n\n  -> (f32[n], "
                 "f32[n]) {\n  return x, x\n}");
  ASSERT_TRUE(m) << out.str();
  ASSERT_EQ(m->blocks.size(), 2u);
  ASSERT_EQ(m->blocks[0].results.size(), 1u);
  EXPECT_EQ(formatType(m->blocks[0].results[0]), "f32[b, 10]");
  EXPECT_EQ(m->blocks[1].results.size(), 2u);
}

TEST_F(ParserDeclTest, DimensionExpressions) {
  auto m = parse("data text {\n  tokens: u16[T + 1] = windows(file(\"a\"))\n"
                 "  shuffle = false\n}");
  ASSERT_TRUE(m) << out.str();
  const DataDecl &d = m->data.at(0);
  ASSERT_EQ(d.fields.size(), 1u);
  EXPECT_EQ(d.fields[0].name, "tokens");
  EXPECT_EQ(formatType(d.fields[0].type), "u16[T + 1]");
  EXPECT_EQ(sexpr(*d.fields[0].source), "(call windows (call file \"a\"))");
  ASSERT_EQ(d.settings.size(), 1u);
  EXPECT_EQ(d.settings[0]->as<AssignStmt>()->name, "shuffle");
}

TEST_F(ParserDeclTest, TrainEntry) {
  auto m = parse("train fashion {\n"
                 "  data = fashion_train\n"
                 "  batch = B\n"
                 "  let logits = mlp(x)\n"
                 "  metrics { accuracy = accuracy(logits, batch.label) }\n"
                 "  eval { data = fashion_test; every = epoch }\n"
                 "  parallel { data = gpus }\n"
                 "}");
  ASSERT_TRUE(m) << out.str();
  const EntryDecl &e = m->entries.at(0);
  EXPECT_EQ(e.kind, EntryDecl::Kind::Train);
  EXPECT_EQ(e.name, "fashion");
  ASSERT_EQ(e.body.size(), 6u);
  EXPECT_EQ(e.body[0]->as<AssignStmt>()->name, "data");
  const auto *eval = e.body[4]->as<GroupStmt>();
  ASSERT_TRUE(eval);
  EXPECT_EQ(eval->name, "eval");
  ASSERT_EQ(eval->body.size(), 2u);
  EXPECT_EQ(eval->body[1]->as<AssignStmt>()->name, "every");
}

TEST_F(ParserDeclTest, InferEntry) {
  auto m = parse("infer classify {\n"
                 "  input image: u8[B, 28, 28]\n"
                 "  let y = f(image)\n"
                 "  output label = argmax(y, axis = -1)\n"
                 "}");
  ASSERT_TRUE(m) << out.str();
  const EntryDecl &e = m->entries.at(0);
  EXPECT_EQ(e.kind, EntryDecl::Kind::Infer);
  const auto *in = e.body.at(0)->as<InputStmt>();
  ASSERT_TRUE(in);
  EXPECT_EQ(in->name, "image");
  EXPECT_EQ(formatType(in->type), "u8[B, 28, 28]");
  const auto *outStmt = e.body.at(2)->as<OutputStmt>();
  ASSERT_TRUE(outStmt);
  EXPECT_EQ(outStmt->name, "label");
}

TEST_F(ParserDeclTest, TypeErrors) {
  EXPECT_FALSE(parse("block f(x: f32) {}"));
  EXPECT_NE(out.str().find("expected '[' after element type 'f32'"),
            std::string::npos);
  EXPECT_FALSE(parse("block f(x: int[3]) {}"));
  EXPECT_NE(out.str().find("'int' is a scalar kind"), std::string::npos);
  EXPECT_FALSE(parse("block f(x: tensor[3]) {}"));
  EXPECT_NE(out.str().find("expected a type (a tensor type such as f32[b, "
                           "n], or int, float, bool, string), found "
                           "identifier 'tensor'"),
            std::string::npos);
  EXPECT_FALSE(parse("block f(x: f32[*]) {}"));
}

TEST_F(ParserDeclTest, StatementsOutOfPlace) {
  struct Case {
    const char *source;
    const char *message;
  } cases[] = {
      {"train t { param w: f32[3] = zeros() }", "'param' is not allowed in a "
                                                "train entry"},
      {"train t { return x }", "'return' is not allowed in a train entry"},
      {"block f() { input x: f32[3] }", "'input' is not allowed in a block"},
      {"block f() { metrics { a = 1 } }", "a settings group is not allowed"},
      {"infer i { f(x) }", "an expression statement is not allowed in an "
                           "infer entry"},
      {"data d { let x = 1 }", "'let' is not allowed in a data declaration"},
      {"train t { eval { let x = 1 } }", "'let' is not allowed in a settings "
                                         "group"},
  };
  for (const Case &c : cases) {
    out.str("");
    EXPECT_FALSE(parse(c.source)) << c.source;
    EXPECT_NE(out.str().find(c.message), std::string::npos) << c.source << "\n"
                                                            << out.str();
  }
}

TEST_F(ParserDeclTest, KeywordsAsSettingNames) {
  auto m = parse("infer i {\n  input = 3\n  output y = 1\n}");
  ASSERT_TRUE(m) << out.str();
  EXPECT_EQ(m->entries[0].body[0]->as<AssignStmt>()->name, "input");
}

TEST_F(ParserDeclTest, EmptyAndCommentOnlyFiles) {
  auto m = parse("");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->blocks.empty());
  EXPECT_TRUE(parse("# nothing\n\n# here\n"));
  EXPECT_EQ(diag.errorCount(), 0u);
}

TEST_F(ParserDeclTest, ModuleRecordsFile) {
  auto m = parse("const a = 1");
  ASSERT_TRUE(m);
  EXPECT_EQ(sm.file(m->file).path, "t.mdl");
}

} // namespace
