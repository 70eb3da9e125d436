// Sema: what a correct program elaborates to -- specialisation, parameter
// names and scopes, ties, consts and -D, imports, statements, data and the
// normalised settings of entries. Errors are in SemaErrorsTest.cpp.
#include "SemaTestSupport.h"

using namespace modelc;
using modelc::test::SemaTest;

namespace {

using Names = std::vector<std::string>;

TEST_F(SemaTest, IdenticalCallsShareOneSpecialisation) {
  ASSERT_TRUE(build(R"(
block double(x: f32[b, n]) -> f32[b, n] { return x * 2.0 }
infer run {
  input a: f32[4, 8]
  input c: f32[4, 8]
  output y = double(a) + double(c)
}
)")) << errors();
  ASSERT_EQ(program.functions.size(), 1u);
  EXPECT_EQ(program.functions[0].symbol, "double");
  EXPECT_EQ(program.functions[0].key, "double(f32[4, 8])");
  std::vector<const Op *> calls = ops(entry("run")->body, "call");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]->callee, 0);
  EXPECT_EQ(calls[1]->callee, 0);
}

TEST_F(SemaTest, DistinctKeysAreDistinctFunctions) {
  ASSERT_TRUE(build(R"(
block scale(x: f32[b, n], k: float = 2.0) -> f32[b, n] { return x * k }
infer run {
  input a: f32[4, 8]
  input c: f32[4, 6]
  output y = scale(a) + scale(a, k = 2) + scale(a, 3.0)
  output z = scale(c)
}
)")) << errors();
  ASSERT_EQ(program.functions.size(), 3u);
  EXPECT_EQ(program.functions[0].symbol, "scale");
  EXPECT_EQ(program.functions[0].key, "scale(f32[4, 8], k=2.0)");
  EXPECT_EQ(program.functions[1].symbol, "scale_1");
  EXPECT_EQ(program.functions[1].key, "scale(f32[4, 8], k=3.0)");
  EXPECT_EQ(program.functions[2].symbol, "scale_2");
  EXPECT_EQ(program.functions[2].key, "scale(f32[4, 6], k=2.0)");
}

TEST_F(SemaTest, ScopesNameParameters) {
  ASSERT_TRUE(build(R"(
import "nn"
block block2(x: f32[b, n]) -> f32[b, n] {
  let h = nn.linear(x, n) as fc
  return nn.linear(h, n, bias = false) as proj
}
block stack(x: f32[b, n], layers: int) -> f32[b, n] {
  for i in 0 .. layers {
    x = block2(x) as blocks[i]
  }
  return x
}
infer run {
  input a: f32[2, 8]
  output y = stack(a, 2) as model.body[1]
}
)")) << errors();
  EXPECT_EQ(
      paramNames(),
      (Names{"model.body.1.blocks.0.fc.weight", "model.body.1.blocks.0.fc.bias",
             "model.body.1.blocks.0.proj.weight",
             "model.body.1.blocks.1.fc.weight", "model.body.1.blocks.1.fc.bias",
             "model.body.1.blocks.1.proj.weight"}));
  const Function *block2 = function("block2");
  ASSERT_TRUE(block2);
  EXPECT_EQ(slotPaths(*block2), (Names{"fc.weight", "fc.bias", "proj.weight"}));
  // One block2 for both iterations: scopes are not part of the key.
  EXPECT_FALSE(function("block2_1"));
  EXPECT_EQ(param("model.body.1.blocks.1.fc.weight")->type.str(), "f32[8, 8]");
  EXPECT_EQ(param("model.body.1.blocks.1.fc.weight")->init.kind,
            "kaiming_uniform");
}

TEST_F(SemaTest, CallWithoutAsUsesTheCallersScope) {
  ASSERT_TRUE(build(R"(
import "nn"
block head(x: f32[b, n]) -> f32[b, 3] { return nn.linear(x, 3) }
infer run {
  input a: f32[2, 8]
  output y = head(a) as cls
}
)")) << errors();
  EXPECT_EQ(paramNames(), (Names{"cls.weight", "cls.bias"}));
  EXPECT_EQ(slotPaths(*function("head")), (Names{"weight", "bias"}));
}

TEST_F(SemaTest, CallOperandsAreTensorArgumentsThenSlots) {
  ASSERT_TRUE(build(R"(
import "nn"
infer run {
  input a: f32[2, 8]
  output y = nn.linear(a, 3) as fc
}
)")) << errors();
  const Entry *run = entry("run");
  std::vector<const Op *> calls = ops(run->body, "call");
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_EQ(calls[0]->operands.size(), 3u);
  EXPECT_EQ(calls[0]->operands[0], run->body.args[0]);
  std::vector<const Op *> refs = ops(run->body, "param_ref");
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(std::get<std::string>(refs[0]->attrs.at("name").value),
            "fc.weight");
  EXPECT_EQ(calls[0]->operands[1], refs[0]->results[0]);
  EXPECT_EQ(calls[0]->operands[2], refs[1]->results[0]);
  EXPECT_EQ(run->usedParams, (Names{"fc.weight", "fc.bias"}));
  EXPECT_TRUE(run->body.params.empty());
}

TEST_F(SemaTest, TiedParameterInTheSameBlockIsItsOwnSlot) {
  ASSERT_TRUE(build(R"(
import "nn"
block lm(ids: i32[t]) -> f32[t, 16] {
  let x = nn.embedding(ids, 16, 8) as wte
  return x @ transpose(&wte.weight)
}
infer logits {
  input ids: i32[5]
  output y = lm(ids) as model
}
)")) << errors();
  EXPECT_EQ(slotPaths(*function("lm")), (Names{"wte.weight"}));
  EXPECT_EQ(paramNames(), (Names{"model.wte.weight"}));
}

TEST_F(SemaTest, TiedParameterFromACalleeResolvesAtTheEntry) {
  ASSERT_TRUE(build(R"(
import "nn"
block unembed(x: f32[t, d]) -> f32[t, 16] {
  return x @ transpose(&wte.weight)
}
block lm(ids: i32[t]) -> f32[t, 16] {
  return unembed(nn.embedding(ids, 16, 8) as wte)
}
infer logits {
  input ids: i32[5]
  output y = lm(ids) as model
  output z = unembed(nn.embedding(ids, 16, 8) as wte)
}
)")) << errors();
  EXPECT_EQ(slotPaths(*function("unembed")), (Names{"wte.weight (tied)"}));
  // Within lm the tie meets the parameter it names: one slot.
  EXPECT_EQ(slotPaths(*function("lm")), (Names{"wte.weight"}));
  EXPECT_EQ(paramNames(), (Names{"model.wte.weight", "wte.weight"}));
  EXPECT_EQ(entry("logits")->usedParams,
            (Names{"model.wte.weight", "wte.weight"}));
}

TEST_F(SemaTest, EntriesShareParametersByName) {
  ASSERT_TRUE(build(R"(
import "nn"
data d { x: f32[8] = npy("x.npy") }
train fit {
  data = d
  batch = 4
  loss = mean(nn.linear(batch.x, 1) as head)
  optimizer = sgd(0.1)
  steps = 10
}
infer run {
  input x: f32[4, 8]
  output y = nn.linear(x, 1) as head
}
)")) << errors();
  EXPECT_EQ(paramNames(), (Names{"head.weight", "head.bias"}));
  EXPECT_EQ(entry("run")->usedParams, (Names{"head.weight", "head.bias"}));
}

TEST_F(SemaTest, ConstsAndDefines) {
  ASSERT_TRUE(
      build(R"(
import "nn"
const B = 2
const W = B * 3
const LR = 0.5
const NAME = "x"
const BIG = false
infer run {
  input x: f32[B, W]
  output y = x * LR * nn.EPS
}
)",
            {{"B", "5"}, {"LR", "1"}, {"NAME", "\"a b\""}, {"BIG", "true"}}))
      << errors();
  // W sees the overridden B; LR takes the int as a float.
  EXPECT_EQ(entry("run")->body.values[entry("run")->body.args[0]].str(),
            "f32[5, 15]");
  EXPECT_EQ(get<int64_t>(entry("run")->settings, "batch"), 5);
}

TEST_F(SemaTest, TrainSettingsAreNormalisedWithDefaults) {
  ASSERT_TRUE(build(R"(
data d {
  image: u8[4, 4] = idx("img.gz")
  label: u8[] = idx("lbl.gz")
}
data held { image: u8[4, 4] = idx("i2.gz"); label: u8[] = idx("l2.gz") }
train fit {
  optimizer = adam(1e-3)
  let logits = reshape(f32(batch.image), [8, 16])
  loss = cross_entropy(logits, i32(batch.label))
  metrics { acc = accuracy(logits, batch.label) }
  batch = 8
  data = d
  epochs = 2
  eval { data = held }
}
)")) << errors();
  const Entry *fit = entry("fit");
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->dataName, "d");
  EXPECT_EQ(fit->inputNames, (Names{"image", "label"}));
  EXPECT_EQ(fit->outputNames, (Names{"loss", "acc"}));
  EXPECT_EQ(fit->body.values[fit->body.args[0]].str(), "u8[8, 4, 4]");
  EXPECT_EQ(fit->body.values[fit->body.args[1]].str(), "u8[8]");
  const AttrDict &s = fit->settings;
  EXPECT_EQ(get<int64_t>(s, "batch"), 8);
  EXPECT_EQ(get<int64_t>(s, "epochs"), 2);
  EXPECT_FALSE(s.count("steps"));
  EXPECT_FALSE(s.count("grad_clip"));
  EXPECT_FALSE(s.count("checkpoint"));
  EXPECT_EQ(get<int64_t>(s, "accumulate"), 1);
  EXPECT_EQ(get<std::string>(s, "precision"), "f32");
  EXPECT_EQ(get<int64_t>(s, "seed"), 0);
  EXPECT_TRUE(get<bool>(s, "shuffle"));
  const AttrDict &opt = dict(s, "optimizer");
  EXPECT_EQ(get<std::string>(opt, "kind"), "adam");
  EXPECT_DOUBLE_EQ(get<double>(opt, "lr"), 1e-3);
  EXPECT_EQ(get<std::vector<double>>(opt, "betas"),
            (std::vector<double>{0.9, 0.999}));
  EXPECT_DOUBLE_EQ(get<double>(opt, "eps"), 1e-8);
  EXPECT_DOUBLE_EQ(get<double>(opt, "weight_decay"), 0.0);
  EXPECT_EQ(get<std::string>(dict(s, "schedule"), "kind"), "constant");
  EXPECT_EQ(get<int64_t>(dict(s, "log"), "every"), 10);
  EXPECT_EQ(get<std::string>(dict(s, "parallel"), "data"), "gpus");
  EXPECT_EQ(get<int64_t>(dict(s, "parallel"), "zero"), 0);
  EXPECT_DOUBLE_EQ(get<double>(dict(s, "parallel"), "bucket_mb"), 25.0);
  const AttrDict &eval = dict(s, "eval");
  EXPECT_EQ(get<std::string>(eval, "data"), "held");
  EXPECT_EQ(get<int64_t>(eval, "every"), 0);
  EXPECT_EQ(get<int64_t>(eval, "steps"), 0);
}

TEST_F(SemaTest, TrainSettingsGivenExplicitly) {
  ASSERT_TRUE(build(R"(
data d { tokens: u16[9] = windows(file("tokens.bin")) }
train fit {
  data = d
  batch = 2
  loss = mean(f32(batch.tokens))
  optimizer = adamw(lr = 6e-4, betas = [0.9, 0.95], weight_decay = 0.1)
  schedule = warmup_cosine(warmup = 10, min_lr = 6e-5)
  grad_clip = 1
  steps = 100
  accumulate = 4
  precision = bf16
  seed = 7
  shuffle = false
  eval { data = d; every = 50; steps = 5 }
  checkpoint { every = 20 }
  log { every = 1 }
  parallel { data = gpus }
}
)")) << errors();
  const AttrDict &s = entry("fit")->settings;
  EXPECT_EQ(get<int64_t>(s, "steps"), 100);
  EXPECT_DOUBLE_EQ(get<double>(s, "grad_clip"), 1.0);
  EXPECT_EQ(get<std::string>(s, "precision"), "bf16");
  EXPECT_FALSE(get<bool>(s, "shuffle"));
  EXPECT_DOUBLE_EQ(get<double>(dict(s, "optimizer"), "weight_decay"), 0.1);
  EXPECT_EQ(get<int64_t>(dict(s, "schedule"), "warmup"), 10);
  EXPECT_EQ(get<int64_t>(dict(s, "eval"), "every"), 50);
  EXPECT_EQ(get<std::string>(dict(s, "checkpoint"), "dir"), "checkpoints");
  EXPECT_EQ(get<int64_t>(dict(s, "checkpoint"), "keep"), 0);
  ASSERT_EQ(program.dataSets.size(), 1u);
  EXPECT_TRUE(program.dataSets[0].fields[0].source.windows);
  EXPECT_EQ(program.dataSets[0].fields[0].source.kind, "file");
}

TEST_F(SemaTest, ImportsRelativeAndStdlibOnce) {
  addFile("lib/util.mdl", R"(import "nn"
const WIDTH = 3
block head(x: f32[b, n]) -> f32[b, 3] { return nn.linear(x, WIDTH) }
)");
  ASSERT_TRUE(build(R"(
import "nn"
import "lib/util.mdl"
import "nn"
infer run {
  input x: f32[2, 4]
  output y = util.head(x) as h
  output z = nn.linear(x, util.WIDTH) as g
}
)")) << errors();
  EXPECT_TRUE(function("util.head"));
  EXPECT_TRUE(function("nn.linear"));
  EXPECT_EQ(program.sourceHash.size(), 16u);
}

TEST_F(SemaTest, StatementsUnrollDecideAndDestructure) {
  ASSERT_TRUE(build(R"(
block parts(x: f32[b, n], k: int, flip: bool) -> (f32[b, n / k], f32[b, n / k]) {
  assert n % k == 0, "n must divide"
  let (a, c) = split(x, k, axis = -1)
  if flip {
    return c, a
  } else {
    return a, c
  }
}
block sum_to(x: f32[b, n], times: int) -> f32[b, n] {
  let acc = x
  for i in 1 .. times {
    let step = x * i
    acc = acc + step
  }
  return acc
}
infer run {
  input x: f32[2, 8]
  let (p, q) = parts(x, 2, true)
  output y = p + q
  output z = sum_to(x, 4)
}
)")) << errors();
  const Function *parts = function("parts");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->results.size(), 2u);
  EXPECT_EQ(parts->values[parts->results[0]].str(), "f32[2, 4]");
  EXPECT_EQ(ops(*function("sum_to"), "add").size(), 3u);
}

TEST_F(SemaTest, ResultTypesEvaluateExpressionsOfArguments) {
  ASSERT_TRUE(build(R"(
block pool(x: f32[b, c, h, w], k: int, s: int = 2) -> f32[b, c, (h - k) / s + 1, (w - k) / s + 1] {
  return max_pool2d(x, k, stride = s)
}
infer run {
  input x: f32[1, 3, 9, 9]
  output y = pool(x, 3)
}
)")) << errors();
  const Function *pool = function("pool");
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->values[pool->results[0]].str(), "f32[1, 3, 4, 4]");
}

TEST_F(SemaTest, LetMayShadowArgumentsAndIfBranchesDefineNames) {
  ASSERT_TRUE(build(R"(
block f(x: f32[n], bias: bool = true) -> f32[n] {
  if bias {
    param bias: f32[n] = zeros()
    x = x + bias
  } else {
    let unused = 1
  }
  let x = x * 2.0
  return x
}
infer run {
  input x: f32[4]
  output y = f(x) as g
}
)")) << errors();
  EXPECT_EQ(paramNames(), (Names{"g.bias"}));
}

TEST_F(SemaTest, InferEntryInputsOutputsAndBatch) {
  ASSERT_TRUE(build(R"(
infer classify {
  output label = argmax(x, axis = -1)
  input x: f32[16, 10]
}
)")) << errors();
  const Entry *e = entry("classify");
  EXPECT_EQ(e->inputNames, (Names{"x"}));
  EXPECT_EQ(e->outputNames, (Names{"label"}));
  EXPECT_EQ(e->body.values[e->body.results[0]].str(), "i64[16]");
  EXPECT_EQ(get<int64_t>(e->settings, "batch"), 16);
}

TEST_F(SemaTest, SourceHashDependsOnContentsOnly) {
  ASSERT_TRUE(build("const A = 1\n"));
  std::string first = program.sourceHash;
  SourceManager sm2;
  std::ostringstream out2;
  DiagnosticEngine diag2(sm2, out2);
  sm2.addBuffer("elsewhere/other.mdl", "const A = 1\n");
  Program p2;
  FrontendOptions options;
  options.stdlibDir = "std";
  ASSERT_TRUE(buildProgram("elsewhere/other.mdl", options, sm2, diag2, p2));
  EXPECT_EQ(p2.sourceHash, first);
  EXPECT_EQ(p2.mainFile, "elsewhere/other.mdl");
}

} // namespace
