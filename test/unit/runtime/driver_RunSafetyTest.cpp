// A run never loses the user's work (issue 13): outputs checked before the
// first step, the final checkpoint and --save independent of each other,
// a true last good checkpoint on divergence, no stale resumes, restart
// loops (--resume on an empty directory, --time-limit), --log write errors,
// strict state.json.
#include "driver_TestProgram.h"

#include "runtime/driver/Arena.h"
#include "runtime/driver/Checkpoint.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

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

// The "loss" of each step line of a --log file, by step.
std::map<int64_t, double> lossesOf(const std::string &log) {
  std::map<int64_t, double> out;
  for (const std::string &l : linesStartingWith(readFile(log), "{")) {
    nlohmann::json j = nlohmann::json::parse(l);
    if (!j.contains("eval"))
      out[j["step"].get<int64_t>()] = j["loss"].get<double>();
  }
  return out;
}

int64_t lines(const std::string &text) {
  return std::count(text.begin(), text.end(), '\n');
}

// --- preflight -------------------------------------------------------------

TEST_F(DriverTest, SaveIntoAMissingDirectoryFailsBeforeTraining) {
  RunResult r = run({"--save", path("no/such/dir/w.safetensors")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("linear: error: --save " +
                       path("no/such/dir/w.safetensors") +
                       ": the directory " + path("no/such/dir") +
                       " does not exist"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(linesStartingWith(r.out, "step ").empty()) << r.out;
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST_F(DriverTest, UnwritableOutputsFailBeforeTraining) {
  std::ofstream(path("file")) << "x";
  RunResult ck = run({"--checkpoint-dir", path("file/ck")});
  EXPECT_EQ(ck.code, 2) << ck.err;
  EXPECT_NE(ck.err.find("checkpoint directory " + path("file/ck") +
                        ": cannot create it"),
            std::string::npos)
      << ck.err;
  EXPECT_TRUE(linesStartingWith(ck.out, "step ").empty());
  fs::create_directories(path("adir"));
  RunResult save = run({"--save", path("adir")});
  EXPECT_EQ(save.code, 2) << save.err;
  EXPECT_NE(save.err.find("is a directory; give a file name"),
            std::string::npos)
      << save.err;
  RunResult log = run({"--log", path("file/log.jsonl")});
  EXPECT_EQ(log.code, 2) << log.err;
  EXPECT_TRUE(linesStartingWith(log.out, "step ").empty());
}

TEST_F(DriverTest, AFailingFinalCheckpointStillSaves) {
  // After the last step's fwd_bwd, the checkpoint directory becomes a file.
  runAt(20, [&] {
    fs::remove_all(path("ck"));
    std::ofstream(path("ck")) << "in the way";
  });
  RunResult r =
      run({"--checkpoint-dir", path("ck"), "--save", path("w.safetensors")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(fs::exists(path("w.safetensors")));
  EXPECT_NE(r.err.find("the final checkpoint failed: "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("; the trained parameters are in " +
                       path("w.safetensors")),
            std::string::npos)
      << r.err;
  // The same parameters as a run without checkpoints.
  runAt(0, nullptr);
  ASSERT_EQ(run({"--save", path("plain.safetensors")}).code, 0);
  EXPECT_EQ(readFile(path("plain.safetensors")),
            readFile(path("w.safetensors")));
}

TEST_F(DriverTest, AFailingSaveKeepsTheFinalCheckpoint) {
  runAt(20, [&] {
    fs::remove_all(path("out"));
    std::ofstream(path("out")) << "in the way";
  });
  fs::create_directories(path("out"));
  RunResult r = run(
      {"--checkpoint-dir", path("ck"), "--save", path("out/w.safetensors")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--save failed: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; the trained parameters are in the final checkpoint " +
                       path("ck") + "/step_20"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(path("ck/step_20/model.safetensors")));
}

// --- safe writes ----------------------------------------------------------

TEST_F(DriverTest, PlantedLinksAreNotWrittenThrough) {
  std::ofstream(path("victim")) << "precious";
  fs::create_symlink(path("victim"), path("w.safetensors.tmp"));
  fs::create_directories(path("ck"));
  fs::create_symlink(path("victim"), path("ck/.step_20.tmp"));
  ASSERT_EQ(run({"--save", path("w.safetensors"), "--checkpoint-dir",
                 path("ck")})
                .code,
            0);
  EXPECT_EQ(readFile(path("victim")), "precious");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path("w.safetensors"))));
  EXPECT_TRUE(fs::exists(path("ck/step_20/model.safetensors")));
}

TEST_F(DriverTest, ReplacingACheckpointLeavesNoGap) {
  options.checkpointDir = path("ck");
  ASSERT_EQ(run({}).code, 0);
  std::string before = readFile(path("ck/step_20/model.safetensors"));
  // The same run again (allowed: the same run's checkpoints) replaces
  // step_20 by exchange; nothing temporary stays.
  ASSERT_EQ(run({}).code, 0);
  EXPECT_EQ(entries(path("ck")), std::vector<std::string>{"step_20"});
  EXPECT_EQ(readFile(path("ck/step_20/model.safetensors")), before);
  // Leftovers of an interrupted write are cleared at the start of a run.
  fs::create_directories(path("ck/.step_7.tmp.1234.abcdef"));
  ASSERT_EQ(run({}).code, 0);
  EXPECT_EQ(entries(path("ck")), std::vector<std::string>{"step_20"});
}

// --- divergence --------------------------------------------------------------

TEST_F(DriverTest, ResumingFromTheNamedCheckpointReachesTheLastFiniteLoss) {
  options.logEvery = 1;
  std::vector<std::string> args = {
      "--set",  "lr=1e6", "--checkpoint-dir", path("ck"), "--checkpoint-every",
      "1",      "--log",  path("a.jsonl")};
  RunResult r = run(args);
  ASSERT_EQ(r.code, 3) << r.err;
  std::map<int64_t, double> first = lossesOf(path("a.jsonl"));
  ASSERT_FALSE(first.empty());
  int64_t s = first.rbegin()->first + 1; // the step that diverged
  ASSERT_GE(s, 3) << r.err;
  std::string good = path("ck") + "/step_" + std::to_string(s - 2);
  EXPECT_NE(r.err.find("the last good checkpoint is " + good +
                       ": resume from it with a lower learning rate, e.g. "
                       "--resume " +
                       path("ck") + " --set lr=100000"),
            std::string::npos)
      << r.err;
  // Resumed as the message says (same settings): the first step is step
  // s-1 with the same finite loss, bitwise; then it diverges again.
  RunResult again = run({"--set", "lr=1e6", "--resume", path("ck"), "--log",
                         path("b.jsonl"), "--checkpoint-every", "1"});
  EXPECT_EQ(again.code, 3) << again.err;
  EXPECT_NE(again.err.find("resuming from " + good), std::string::npos)
      << again.err;
  std::map<int64_t, double> second = lossesOf(path("b.jsonl"));
  ASSERT_EQ(second.begin()->first, s - 1);
  EXPECT_TRUE(std::isfinite(second.begin()->second));
  EXPECT_EQ(second.begin()->second, first.at(s - 1));
  EXPECT_NE(again.err.find("the last good checkpoint is " + good),
            std::string::npos)
      << again.err;
  // With a lower rate (here none) the resumed run finishes.
  RunResult lower = run({"--set", "lr=0", "--resume", path("ck")});
  EXPECT_EQ(lower.code, 0) << lower.err;
}

TEST_F(DriverTest, CheckpointsRecordWhetherTheirParametersAreFinite) {
  Result<Arena> arena = Arena::allocate(64);
  ASSERT_TRUE(arena.ok());
  BufferInfo w;
  w.dtype = DType::F32;
  w.shape = {2};
  w.bytes = 8;
  CheckpointTensors tensors{{{"w", &w}}, {}};
  auto write = [&](int64_t step, float value) {
    float v[2] = {1.0f, value};
    std::memcpy(arena->at(w), v, sizeof v);
    CheckpointState state;
    state.step = state.totalSteps = step;
    state.paramsFinite = allFinite(tensors.params, *arena);
    return writeCheckpoint(path("ck"), state, tensors, *arena, 1);
  };
  ASSERT_TRUE(write(1, 2.0f).ok());
  ASSERT_TRUE(write(2, INFINITY).ok());
  ASSERT_TRUE(write(3, NAN).ok());
  // keep = 1, but the newest checkpoint with finite parameters stays, and
  // it is the one a resume takes.
  EXPECT_EQ(entries(path("ck")),
            (std::vector<std::string>{"step_1", "step_3"}));
  Result<CheckpointState> s3 = readCheckpointState(path("ck/step_3"));
  ASSERT_TRUE(s3.ok());
  EXPECT_FALSE(s3->paramsFinite);
  Result<std::optional<std::string>> newest = newestCheckpoint(path("ck"));
  ASSERT_TRUE(newest.ok());
  EXPECT_EQ(newest->value_or(""), path("ck/step_1"));
}

// --- stale checkpoints and restart loops ----------------------------------

TEST_F(DriverTest, AnotherRunsCheckpointsAreRefused) {
  ASSERT_EQ(run({"--checkpoint-dir", path("ck")}).code, 0);
  RunResult other = run({"--checkpoint-dir", path("ck"), "--set", "lr=0.01"});
  EXPECT_EQ(other.code, 2) << other.err;
  EXPECT_NE(other.err.find("checkpoint directory " + path("ck") +
                           " holds checkpoints of another run (" + path("ck") +
                           "/step_20 is of lr=0.050000000000000003, this "
                           "run's is 0.01); continue that run with --resume " +
                           path("ck") + ", remove them with "
                                        "--overwrite-checkpoints"),
            std::string::npos)
      << other.err;
  EXPECT_TRUE(linesStartingWith(other.out, "step ").empty());
  RunResult seed = run({"--checkpoint-dir", path("ck"), "--seed", "9"});
  EXPECT_EQ(seed.code, 2) << seed.err;
  EXPECT_NE(seed.err.find("is of seed 0, this run's is 9"), std::string::npos)
      << seed.err;
  RunResult over = run({"--checkpoint-dir", path("ck"), "--set", "lr=0.01",
                        "--overwrite-checkpoints", "--checkpoint-every", "7"});
  EXPECT_EQ(over.code, 0) << over.err;
  EXPECT_NE(over.err.find("removed 1 checkpoint from " + path("ck")),
            std::string::npos)
      << over.err;
  EXPECT_EQ(entries(path("ck")),
            (std::vector<std::string>{"step_14", "step_20", "step_7"}));
}

TEST_F(DriverTest, ResumeOnAnEmptyDirectoryStartsFromTheBeginning) {
  ASSERT_EQ(run({"--save", path("fresh.safetensors")}).code, 0);
  RunResult r = run({"--resume", path("ck"), "--save", path("r.safetensors")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("no checkpoint in " + path("ck") +
                       " yet: starting from the beginning"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(readFile(path("fresh.safetensors")),
            readFile(path("r.safetensors")));
  // Checkpoints went where it resumed from; resuming again is a no-op.
  EXPECT_TRUE(fs::exists(path("ck/step_20/state.json")));
  // A checkpoint of another model there is still refused.
  options.sourceHash = "0123456789abcdef";
  RunResult other = run({"--resume", path("ck")});
  EXPECT_EQ(other.code, 2) << other.err;
  EXPECT_NE(other.err.find("is a checkpoint of a different model"),
            std::string::npos);
}

TEST_F(DriverTest, TimeLimitStopsWithACheckpointThatResumesBitwise) {
  ASSERT_EQ(run({"--save", path("full.safetensors")}).code, 0);
  RunResult r = run({"--time-limit", "0.000001s", "--checkpoint-dir",
                     path("ck"), "--save", path("w.safetensors")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("time limit 0.000001s reached after step 1; "
                       "checkpoint " +
                       path("ck") + "/step_1 (continue with --resume " +
                       path("ck") + "); --save is written when the run ends"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(path("w.safetensors")));
  // The restart loop: the same command with --resume, until it finishes.
  int runs = 0;
  while (!fs::exists(path("w.safetensors")) && runs < 30) {
    RunResult again = run({"--time-limit", "0.000001s", "--resume", path("ck"),
                           "--save", path("w.safetensors")});
    ASSERT_EQ(again.code, 0) << again.err;
    ++runs;
  }
  EXPECT_EQ(runs, 19);
  EXPECT_EQ(readFile(path("full.safetensors")),
            readFile(path("w.safetensors")));
}

TEST_F(DriverTest, KilledAndRelaunchedRunsEndBitwiseEqual) {
  ASSERT_EQ(run({"--save", path("full.safetensors")}).code, 0);
  // SIGTERM at various micro-batches, each relaunch the same command.
  std::vector<uint64_t> killAt = {1, 3, 4, 9, 2, 0};
  uint64_t done = 0;
  for (uint64_t at : killAt) {
    raiseSignalAt(at ? done + at : 0, SIGTERM);
    RunResult r = run({"--resume", path("ck"), "--checkpoint-every", "4",
                       "--save", path("w.safetensors")});
    if (at == 0) {
      ASSERT_EQ(r.code, 0) << r.err;
      break;
    }
    ASSERT_EQ(r.code, 143) << r.err;
    done += at;
  }
  EXPECT_EQ(readFile(path("full.safetensors")),
            readFile(path("w.safetensors")));
}

// --- the log -----------------------------------------------------------------

TEST_F(DriverTest, ALogThatCannotBeWrittenStopsTheRunWithACheckpoint) {
  if (!fs::exists("/dev/full"))
    GTEST_SKIP() << "no /dev/full";
  RunResult r =
      run({"--log", "/dev/full", "--checkpoint-dir", path("ck"), "--save",
           path("w.safetensors")});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--log /dev/full: cannot write: No space left on "
                       "device (--log-errors=warn goes on) after step 5; "
                       "checkpoint " +
                       path("ck") + "/step_5"),
            std::string::npos)
      << r.err;
  RunResult warn = run({"--log", "/dev/full", "--log-errors", "warn",
                        "--save", path("w.safetensors")});
  EXPECT_EQ(warn.code, 0) << warn.err;
  EXPECT_NE(warn.err.find("warning: --log /dev/full: cannot write"),
            std::string::npos)
      << warn.err;
  EXPECT_TRUE(fs::exists(path("w.safetensors")));
}

// --- inputs ------------------------------------------------------------------

TEST_F(DriverTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  RunResult init = run({"--init", path("fifo")});
  EXPECT_EQ(init.code, 2) << init.err;
  EXPECT_NE(init.err.find(path("fifo") + ": not a regular file (a FIFO)"),
            std::string::npos)
      << init.err;
  RunResult data = run({"--data", "x=" + path("fifo")});
  EXPECT_EQ(data.code, 2) << data.err;
  EXPECT_NE(data.err.find("not a regular file (a FIFO)"), std::string::npos)
      << data.err;
}

// --- state.json -------------------------------------------------------------

TEST(CheckpointStateTest, FieldsAreRangeChecked) {
  nlohmann::json good = {{"step", 5},        {"epoch", 0},
                         {"batch_in_epoch", 5}, {"rng_counter", 5},
                         {"loss_scale", 1.0}, {"source_hash", "ab"},
                         {"entry", "fit"},    {"total_steps", 20},
                         {"seed", 0}};
  ASSERT_TRUE(parseCheckpointState(good.dump(), "s.json").ok());
  // f16's loss-scaling state; absent in older checkpoints (0, 0, "").
  nlohmann::json f16 = good;
  f16["loss_scale"] = 32768.0;
  f16["growth_tracker"] = 3;
  f16["skipped_steps"] = 2;
  f16["precision"] = "f16";
  Result<CheckpointState> scaled = parseCheckpointState(f16.dump(), "s.json");
  ASSERT_TRUE(scaled.ok()) << scaled.status().message();
  EXPECT_EQ(scaled->lossScale, 32768.0);
  EXPECT_EQ(scaled->growthTracker, 3);
  EXPECT_EQ(scaled->skippedSteps, 2);
  EXPECT_EQ(scaled->precision, "f16");
  struct Case {
    const char *key;
    nlohmann::json value;
    const char *message;
  };
  const Case cases[] = {
      {"rng_counter", -1, "\"rng_counter\" is -1, outside 0 to"},
      {"seed", -7, "\"seed\" is -7, outside 0 to"},
      {"seed", 9.99e22, "\"seed\" must be an integer"},
      {"epoch", int64_t(9223372036854775807), "\"epoch\" is "
                                              "9223372036854775807, outside 0 "
                                              "to 5"},
      {"cursor_shift", int64_t(-9223372036854775807),
       "\"cursor_shift\" is -9223372036854775807, outside "
       "-4611686018427387904 to 4611686018427387904"},
      {"cursor_shift", "1", "\"cursor_shift\" must be an integer"},
      {"step", "5", "\"step\" must be an integer"},
      {"total_steps", 4, "\"total_steps\" is 4, outside 5 to"},
      {"loss_scale", 0, "\"loss_scale\" must be a finite number > 0"},
      {"skipped_steps", 6, "\"skipped_steps\" is 6, outside 0 to 5"},
      {"growth_tracker", -1, "\"growth_tracker\" is -1, outside 0 to"},
  };
  for (const Case &c : cases) {
    nlohmann::json bad = good;
    bad[c.key] = c.value;
    Result<CheckpointState> s = parseCheckpointState(bad.dump(), "s.json");
    ASSERT_FALSE(s.ok()) << c.key;
    EXPECT_NE(s.status().message().find(std::string("s.json: ") + c.message),
              std::string::npos)
        << s.status().message();
  }
  EXPECT_FALSE(parseCheckpointState("[1]", "s.json").ok());
  Result<CheckpointState> nul = parseCheckpointState(
      good.dump() + std::string("\0garbage", 8), "s.json");
  ASSERT_FALSE(nul.ok());
  EXPECT_NE(nul.status().message().find("a NUL byte at offset"),
            std::string::npos);
  EXPECT_FALSE(parseCheckpointState("{}", "s.json").ok());
}

} // namespace
} // namespace modelc::rt::test
