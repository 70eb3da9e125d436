// Checkpoints (spec §10): the directory layout and state.json, `keep`,
// resuming bitwise-identically after a signal or from a periodic
// checkpoint, the newest complete checkpoint winning, and the refusal of
// another model's checkpoint.
#include "driver_TestProgram.h"

#include "runtime/io/Safetensors.h"

#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace modelc::rt::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry &e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(DriverTest, CheckpointLayoutAndState) {
  options.checkpointEvery = 5;
  options.checkpointDir = path("ck");
  ASSERT_EQ(run({}).code, 0);
  EXPECT_EQ(
      entries(path("ck")),
      (std::vector<std::string>{"step_10", "step_15", "step_20", "step_5"}));
  EXPECT_EQ(entries(path("ck/step_10")),
            (std::vector<std::string>{"model.safetensors",
                                      "optimizer.safetensors", "state.json"}));
  nlohmann::ordered_json state =
      nlohmann::ordered_json::parse(readFile(path("ck/step_15/state.json")));
  EXPECT_EQ(state["step"], 15);
  EXPECT_EQ(state["epoch"], 1);
  EXPECT_EQ(state["batch_in_epoch"], 5);
  EXPECT_EQ(state["rng_counter"], 15);
  EXPECT_EQ(state["loss_scale"], 1.0);
  EXPECT_EQ(state["source_hash"], options.sourceHash);
  EXPECT_EQ(state["entry"], "fit");
  EXPECT_EQ(state["total_steps"], 20);
  Result<std::vector<TensorData>> opt =
      readSafetensors(path("ck/step_10/optimizer.safetensors"));
  ASSERT_TRUE(opt.ok());
  ASSERT_EQ(opt->size(), 2u);
  EXPECT_EQ((*opt)[0].name, "momentum.fc.weight");
  EXPECT_EQ((*opt)[1].name, "momentum.fc.bias");
}

TEST_F(DriverTest, CheckpointFlagsAndKeep) {
  options.checkpointKeep = 2;
  ASSERT_EQ(
      run({"--checkpoint-dir", path("ck"), "--checkpoint-every", "3"}).code, 0);
  // Every 3 steps and at the end; only the newest two stay.
  EXPECT_EQ(entries(path("ck")),
            (std::vector<std::string>{"step_18", "step_20"}));
  // A checkpoint directory alone checkpoints only at the end.
  ASSERT_EQ(run({"--checkpoint-dir", path("end")}).code, 0);
  EXPECT_EQ(entries(path("end")), (std::vector<std::string>{"step_20"}));
}

TEST_F(DriverTest, ResumeAfterSigtermIsBitwiseIdentical) {
  options.accumulate = 2; // 5 steps per epoch; the signal lands in epoch 2
  ASSERT_EQ(run({"--epochs", "3", "--save", path("full.safetensors")}).code, 0);
  raiseSignalAt(13, SIGTERM); // during the first micro-batch of step 7
  RunResult stopped = run({"--epochs", "3", "--checkpoint-dir", path("ck")});
  EXPECT_EQ(stopped.code, 143) << stopped.err;
  EXPECT_NE(stopped.err.find("linear: stopped by SIGTERM after step 7; "
                             "checkpoint " +
                             path("ck") + "/step_7"),
            std::string::npos)
      << stopped.err;
  raiseSignalAt(0, 0);
  RunResult resumed = run({"--epochs", "3", "--resume", path("ck"), "--save",
                           path("resumed.safetensors")});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming from " + path("ck") + "/step_7"),
            std::string::npos);
  EXPECT_EQ(linesStartingWith(resumed.out, "step ").front().substr(0, 11),
            "step 10/15 ");
  EXPECT_EQ(readFile(path("full.safetensors")),
            readFile(path("resumed.safetensors")));
}

TEST_F(DriverTest, ResumeFromAPeriodicCheckpointIsBitwiseIdentical) {
  options.checkpointEvery = 3;
  options.checkpointDir = path("ck");
  ASSERT_EQ(run({"--save", path("full.safetensors")}).code, 0);
  for (const std::string &name : entries(path("ck")))
    if (name != "step_3")
      fs::remove_all(path("ck/" + name));
  // An incomplete newer directory is not a checkpoint.
  fs::create_directories(path("ck/step_99"));
  std::ofstream(path("ck/step_99/state.json")) << "{}";
  RunResult resumed = run({"--resume", "--save", path("resumed.safetensors")});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("step_3"), std::string::npos) << resumed.err;
  EXPECT_EQ(readFile(path("full.safetensors")),
            readFile(path("resumed.safetensors")));
}

TEST_F(DriverTest, SigintWithoutCheckpointDirectorySavesNothing) {
  raiseSignalAt(2, SIGINT);
  RunResult r = run({"--save", path("w.safetensors")});
  EXPECT_EQ(r.code, 130);
  EXPECT_NE(r.err.find("stopped by SIGINT after step 2; no checkpoint "
                       "directory, nothing saved"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(path("w.safetensors")));
}

TEST_F(DriverTest, ResumeRefusesAnotherModelsCheckpoint) {
  ASSERT_EQ(run({"--checkpoint-dir", path("ck")}).code, 0);
  options.sourceHash = "0123456789abcdef";
  RunResult r = run({"--resume", path("ck")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is a checkpoint of a different model (source hash " +
                       ProgramOptions().sourceHash +
                       ", this program's is 0123456789abcdef)"),
            std::string::npos)
      << r.err;
}

TEST_F(DriverTest, ResumeOfAFinishedRunChangesNothing) {
  ASSERT_EQ(
      run({"--checkpoint-dir", path("ck"), "--save", path("a.safetensors")})
          .code,
      0);
  RunResult again =
      run({"--resume", path("ck"), "--save", path("b.safetensors")});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_TRUE(linesStartingWith(again.out, "step ").empty());
  EXPECT_EQ(readFile(path("a.safetensors")), readFile(path("b.safetensors")));
}

TEST_F(DriverTest, ResumePastTheEndOfTheRunIsRefused) {
  ASSERT_EQ(run({"--checkpoint-dir", path("ck")}).code, 0);
  RunResult r = run({"--resume", path("ck"), "--steps", "10"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("step_20 is at step 20, past the end of this run (10 "
                       "steps)"),
            std::string::npos)
      << r.err;
}

} // namespace
} // namespace modelc::rt::test
