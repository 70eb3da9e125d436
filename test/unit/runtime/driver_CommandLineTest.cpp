// The program's command line (spec §10): what each command parses to, and
// every usage error exiting 2 with one message that names the problem.
#include "driver_TestProgram.h"
#include "runtime/driver/Devices.h"

#include "runtime/driver/CommandLine.h"

namespace modelc::rt::test {
namespace {

CommandLine parse(std::vector<std::string> args) {
  Result<CommandLine> cl = parseCommandLine("prog", std::move(args));
  EXPECT_TRUE(cl.ok()) << cl.status().message();
  return cl.ok() ? *cl : CommandLine();
}

TEST(DriverCommandLine, TrainIsTheDefaultCommand) {
  CommandLine cl = parse({"--steps", "5", "--set", "lr=0.1", "--set",
                          "shuffle=false", "--data", "x=a.npy", "--seed", "3"});
  EXPECT_EQ(cl.command, Command::Train);
  EXPECT_EQ(cl.entry, "");
  EXPECT_EQ(cl.steps, 5);
  EXPECT_EQ(cl.sets, (std::vector<std::string>{"lr=0.1", "shuffle=false"}));
  ASSERT_EQ(cl.data.size(), 1u);
  EXPECT_EQ(cl.data[0].field, "x");
  EXPECT_EQ(cl.data[0].path, "a.npy");
  EXPECT_EQ(cl.seed, 3u);
  EXPECT_FALSE(cl.resume);
}

TEST(DriverCommandLine, TrainTakesAnEntryNameAndOptionalResumeDir) {
  CommandLine bare = parse({"train", "fit", "--resume"});
  EXPECT_EQ(bare.entry, "fit");
  EXPECT_TRUE(bare.resume);
  EXPECT_EQ(bare.resumeDir, "");
  CommandLine withDir = parse({"--resume", "ckpt", "--steps", "2"});
  EXPECT_TRUE(withDir.resume);
  EXPECT_EQ(withDir.resumeDir, "ckpt");
  EXPECT_EQ(withDir.steps, 2);
}

TEST(DriverCommandLine, EvalInferDescribe) {
  CommandLine e = parse({"eval", "--weights", "w.safetensors", "--log", "l"});
  EXPECT_EQ(e.command, Command::Eval);
  EXPECT_EQ(e.weights, "w.safetensors");
  CommandLine i =
      parse({"infer", "predict", "--weights", "w", "--input", "x=a.npy",
             "--input", "z=b.npz:k", "--output", "o.npz"});
  EXPECT_EQ(i.command, Command::Infer);
  EXPECT_EQ(i.entry, "predict");
  ASSERT_EQ(i.inputs.size(), 2u);
  EXPECT_EQ(i.inputs[1].path, "b.npz:k");
  EXPECT_EQ(i.output, "o.npz");
  CommandLine d = parse({"describe", "--json"});
  EXPECT_EQ(d.command, Command::Describe);
  EXPECT_TRUE(d.json);
}

// A number out of range is named with what is wanted, not CLI11's range
// (which printed DBL_MAX in full: 309 digits).
TEST(DriverCommandLine, NumbersOutOfRangeSayWhatIsWanted) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--steps", "0"}, "--steps: must be positive, not 0"},
      {{"--epochs", "-3"}, "--epochs: must be positive, not -3"},
      {{"--cpu", "--ranks", "0"}, "--ranks: must be positive, not 0"},
      {{"--checkpoint-every", "-1"},
       "--checkpoint-every: must not be negative, not -1"},
      {{"kernelcheck", "--rtol", "-0.5"},
       "--rtol: must not be negative, not -0.5"},
  };
  for (const auto &[args, message] : cases) {
    Result<CommandLine> cl = parseCommandLine("prog", args);
    ASSERT_FALSE(cl.ok()) << message;
    EXPECT_EQ(cl.status().message(), message);
    EXPECT_EQ(cl.status().exitCode(), kExitUsage);
  }
  // Zero where zero is allowed; text that is no number is the
  // conversion's error.
  EXPECT_EQ(parse({"--checkpoint-every", "0"}).checkpointEvery, 0);
  Result<CommandLine> text = parseCommandLine("prog", {"--steps", "x"});
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("--steps"), std::string::npos);
}

TEST(DriverCommandLine, HelpListsCommandsAndOptions) {
  CommandLine top = parse({"--help"});
  EXPECT_EQ(top.command, Command::Help);
  for (const char *c : {"train", "eval", "infer", "describe"})
    EXPECT_NE(top.help.find(c), std::string::npos) << c;
  CommandLine train = parse({"train", "--help"});
  EXPECT_NE(train.help.find("--checkpoint-every"), std::string::npos);
}

class DriverUsage : public DriverTest {
protected:
  // Runs `args`, expects exit 2 and an error naming `expected`.
  void expectUsage(const std::vector<std::string> &args,
                   const std::string &expected) {
    RunResult r = run(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("linear: error: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
};

TEST_F(DriverUsage, BadFlagsAndValues) {
  expectUsage({"--bogus"}, "--bogus");
  expectUsage({"--steps", "0"}, "--steps");
  expectUsage({"--steps", "abc"}, "abc");
  expectUsage({"--steps", "3", "--epochs", "1"}, "give one of them");
  expectUsage({"--data", "nopath"}, "expected NAME=PATH");
  expectUsage({"--seed", "-1"}, "--seed");
  expectUsage({"eval"}, "--weights");
  expectUsage({"infer", "--weights", "w", "--input", "x=a.npy"}, "--output");
  expectUsage({"train", "nosuch"}, "no train entry named 'nosuch'; the train "
                                   "entries are: fit");
  expectUsage({"infer", "nosuch", "--weights", "w", "--input", "x=a.npy",
               "--output", "o.npy"},
              "the infer entries are: predict, predict1");
}

TEST_F(DriverUsage, DevicesThisBuildDoesNotHave) {
  expectUsage({"--gpus", "1"},
              "this program was built without the CUDA target");
  expectUsage({"--gpus", "0"},
              "this program was built without the CUDA target");
  expectUsage({"--cpu", "--gpus", "0"}, "--cpu and --gpus");
  // CPU ranks are for train, and not with --gpus.
  expectUsage({"eval", "--cpu", "--ranks", "2", "--weights", "w"},
              "--ranks 2: only train runs data-parallel ranks");
  expectUsage({"--ranks", "2", "--gpus", "1"}, "--ranks 2 and --gpus");
  expectUsage({"--cpu", "--ranks", "2", "--timeout", "soon"},
              "--timeout soon: expected a duration");
  options.targets = {"cuda"};
  options.withGpu = true;
  expectUsage({"--cpu"}, "this program was built without the CPU target");
}

// A cuda,cpu program on a machine without a CUDA driver (forced with
// MODELC_LIBCUDA, so that this also holds on a GPU machine).
class DriverWithoutGpu : public DriverUsage {
protected:
  void SetUp() override {
    DriverUsage::SetUp();
    ::setenv("MODELC_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    options.targets = {"cuda", "cpu"};
    options.withGpu = true;
  }
  void TearDown() override {
    ::unsetenv("MODELC_LIBCUDA");
    DriverUsage::TearDown();
  }
};

TEST_F(DriverWithoutGpu, CpuRanksNeedCpu) {
  expectUsage({"--ranks", "2"}, "--ranks 2: CPU ranks need --cpu");
}

TEST_F(DriverWithoutGpu, GpusIsAUsageError) {
  expectUsage({"--gpus", "1"}, "--gpus 1: no CUDA driver");
  expectUsage({"--gpus", "1"}, "run with --cpu to train on the CPU");
  expectUsage({"eval", "--gpus", "1", "--weights", "w.safetensors"},
              "--gpus 1: no CUDA driver");
  expectUsage({"--gpus", "0"}, "no GPUs asked; use --cpu");
  expectUsage({"--gpus", "x"}, "--gpus x: not a number");
  expectUsage({"--gpus", "0,0"}, "GPU 0 is named twice");
}

TEST_F(DriverWithoutGpu, DefaultRunsOnTheCpuAfterANotice) {
  options.steps = 2;
  RunResult r = run({});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("note: no CUDA driver"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; running on the CPU\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("train fit: CPU ("), std::string::npos) << r.err;
  // --cpu asks for the CPU: no notice.
  r = run({"--cpu"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("note:"), std::string::npos) << r.err;
}

TEST(GpuList, Parses) {
  auto list = [](const std::string &text, int devices) {
    Result<std::vector<int>> r = parseGpuList(text, devices);
    return r ? *r : std::vector<int>{-1};
  };
  EXPECT_EQ(list("1", 8), std::vector<int>({0}));
  EXPECT_EQ(list("3", 8), std::vector<int>({0, 1, 2}));
  EXPECT_EQ(list("2,", 8), std::vector<int>({2}));
  EXPECT_EQ(list("0,2,3", 8), std::vector<int>({0, 2, 3}));
  EXPECT_EQ(list("all", 2), std::vector<int>({0, 1}));
  EXPECT_EQ(list("all", 0), std::vector<int>());
  for (const char *bad : {"0", "", ",", "a", "1,a", "-1", "1,1", "1.5"})
    EXPECT_FALSE(parseGpuList(bad, 8).ok()) << bad;
}

TEST_F(DriverUsage, SetListsTheValidKeys) {
  const std::string keys =
      "valid keys: lr, weight_decay, momentum, beta1, beta2, eps, alpha, "
      "lr_decay, initial_accumulator_value, rho, grad_clip, shuffle, warmup, "
      "min_lr, every, gamma, seed, log.every, eval.every, eval.steps, "
      "checkpoint.every";
  expectUsage({"--set", "lrr=0.1"}, "unknown key 'lrr'; " + keys);
  expectUsage({"--set", "lr=abc"},
              "bad value 'abc', lr takes a number >= 0; " + keys);
  expectUsage({"--set", "beta1=1"}, "a number in [0, 1)");
  expectUsage({"--set", "shuffle=maybe"}, "true or false");
  expectUsage({"--set", "rho=1.5"}, "rho takes a number in [0, 1]");
  expectUsage({"--set", "lr"}, "expected KEY=VALUE; " + keys);
}

TEST_F(DriverUsage, DataOverridesNameKnownFields) {
  expectUsage({"--data", "z=foo.npy"},
              "data set 'points' has no field 'z'; its fields are: x, y");
  expectUsage({"--eval-data", "q=foo.npy"},
              "data set 'points_eval' has no field 'q'");
  expectUsage({"--data", "x=" + path("missing.npy")}, "missing.npy");
}

TEST_F(DriverUsage, ResumeNeedsADirectoryAndExcludesInit) {
  expectUsage({"--resume"}, "--resume: no checkpoint directory");
  expectUsage({"--resume", path("d"), "--overwrite-checkpoints"},
              "--overwrite-checkpoints and --resume");
  expectUsage({"--time-limit", "soon"}, "--time-limit soon: expected a "
                                        "duration");
  expectUsage({"--resume", path("d"), "--init", "w.safetensors"},
              "--init and --resume");
}

TEST_F(DriverUsage, DataSmallerThanOneStep) {
  options.batch = 32;
  options.accumulate = 2;
  expectUsage({}, "has 40 samples, fewer than one step's batch 32 x "
                  "accumulate 2 x ranks 1 = 64");
}

} // namespace
} // namespace modelc::rt::test
