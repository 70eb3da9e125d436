// Step and eval lines and the JSON log on their own: number formats, the
// tokens_per_s key of token-stream data, and the progress bar's line ending.
#include "runtime/driver/RunLog.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace modelc::rt {
namespace {

TEST(DriverRunLog, PlainStepLineFormat) {
  std::ostringstream out, err;
  ProgramIO io{out, err, false};
  Result<RunLog> log =
      RunLog::open(io, "", false, 2340, {"loss", "accuracy"}, false);
  ASSERT_TRUE(log.ok());
  StepRecord r;
  r.step = 10;
  r.loss = 0.51234;
  r.metrics = {0.8125};
  r.lr = 1e-4;
  r.throughput = 8123.4;
  log->step(r);
  log->eval(10, {0.4, 0.875});
  EXPECT_EQ(out.str(), "step 10/2340 loss 0.5123 accuracy 0.8125 lr 1.0e-04 "
                       "samples/s 8123\n"
                       "eval step 10 loss 0.4000 accuracy 0.8750\n");
}

TEST(DriverRunLog, TokensPerSecondForTokenStreams) {
  std::string path = testing::TempDir() + "driver_runlog.jsonl";
  std::ostringstream out, err;
  ProgramIO io{out, err, false};
  {
    Result<RunLog> log = RunLog::open(io, path, false, 5, {"loss"}, true);
    ASSERT_TRUE(log.ok());
    StepRecord r;
    r.step = 5;
    r.loss = 2;
    r.throughput = 1000;
    r.gradNorm = 0.5;
    log->step(r);
  }
  EXPECT_EQ(out.str(), "step 5/5 loss 2.0000 tokens/s 1000\n");
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line,
            R"({"step":5,"loss":2.0,"tokens_per_s":1000.0,"grad_norm":0.5})");
  std::remove(path.c_str());
}

TEST(DriverRunLog, ProgressBarEndsItsLineBeforeEvalAndAtTheEnd) {
  std::ostringstream out, err;
  ProgramIO io{out, err, true};
  Result<RunLog> log = RunLog::open(io, "", false, 4, {"loss"}, false);
  ASSERT_TRUE(log.ok());
  StepRecord r;
  r.step = 2;
  log->step(r);
  log->eval(2, {1.0});
  r.step = 4;
  log->step(r);
  log->finish();
  EXPECT_EQ(out.str(),
            "\r[============            ] 2/4 loss 0.0000 samples/s 0\x1b[K\n"
            "eval step 2 loss 1.0000\n"
            "\r[========================] 4/4 loss 0.0000 samples/s 0\x1b[K\n");
}

TEST(DriverRunLog, UnwritableLogIsAUsageError) {
  std::ostringstream out, err;
  ProgramIO io{out, err, false};
  Result<RunLog> log =
      RunLog::open(io, "/nonexistent-dir/x.jsonl", false, 1, {"loss"}, false);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().exitCode(), kExitUsage);
  EXPECT_NE(log.status().message().find("--log /nonexistent-dir/x.jsonl"),
            std::string::npos);
}

} // namespace
} // namespace modelc::rt
