// Sema's errors in data declarations and entries: sources, settings (unknown,
// duplicate, missing, wrong kind or range), the loss, batch fields, and the
// shape rules of infer entries.
#include "SemaTestSupport.h"

using namespace modelc;
using modelc::test::SemaTest;

namespace {

/// A train entry with `settings` after a data declaration d (x: f32[8]).
std::string trainWith(const std::string &settings) {
  return "data d { x: f32[8] = npy(\"x.npy\") }\n"
         "train fit {\n" +
         settings + "}\n";
}

//===----------------------------------------------------------------------===//
// Data and entries
//===----------------------------------------------------------------------===//

TEST_F(SemaTest, DataDeclarationErrors) {
  EXPECT_FALSE(build(R"(data d {
  a: u8[4] = csv("a.csv")
  b: u16[4, 4] = windows(file("t.bin"))
  a: u8[4] = idx("a.gz")
  shuffle = true
}
)"));
  EXPECT_TRUE(reported("main.mdl:5:3: error: unknown data setting 'shuffle'; "
                       "data declarations have no settings"));
  EXPECT_TRUE(reported("main.mdl:2:14: error: unknown data source 'csv'"));
  EXPECT_TRUE(reported("main.mdl:3:18: error: windows(...) cuts 1-D windows "
                       "of a token stream; the field type must be 1-D, such "
                       "as u16[T + 1], got u16[4, 4]"));
  EXPECT_TRUE(reported("main.mdl:4:3: error: field 'a' is declared twice in "
                       "data 'd'"));
}

TEST_F(SemaTest, UnknownDuplicateAndMissingSettings) {
  EXPECT_FALSE(build(trainWith("  data = d\n"
                               "  batch = 4\n"
                               "  batch = 8\n"
                               "  epoch = 3\n")));
  EXPECT_TRUE(reported("main.mdl:5:3: error: setting 'batch' is given twice"));
  EXPECT_TRUE(reported("main.mdl:4:3: note: 'batch' is given here"));
  EXPECT_TRUE(reported("main.mdl:6:3: error: unknown setting 'epoch' in train "
                       "'fit' (did you mean 'epochs'?); valid settings: data, "
                       "batch, loss, metrics, optimizer, schedule, grad_clip, "
                       "steps, epochs, accumulate, precision, seed, shuffle, "
                       "eval, checkpoint, log, parallel"));
  EXPECT_TRUE(reported("main.mdl:2:1: error: train 'fit' is missing the "
                       "required settings 'loss', 'optimizer', 'steps' or "
                       "'epochs'"));
}

TEST_F(SemaTest, SettingsOfTheWrongKindOrRange) {
  EXPECT_FALSE(build(trainWith("  data = d\n"
                               "  batch = 0.5\n"
                               "  loss = mean(batch.x)\n"
                               "  optimizer = sgd(0.1, nesterov = true)\n"
                               "  steps = 10\n"
                               "  epochs = 1\n"
                               "  precision = f64\n"
                               "  eval = d\n"
                               "  log { every = 0 }\n")));
  EXPECT_TRUE(reported("main.mdl:4:11: error: setting 'batch' must be a "
                       "compile-time int, got float 0.5"));
  EXPECT_TRUE(reported("main.mdl:6:15: error: invalid 'sgd': nesterov = true "
                       "needs momentum > 0 (as torch.optim.SGD)"));
  EXPECT_TRUE(reported("main.mdl:8:3: error: give either 'steps' or 'epochs', "
                       "not both"));
  EXPECT_TRUE(reported("main.mdl:9:15: error: setting 'precision' must be "
                       "f32, bf16 or f16, got 'f64'"));
  EXPECT_TRUE(reported("main.mdl:10:3: error: 'eval' is a group of settings: "
                       "write `eval { KEY = VALUE; ... }`"));
  EXPECT_TRUE(reported("main.mdl:11:17: error: setting 'log.every' must be at "
                       "least 1, got 0"));
}

TEST_F(SemaTest, LossAndBatchFieldErrors) {
  EXPECT_FALSE(build(trainWith("  data = d\n"
                               "  batch = 4\n"
                               "  loss = batch.x\n"
                               "  metrics { m = batch.y }\n"
                               "  optimizer = adam(1e-3)\n"
                               "  steps = 10\n")));
  EXPECT_TRUE(reported("main.mdl:5:10: error: setting 'loss' must be a "
                       "scalar f32 tensor, got f32[4, 8]; reduce it, e.g. "
                       "with mean(...)"));
  EXPECT_TRUE(reported("main.mdl:6:23: error: the data of train 'fit' has no "
                       "field 'y' (did you mean 'x'?); its fields are x"));
}

TEST_F(SemaTest, InferOutputsKeepTheBatch) {
  EXPECT_FALSE(build(R"(infer run {
  input x: f32[4, 3]
  input z: f32[5, 3]
  output total = sum(x)
}
)"));
  EXPECT_TRUE(reported("main.mdl:3:12: error: input 'z' has 5 rows, but "
                       "input 'x' has 4; all inputs share their first "
                       "(batch) dimension"));
  EXPECT_TRUE(reported("main.mdl:4:18: error: output 'total' is f32[]; "
                       "outputs keep the batch (4 rows) as their first "
                       "dimension"));
}

TEST_F(SemaTest, EntryStatementsThatDoNotBelong) {
  EXPECT_FALSE(build(R"(infer run {
  input x: f32[4]
  batch = 4
  log { every = 1 }
  output y = x
}
)"));
  EXPECT_TRUE(reported("main.mdl:3:3: error: 'batch' is not defined; use "
                       "`let batch = ...` to define it"));
  EXPECT_TRUE(reported("main.mdl:4:3: error: settings groups are not allowed "
                       "in infer 'run', which holds input declarations, let "
                       "bindings, rebindings, asserts and output "
                       "declarations"));
}

TEST_F(SemaTest, EntriesDisagreeOnAParameter) {
  EXPECT_FALSE(build(R"(import "nn"
data d { x: f32[8] = npy("x.npy") }
train fit {
  data = d
  batch = 4
  loss = mean(nn.linear(batch.x, 1) as head)
  optimizer = sgd(0.1)
  steps = 10
}
infer run {
  input x: f32[4, 6]
  output y = nn.linear(x, 1) as head
}
)"));
  EXPECT_TRUE(reported("std/nn.mdl:3:3: error: parameter 'head.weight' is "
                       "f32[1, 6] = kaiming_uniform(6.0) in infer 'run', but "
                       "f32[1, 8] = kaiming_uniform(8.0) in train 'fit'; "
                       "entries share parameters by name"));
  EXPECT_TRUE(reported("main.mdl:12:14: note: in call to 'nn.linear' from "
                       "here"));
  EXPECT_TRUE(reported("main.mdl:6:15: note: created for train 'fit' here"));
}

TEST_F(SemaTest, EvalDataMustMatchTheTrainingData) {
  EXPECT_FALSE(build(R"(data d { x: f32[8] = npy("x.npy") }
data e { x: f32[9] = npy("y.npy") }
train fit {
  data = d
  batch = 4
  loss = mean(batch.x)
  optimizer = sgd(0.1)
  steps = 10
  eval { data = e; every = epoch; stride = 2 }
}
)"));
  EXPECT_TRUE(reported("main.mdl:9:35: error: unknown setting 'stride' in "
                       "'eval { }'; valid settings: data, every, steps"));
  EXPECT_TRUE(reported("main.mdl:9:3: error: eval data 'e' must have the "
                       "fields of the training data 'd': its field 'x' is "
                       "f32[9] per sample, but f32[8] in 'd'"));
}

} // namespace
