// The training loop end to end on the hand-written linear regression: step
// and eval lines, the JSON log, run length, accumulation, --save/--init,
// determinism from the seed, data overrides and divergence (exit 3).
#include "driver_TestProgram.h"

#include "runtime/io/Npy.h"
#include "runtime/io/Safetensors.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>

namespace modelc::rt::test {
namespace {

std::vector<float> floats(const TensorData &t) {
  std::vector<float> v(t.bytes.size() / 4);
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

double lossOf(const std::string &line) {
  return std::stod(line.substr(line.find(" loss ") + 6));
}

TEST_F(DriverTest, TrainsAndPrintsPlainLines) {
  RunResult r = run({});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> steps = linesStartingWith(r.out, "step ");
  ASSERT_EQ(steps.size(), 4u) << r.out; // log.every 5 over 2 epochs of 10
  std::regex line(R"(step (\d+)/20 loss \d+\.\d{4} mae \d+\.\d{4} )"
                  R"(lr 5\.0e-02 samples/s \d+)");
  for (size_t i = 0; i < steps.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(steps[i], m, line)) << steps[i];
    EXPECT_EQ(m[1], std::to_string(5 * (i + 1)));
  }
  EXPECT_LT(lossOf(steps.back()), lossOf(steps.front()));
  // Eval every epoch (eval_every 0), and not again at the end.
  std::vector<std::string> evals = linesStartingWith(r.out, "eval ");
  ASSERT_EQ(evals.size(), 2u) << r.out;
  EXPECT_TRUE(std::regex_match(
      evals[0], std::regex(R"(eval step 10 loss \d+\.\d{4} mae \d+\.\d{4})")))
      << evals[0];
  EXPECT_NE(r.err.find("train fit: CPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("batch 4 x accumulate 1 x ranks 1 (global batch 4), 20 steps"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("parameters 3"), std::string::npos) << r.err;
}

TEST_F(DriverTest, JsonLogHasOneObjectPerLoggedStepAndEval) {
  ASSERT_EQ(run({"--log", path("log.jsonl"), "--set", "log.every=7"}).code, 0);
  std::vector<nlohmann::ordered_json> lines;
  for (const std::string &l :
       linesStartingWith(readFile(path("log.jsonl")), "{"))
    lines.push_back(nlohmann::ordered_json::parse(l));
  ASSERT_EQ(lines.size(), 5u); // steps 7, eval 10, 14, 20, eval 20
  std::vector<std::string> keys;
  for (auto &[k, v] : lines[0].items())
    keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"step", "loss", "mae", "lr",
                                            "samples_per_s", "grad_norm"}));
  EXPECT_EQ(lines[0]["step"], 7);
  EXPECT_EQ(lines[0]["lr"].get<double>(), double(0.05f));
  EXPECT_GT(lines[0]["grad_norm"].get<double>(), 0);
  EXPECT_EQ(lines[1]["eval"], true);
  EXPECT_EQ(lines[1]["step"], 10);
  EXPECT_EQ(lines[3]["step"], 20);
  EXPECT_EQ(lines[4]["step"], 20);
  EXPECT_EQ(lines[4]["eval"], true);
}

TEST_F(DriverTest, TerminalGetsAProgressBar) {
  terminal = true;
  RunResult r = run({"--steps", "6"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\r[========"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("] 6/6 loss "), std::string::npos) << r.out;
  EXPECT_TRUE(linesStartingWith(r.out, "step ").empty());
}

TEST_F(DriverTest, RunLengthFromFlags) {
  RunResult steps = run({"--steps", "3"});
  ASSERT_EQ(steps.code, 0) << steps.err;
  EXPECT_EQ(linesStartingWith(steps.out, "step ").back().substr(0, 9),
            "step 3/3 ");
  RunResult epochs = run({"--epochs", "3", "--set", "eval.every=100"});
  ASSERT_EQ(epochs.code, 0) << epochs.err;
  EXPECT_EQ(linesStartingWith(epochs.out, "step ").back().substr(0, 11),
            "step 30/30 ");
  EXPECT_EQ(linesStartingWith(epochs.out, "eval ").size(), 1u); // the end
  options.accumulate = 2; // 5 steps of 8 samples per epoch
  RunResult acc = run({});
  ASSERT_EQ(acc.code, 0) << acc.err;
  EXPECT_EQ(linesStartingWith(acc.out, "step ").back().substr(0, 11),
            "step 10/10 ");
}

TEST_F(DriverTest, SameSeedSameParametersOtherSeedOthers) {
  ASSERT_EQ(run({"--save", path("a.safetensors")}).code, 0);
  ASSERT_EQ(run({"--save", path("b.safetensors")}).code, 0);
  ASSERT_EQ(run({"--save", path("c.safetensors"), "--seed", "1"}).code, 0);
  EXPECT_EQ(readFile(path("a.safetensors")), readFile(path("b.safetensors")));
  EXPECT_NE(readFile(path("a.safetensors")), readFile(path("c.safetensors")));
}

TEST_F(DriverTest, SaveWritesF32InManifestOrder) {
  ASSERT_EQ(run({"--steps", "2", "--save", path("w.safetensors")}).code, 0);
  Result<std::vector<TensorData>> saved =
      readSafetensors(path("w.safetensors"));
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  ASSERT_EQ(saved->size(), 2u);
  EXPECT_EQ((*saved)[0].name, "fc.weight");
  EXPECT_EQ((*saved)[0].dtype, DType::F32);
  EXPECT_EQ((*saved)[0].shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ((*saved)[1].name, "fc.bias");
}

TEST_F(DriverTest, InitStartsFromTheGivenParameters) {
  writeWeights(path("init.safetensors"), 0.5f, -0.25f, 2.0f);
  // lr 0: the update leaves the parameters as they were loaded.
  ASSERT_EQ(run({"--init", path("init.safetensors"), "--steps", "2", "--set",
                 "lr=0", "--save", path("out.safetensors")})
                .code,
            0);
  Result<std::vector<TensorData>> out =
      readSafetensors(path("out.safetensors"));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(floats((*out)[0]), (std::vector<float>{0.5f, -0.25f}));
  EXPECT_EQ(floats((*out)[1]), (std::vector<float>{2.0f}));
}

TEST_F(DriverTest, InitMustMatchTheModel) {
  float w[3] = {1, 2, 3}, b = 0;
  ASSERT_TRUE(writeSafetensors(path("extra.safetensors"),
                               {{"fc.weight", DType::F32, {1, 2}, w, 8},
                                {"fc.bias", DType::F32, {1}, &b, 4},
                                {"fc.scale", DType::F32, {1}, &b, 4}})
                  .ok());
  RunResult extra = run({"--init", path("extra.safetensors")});
  EXPECT_EQ(extra.code, 2);
  EXPECT_NE(extra.err.find("unexpected fc.scale"), std::string::npos)
      << extra.err;
  ASSERT_TRUE(writeSafetensors(path("missing.safetensors"),
                               {{"fc.weight", DType::F32, {1, 2}, w, 8}})
                  .ok());
  RunResult missing = run({"--init", path("missing.safetensors")});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("missing fc.bias"), std::string::npos)
      << missing.err;
  ASSERT_TRUE(writeSafetensors(path("shape.safetensors"),
                               {{"fc.weight", DType::F32, {2, 1}, w, 8},
                                {"fc.bias", DType::F32, {1}, &b, 4}})
                  .ok());
  RunResult shape = run({"--init", path("shape.safetensors")});
  EXPECT_EQ(shape.code, 2);
  EXPECT_NE(shape.err.find("fc.weight is f32[2, 1], this model's is f32[1, 2]"),
            std::string::npos)
      << shape.err;
  EXPECT_EQ(run({"--init", path("none.safetensors")}).code, 2);
}

TEST_F(DriverTest, DataOverridesReplaceSources) {
  RunResult r = run({"--data", "x=" + path("eval_x.npy"), "--data",
                     "y=" + path("eval_y.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  // 10 samples: 2 steps per epoch.
  EXPECT_EQ(linesStartingWith(r.out, "step ").back().substr(0, 9), "step 4/4 ");
  RunResult mixed = run({"--data", "y=" + path("eval_y.npy")});
  EXPECT_EQ(mixed.code, 2);
  EXPECT_NE(mixed.err.find("points"), std::string::npos) << mixed.err;
}

TEST_F(DriverTest, NonFiniteLossExits3NamingTheLastGoodCheckpoint) {
  std::vector<float> x(80, 0.5f), y(40, 1.0f);
  y[22] = std::nanf(""); // in step 6 without shuffling (batch 4)
  ASSERT_TRUE(writeNpy(path("nan_x.npy"), DType::F32, {40, 2}, x.data()).ok());
  ASSERT_TRUE(writeNpy(path("nan_y.npy"), DType::F32, {40}, y.data()).ok());
  options.trainX = path("nan_x.npy");
  options.trainY = path("nan_y.npy");
  options.shuffle = false;
  RunResult r = run({"--checkpoint-dir", path("ck"), "--checkpoint-every", "1",
                     "--save", path("never.safetensors")});
  EXPECT_EQ(r.code, 3) << r.err;
  // Step 5's parameters lead to the NaN of step 6: set aside; step 4's led
  // to a finite step 5.
  EXPECT_NE(r.err.find("training diverged at step 6: the loss is nan; the "
                       "checkpoint of step 5 leads to it (kept as " +
                       path("ck") + "/step_5.diverged); the last good "
                                    "checkpoint is " +
                       path("ck") + "/step_4: resume from it"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::exists(path("ck/step_5.diverged/state.json")));
  EXPECT_FALSE(std::filesystem::exists(path("ck/step_5")));
  EXPECT_FALSE(std::filesystem::exists(path("never.safetensors")));
  nlohmann::json state =
      nlohmann::json::parse(readFile(path("ck/step_4/state.json")));
  EXPECT_EQ(state["step"], 4);
  EXPECT_EQ(state["rng_counter"], 4);
  EXPECT_EQ(state["params_finite"], true);
  // Without periodic checkpoints there is none to name.
  RunResult none = run({"--checkpoint-dir", path("ck2")});
  EXPECT_EQ(none.code, 3) << none.err;
  EXPECT_NE(none.err.find("there is no good checkpoint"), std::string::npos)
      << none.err;
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'),
            std::count(r.err.begin(), r.err.end(), '\n'));
}

} // namespace
} // namespace modelc::rt::test
