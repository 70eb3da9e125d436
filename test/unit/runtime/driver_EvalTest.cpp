// The eval command: loss and metrics averaged over full batches of the eval
// set in file order (reference: the same sums in double, tolerance 1e-6
// relative for the f32 outputs), `eval.steps`, and the fallback on the
// training data when the entry declares no eval.
#include "driver_TestProgram.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace modelc::rt::test {
namespace {

class DriverEval : public DriverTest {
protected:
  void SetUp() override {
    DriverTest::SetUp();
    writeWeights(path("w.safetensors"), 1.5f, -0.5f, 0.25f);
  }
  // Mean squared and absolute error of the first `batches` batches of 4.
  void reference(int batches, double &loss, double &mae) const {
    loss = mae = 0;
    for (int i = 0; i < 4 * batches; ++i) {
      double err = 1.5f * evalX[2 * i] + -0.5f * evalX[2 * i + 1] + 0.25f -
                   evalY[size_t(i)];
      loss += err * err;
      mae += std::fabs(err);
    }
    loss /= 4 * batches;
    mae /= 4 * batches;
  }
  nlohmann::json evalLog(const std::vector<std::string> &extra) {
    std::vector<std::string> args{"eval", "--weights", path("w.safetensors"),
                                  "--log", path("eval.jsonl")};
    args.insert(args.end(), extra.begin(), extra.end());
    RunResult r = run(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(linesStartingWith(r.out, "eval loss ").size(), 1u) << r.out;
    return nlohmann::json::parse(readFile(path("eval.jsonl")));
  }
};

TEST_F(DriverEval, AveragesOverTheFullBatchesOfTheEvalSet) {
  nlohmann::json j = evalLog({});
  double loss, mae;
  reference(2, loss, mae); // 10 samples: 2 full batches of 4
  EXPECT_EQ(j["eval"], true);
  EXPECT_FALSE(j.contains("step"));
  EXPECT_NEAR(j["loss"].get<double>(), loss, 1e-6 * loss);
  EXPECT_NEAR(j["mae"].get<double>(), mae, 1e-6 * mae);
}

TEST_F(DriverEval, EvalStepsLimitsTheBatches) {
  nlohmann::json j = evalLog({"--set", "eval.steps=1"});
  double loss, mae;
  reference(1, loss, mae);
  EXPECT_NEAR(j["loss"].get<double>(), loss, 1e-6 * loss);
}

TEST_F(DriverEval, EvalDataOverride) {
  RunResult r =
      run({"eval", "--weights", path("w.safetensors"), "--eval-data",
           "x=" + path("x.npy"), "--eval-data", "y=" + path("y.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("10 batches of 4"), std::string::npos) << r.err;
}

TEST_F(DriverEval, WithoutEvalTheTrainingDataAndFwdBwdStandIn) {
  options.withEval = false;
  RunResult r = run({"eval", "--weights", path("w.safetensors")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("data set 'points', 10 batches of 4"), std::string::npos)
      << r.err;
  EXPECT_EQ(linesStartingWith(r.out, "eval loss ").size(), 1u);
  RunResult bad = run({"eval", "--weights", path("w.safetensors"),
                       "--eval-data", "x=" + path("x.npy")});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("declares no eval data; use --data"),
            std::string::npos)
      << bad.err;
}

} // namespace
} // namespace modelc::rt::test
