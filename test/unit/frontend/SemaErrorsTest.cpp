// Sema's errors in modules, calls, statements and parameters: the message,
// where it points (line:col), its notes, and that one mistake is reported
// once while independent ones are all reported. Entries: SemaEntryErrorsTest.
#include "SemaTestSupport.h"

using namespace modelc;
using modelc::test::SemaTest;

namespace {

//===----------------------------------------------------------------------===//
// Modules, consts and -D
//===----------------------------------------------------------------------===//

TEST_F(SemaTest, MissingMainFile) {
  FrontendOptions options;
  EXPECT_FALSE(buildProgram("/nonexistent/x.mdl", options, sm, diag, program));
  EXPECT_TRUE(reported("error: cannot open '/nonexistent/x.mdl': No such "
                       "file or directory"));
}

TEST_F(SemaTest, MissingImport) {
  EXPECT_FALSE(build("import \"nope.mdl\"\n"));
  EXPECT_TRUE(reported("main.mdl:1:1: error: cannot import 'nope.mdl': "
                       "cannot open 'nope.mdl'"));
}

TEST_F(SemaTest, ImportCycleIsReportedAtTheClosingImport) {
  addFile("a.mdl", "import \"b.mdl\"\n");
  addFile("b.mdl", "\nimport \"a.mdl\"\n");
  EXPECT_FALSE(build("import \"a.mdl\"\n"));
  EXPECT_TRUE(reported("b.mdl:2:1: error: import cycle: 'a.mdl' imports "
                       "'b.mdl', which imports 'a.mdl'"));
  EXPECT_TRUE(reported("a.mdl:1:1: note: 'b.mdl' is imported here"));
  EXPECT_EQ(errorCount(), 1u);
}

TEST_F(SemaTest, DuplicateTopLevelName) {
  EXPECT_FALSE(build("const A = 1\nblock A(x: f32[n]) -> f32[n] { return x "
                     "}\n"));
  EXPECT_TRUE(reported("main.mdl:2:1: error: 'A' is already defined in this "
                       "file"));
  EXPECT_TRUE(reported("main.mdl:1:1: note: previous definition is here"));
}

TEST_F(SemaTest, ConstUsedBeforeItsDefinition) {
  EXPECT_FALSE(build("const A = B + 1\nconst B = 2\n"));
  EXPECT_TRUE(reported("main.mdl:1:11: error: const 'B' is used before its "
                       "definition; consts are evaluated in order"));
}

TEST_F(SemaTest, UnknownDefineListsTheConsts) {
  EXPECT_FALSE(build("const BATCH = 1\nconst LR = 0.1\n", {{"BACH", "2"}}));
  EXPECT_TRUE(reported("error: -D BACH=2: 'main.mdl' has no const 'BACH' "
                       "(did you mean 'BATCH'?); its consts are BATCH, LR"));
}

TEST_F(SemaTest, DefineOfTheWrongKind) {
  EXPECT_FALSE(build("const B = 4\n", {{"B", "2.5"}}));
  EXPECT_TRUE(reported("error: -D B=2.5: '2.5' is not an int, and const 'B' "
                       "is an int"));
  EXPECT_TRUE(reported("main.mdl:1:1: note: 'B' is declared here"));
}

//===----------------------------------------------------------------------===//
// Calls and types
//===----------------------------------------------------------------------===//

TEST_F(SemaTest, ArgumentShapeMismatchExplainsTheSizeVariable) {
  EXPECT_FALSE(build(R"(import "nn"
block pair(x: f32[b, n], y: f32[b, n]) -> f32[b, n] { return x + y }
infer run {
  input x: f32[2, 784]
  output y = pair(x, reshape(x, [2, 28, 28])[:, 0, :])
}
)"));
  EXPECT_TRUE(reported("main.mdl:5:22: error: 'pair' expects y: f32[b, n], "
                       "got f32[2, 28] (n = 784 from argument 'x', but 28 "
                       "here)"));
}

TEST_F(SemaTest, ArgumentRankMismatchInAnImportedBlock) {
  EXPECT_FALSE(build(R"(import "nn"
block use(x: f32[b, n]) -> f32[b, 4] { return nn.embedding(x, 4, 4) }
infer run {
  input x: f32[2, 3]
  output y = use(x)
}
)"));
  EXPECT_TRUE(reported("main.mdl:2:60: error: 'nn.embedding' expects ids: "
                       "i32[*lead], got f32[2, 3]"));
  EXPECT_TRUE(reported("main.mdl:5:14: note: in call to 'use' from here"));
}

TEST_F(SemaTest, MissingUnknownAndDuplicateArguments) {
  EXPECT_FALSE(build(R"(import "nn"
infer run {
  input x: f32[2, 3]
  let a = nn.linear(x)
  let b = nn.linear(x, 4, baias = false)
  let c = nn.linear(x, 4, out = 5)
  let d = nn.linear(x, 4, true, 5)
  output y = x
}
)"));
  EXPECT_TRUE(reported(
      "main.mdl:4:11: error: call to 'nn.linear' is missing argument 'out'; "
      "it takes nn.linear(x: f32[*lead, n], out: int, bias: bool = true)"));
  EXPECT_TRUE(reported("main.mdl:5:27: error: 'nn.linear' has no argument "
                       "'baias' (did you mean 'bias'?)"));
  EXPECT_TRUE(reported("main.mdl:6:27: error: argument 'out' of 'nn.linear' "
                       "is given twice"));
  EXPECT_TRUE(reported("main.mdl:6:24: note: first given here"));
  EXPECT_TRUE(reported("main.mdl:7:33: error: 'nn.linear' takes 3 arguments "
                       "but 4 were given"));
}

TEST_F(SemaTest, ScalarArgumentOfTheWrongKind) {
  EXPECT_FALSE(build(R"(import "nn"
infer run {
  input x: f32[2, 3]
  output y = nn.linear(x, 2.5)
}
)"));
  EXPECT_TRUE(reported("main.mdl:4:27: error: 'nn.linear' expects out: int, "
                       "got float 2.5"));
}

TEST_F(SemaTest, ReturnTypeMismatchShowsTheEvaluatedSignature) {
  EXPECT_FALSE(build(R"(import "nn"
block mlp(x: f32[b, n], classes: int) -> f32[b, classes] {
  return nn.linear(x, classes * 2) as fc
}
infer run {
  input x: f32[128, 784]
  output y = mlp(x, 10)
}
)"));
  EXPECT_TRUE(reported("main.mdl:3:10: error: block 'mlp' returns f32[128, "
                       "20] but its signature says f32[b, classes] = "
                       "f32[128, 10]"));
  EXPECT_TRUE(reported("main.mdl:7:14: note: in call to 'mlp' from here"));
}

TEST_F(SemaTest, MissingReturnAndCodeAfterReturn) {
  EXPECT_FALSE(build(R"(block f(x: f32[n]) -> f32[n] {
  let y = x
}
block g(x: f32[n]) -> f32[n] {
  return x
  let z = x
}
infer run {
  input x: f32[4]
  output y = f(x)
}
)"));
  EXPECT_TRUE(reported("main.mdl:6:3: error: statement after 'return' is "
                       "never reached"));
  EXPECT_TRUE(reported("main.mdl:1:1: error: block 'f' ends without "
                       "'return'; its signature says it returns f32[n]"));
}

TEST_F(SemaTest, RecursionIsAnError) {
  EXPECT_FALSE(build(R"(block a(x: f32[n]) -> f32[n] { return b(x) }
block b(x: f32[n]) -> f32[n] { return a(x) }
infer run {
  input x: f32[4]
  output y = a(x)
}
)"));
  EXPECT_TRUE(reported("main.mdl:2:39: error: recursive call to 'a'; blocks "
                       "cannot call themselves, directly or through other "
                       "blocks"));
  EXPECT_EQ(errorCount(), 1u);
}

TEST_F(SemaTest, AssertionFailureShowsTheChainAndStopsTheBlock) {
  EXPECT_FALSE(build(R"(block heads(x: f32[b, c], n: int) -> f32[b, c] {
  assert c % n == 0, "the width must be a multiple of n"
  return reshape(x, [b, n, c / n]) # not elaborated after the assert
}
infer run {
  input x: f32[2, 10]
  output y = heads(x, 3)
}
)"));
  EXPECT_TRUE(reported("main.mdl:2:3: error: assertion failed: the width "
                       "must be a multiple of n"));
  EXPECT_TRUE(reported("main.mdl:7:14: note: in call to 'heads' from here"));
  EXPECT_EQ(errorCount(), 1u);
}

//===----------------------------------------------------------------------===//
// Statements and names
//===----------------------------------------------------------------------===//

TEST_F(SemaTest, RebindingAndRedefinition) {
  EXPECT_FALSE(build(R"(block f(x: f32[n]) -> f32[n] {
  y = x
  let z = x
  let z = x
  for i in 0 .. 2 { i = 3 }
  return x
}
infer run {
  input x: f32[4]
  output y = f(x)
}
)"));
  EXPECT_TRUE(reported("main.mdl:2:3: error: 'y' is not defined; use `let y "
                       "= ...` to define it"));
  EXPECT_TRUE(reported("main.mdl:4:7: error: 'z' is already defined; use `z "
                       "= ...` to rebind it"));
  EXPECT_TRUE(reported("main.mdl:3:7: note: previous definition is here"));
  EXPECT_TRUE(reported("main.mdl:5:21: error: cannot assign to loop variable "
                       "'i'"));
}

TEST_F(SemaTest, ConditionsAndLoopsNeedCompileTimeValues) {
  EXPECT_FALSE(build(R"(block f(x: f32[n]) -> f32[n] {
  if x > 0.0 { return x }
  for i in 0 .. 1000000 { }
  return x
}
infer run {
  input x: f32[4]
  output y = f(x)
}
)"));
  EXPECT_TRUE(reported("main.mdl:2:8: error: the condition of 'if' must be "
                       "a compile-time bool, got bool[4]"));
  EXPECT_TRUE(reported("main.mdl:3:3: error: this 'for' loop would unroll "
                       "1000000 iterations; at most 100000 are allowed"));
}

TEST_F(SemaTest, PoisonedValuesReportOnce) {
  EXPECT_FALSE(build(R"(import "nn"
infer run {
  input x: f32[2, 3]
  let a = x + undefined_name
  let b = nn.linear(a, 4) as fc
  let c = b * 2.0 + a
  output y = c
}
)"));
  EXPECT_TRUE(reported("main.mdl:4:15: error: unknown name 'undefined_name'"));
  EXPECT_EQ(errorCount(), 1u);
}

TEST_F(SemaTest, ABrokenImportPoisonsItsUsesSilently) {
  addFile("broken.mdl", "block g(x: f32[n]) -> f32[n] { return x + }\n");
  EXPECT_FALSE(build(R"(import "broken.mdl"
block f(x: f32[n]) -> f32[n] { return broken.g(x) }
infer run {
  input x: f32[4]
  output y = relu(f(x)) * 2.0
}
)"));
  EXPECT_TRUE(reported("broken.mdl:1:"));
  EXPECT_EQ(errors().find("main.mdl"), std::string::npos) << errors();
}

TEST_F(SemaTest, IndependentErrorsAreAllReported) {
  EXPECT_FALSE(build(R"(infer run {
  input x: f32[2, 3]
  let a = x + nope1
  let b = x + nope2
  let c = relu
  output y = x
}
)"));
  EXPECT_TRUE(reported("main.mdl:3:15: error: unknown name 'nope1'"));
  EXPECT_TRUE(reported("main.mdl:4:15: error: unknown name 'nope2'"));
  EXPECT_TRUE(reported("main.mdl:5:11: error: 'relu' is a built-in "
                       "operation; call it: relu(...)"));
  EXPECT_EQ(errorCount(), 3u);
}

TEST_F(SemaTest, DeepCallChainsEndWithAnError) {
  std::string text;
  for (int i = 0; i < 1000; ++i)
    text += "block b" + std::to_string(i) + "(x: f32[n]) -> f32[n] { return b" +
            std::to_string(i + 1) + "(x) }\n";
  text += "block b1000(x: f32[n]) -> f32[n] { return x }\n"
          "infer run {\n  input x: f32[2]\n  output y = b0(x)\n}\n";
  EXPECT_FALSE(build(text));
  EXPECT_TRUE(reported("error: expressions, statements and block calls are "
                       "nested too deeply (more than 2100 levels)"));
  EXPECT_EQ(errorCount(), 1u);
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

TEST_F(SemaTest, DuplicateParameterNamesSuggestAs) {
  EXPECT_FALSE(build(R"(import "nn"
block twice(x: f32[b, n]) -> f32[b, n] {
  let h = nn.linear(x, n)
  return nn.linear(h, n)
}
infer run {
  input x: f32[2, 3]
  output y = twice(x) as t
}
)"));
  EXPECT_TRUE(reported("std/nn.mdl:3:3: error: parameter 't.weight' is "
                       "created twice"));
  EXPECT_TRUE(reported("main.mdl:4:10: note: in call to 'nn.linear' from "
                       "here"));
  EXPECT_TRUE(reported("main.mdl:8:14: note: in call to 'twice' from here"));
  EXPECT_TRUE(reported("main.mdl:3:11: note: 't.weight' was first created "
                       "by this call"));
  EXPECT_TRUE(reported("note: give one of the calls a scope with `as`"));
  EXPECT_EQ(errorCount(), 1u);
}

TEST_F(SemaTest, DuplicateParameterAcrossEntryCalls) {
  EXPECT_FALSE(build(R"(import "nn"
infer run {
  input x: f32[2, 3]
  let a = nn.linear(x, 3) as fc
  output y = nn.linear(a, 3) as fc
}
)"));
  EXPECT_TRUE(reported("std/nn.mdl:3:3: error: parameter 'fc.weight' is "
                       "created twice"));
  EXPECT_TRUE(reported("main.mdl:5:14: note: in call to 'nn.linear' from "
                       "here"));
  EXPECT_TRUE(reported("main.mdl:4:11: note: 'fc.weight' was first created "
                       "by this call"));
}

TEST_F(SemaTest, ParamInALoopIsCreatedTwice) {
  EXPECT_FALSE(build(R"(block f(x: f32[n]) -> f32[n] {
  for i in 0 .. 2 {
    param w: f32[n] = ones()
    x = x * w
  }
  return x
}
infer run {
  input x: f32[4]
  output y = f(x)
}
)"));
  EXPECT_TRUE(reported("main.mdl:3:5: error: parameter 'w' is created "
                       "twice"));
  EXPECT_TRUE(reported("note: a `param` statement in a `for` loop runs once "
                       "per iteration"));
}

TEST_F(SemaTest, TiedParameterMustExist) {
  EXPECT_FALSE(build(R"(import "nn"
block lm(ids: i32[t]) -> f32[t, 16] {
  let x = nn.embedding(ids, 16, 8) as wte
  return x @ transpose(&wte.weigth)
}
infer run {
  input ids: i32[5]
  output y = lm(ids) as model
}
)"));
  EXPECT_TRUE(reported("main.mdl:4:24: error: '&wte.weigth' does not name a "
                       "parameter created before this point in infer 'run' "
                       "(its full name would be 'model.wte.weigth') (did you "
                       "mean 'model.wte.weight'?)"));
}

TEST_F(SemaTest, BadParameterTypesAndInitialisers) {
  EXPECT_FALSE(build(R"(block f(x: f32[n]) -> f32[n] {
  param a: i32[n] = zeros()
  param b: f32[n] = gaussian(0.0, 1.0)
  param c: f32[n] = normal(0.0, -1.0)
  param d: f32[n] = full()
  param e: bf16[n] = zeros()
  return x
}
infer run {
  input x: f32[4]
  output y = f(x)
}
)"));
  EXPECT_TRUE(reported("main.mdl:2:12: error: parameter 'a' must be f32 or "
                       "f64, got i32[4]"));
  EXPECT_TRUE(reported("main.mdl:3:21: error: unknown initialiser 'gaussian'; "
                       "initialisers are zeros(), ones(), full(value), "
                       "normal(mean, std), uniform(lo, hi), "
                       "kaiming_uniform(fan_in), xavier_uniform(), "
                       "truncated_normal(std)"));
  EXPECT_TRUE(reported("main.mdl:4:21: error: invalid normal(0.0, -1.0): std "
                       "must not be negative"));
  EXPECT_TRUE(reported("main.mdl:5:21: error: 'full' needs argument 'value': "
                       "full(value)"));  EXPECT_TRUE(reported("main.mdl:6:12: error: parameter 'e' must be f32 or "
                       "f64, got bf16[4]; parameters keep f32 master copies: "
                       "`precision = bf16` in a train entry computes in 16 "
                       "bits"));
}

TEST_F(SemaTest, HugeShapesAreRejected) {
  EXPECT_FALSE(build(R"(block f(x: f32[n]) -> f32[n] {
  param w: f32[4000000000, 4000000000, 4000000000] = zeros()
  return x
}
infer run {
  input x: f32[4]
  output y = f(x)
}
)"));
  EXPECT_TRUE(reported("main.mdl:2:12: error: the type of parameter 'w', "
                       "f32[4000000000, 4000000000, 4000000000], has too "
                       "many elements"));
}

} // namespace
