// The gradcheck command on the hand-written linear regression: the true
// gradient passes (reference: central differences of the f64 loss, which is
// quadratic in the parameters, so they are exact up to rounding: rel_error
// < 1e-8 against a tolerance of 1e-6), a bias gradient off by a factor 2
// fails with rel_error 0.5 and exit 1, and the options, warnings and errors.
#include "driver_TestProgram.h"

#include "runtime/driver/Gradcheck.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Safetensors.h"

#include <cmath>
#include <limits>
#include <regex>

namespace modelc::rt::test {
namespace {

// One parameter's line: name, elements, max_abs_grad, rel_error, verdict.
struct Line {
  std::string name;
  int elements = 0;
  double maxAbsGrad = 0, relError = 0;
  std::string verdict;
};

std::vector<Line> checkLines(const std::string &out) {
  std::regex format(R"(gradcheck (\S+) elements=(\d+) )"
                    R"(max_abs_grad=(\d\.\d{3}e[+-]\d\d) )"
                    R"(rel_error=(\d\.\d{3}e[+-]\d\d) (ok|FAILED))");
  std::vector<Line> lines;
  for (const std::string &l : linesStartingWith(out, "gradcheck ")) {
    std::smatch m;
    if (l == "gradcheck passed" || l.rfind("gradcheck failed", 0) == 0)
      continue;
    EXPECT_TRUE(std::regex_match(l, m, format)) << l;
    if (m.empty())
      continue;
    lines.push_back(
        {m[1], std::stoi(m[2]), std::stod(m[3]), std::stod(m[4]), m[5]});
  }
  return lines;
}

class DriverGradcheck : public DriverTest {
protected:
  void SetUp() override {
    DriverTest::SetUp();
    options.f64 = true;
  }
};

TEST_F(DriverGradcheck, TrueGradientsPass) {
  RunResult r = run({"gradcheck"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  std::vector<Line> lines = checkLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0].name, "fc.weight");
  EXPECT_EQ(lines[0].elements, 2);
  EXPECT_EQ(lines[1].name, "fc.bias");
  EXPECT_EQ(lines[1].elements, 1);
  for (const Line &l : lines) {
    EXPECT_EQ(l.verdict, "ok");
    EXPECT_GT(l.maxAbsGrad, 0);
    EXPECT_LT(l.relError, 1e-8) << l.name;
  }
  EXPECT_EQ(linesStartingWith(r.out, "gradcheck passed").size(), 1u);
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gradcheck fit: the first batch of 4 samples of data "
                       "set 'points', seed 0"),
            std::string::npos)
      << r.err;
}

TEST_F(DriverGradcheck, WrongGradientFailsWithExit1) {
  options.wrongBiasGradient = true;
  RunResult r = run({"gradcheck", "fit"});
  EXPECT_EQ(r.code, 1) << r.err;
  std::vector<Line> lines = checkLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0].verdict, "ok");
  EXPECT_EQ(lines[1].name, "fc.bias");
  EXPECT_EQ(lines[1].verdict, "FAILED");
  // The compiled gradient is half the true one: |g/2 - g| / |g| = 0.5.
  EXPECT_EQ(lines[1].relError, 0.5);
  EXPECT_EQ(linesStartingWith(r.out, "gradcheck failed (1 parameters)").size(),
            1u)
      << r.out;
  EXPECT_NE(r.err.find("linear: error: gradcheck: the compiled gradients of 1 "
                       "of 2 parameters disagree with finite differences"),
            std::string::npos)
      << r.err;
}

TEST_F(DriverGradcheck, ToleranceDecides) {
  options.wrongBiasGradient = true;
  RunResult r = run({"gradcheck", "--tolerance", "0.6"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(linesStartingWith(r.out, "gradcheck passed").size(), 1u) << r.out;
}

TEST_F(DriverGradcheck, AccumulationUsesTheFirstMicroBatchRescaled) {
  options.accumulate = 2; // fwd_bwd scales its gradients by 1/2
  RunResult r = run({"gradcheck"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("accumulate 2: only the first micro-batch is used"),
            std::string::npos)
      << r.err;
  for (const Line &l : checkLines(r.out))
    EXPECT_LT(l.relError, 1e-8) << l.name;
}

TEST_F(DriverGradcheck, InitAndSeedChooseThePoint) {
  double w[2] = {0.25, -0.5}, b = 1.5;
  ASSERT_TRUE(writeSafetensors(path("w64.safetensors"),
                               {{"fc.weight", DType::F64, {1, 2}, w, 16},
                                {"fc.bias", DType::F64, {1}, &b, 8}})
                  .ok());
  RunResult init = run({"gradcheck", "--init", path("w64.safetensors")});
  ASSERT_EQ(init.code, 0) << init.err;
  RunResult seeded = run({"gradcheck", "--seed", "3"});
  ASSERT_EQ(seeded.code, 0) << seeded.err;
  EXPECT_NE(checkLines(init.out)[0].maxAbsGrad,
            checkLines(seeded.out)[0].maxAbsGrad);
  writeWeights(path("w32.safetensors"), 0.25f, -0.5f, 1.5f);
  RunResult narrow = run({"gradcheck", "--init", path("w32.safetensors")});
  EXPECT_EQ(narrow.code, 2);
  EXPECT_NE(narrow.err.find("fc.weight is f32[1, 2], this model's is f64[1, "
                            "2] (tensors are not converted between dtypes)"),
            std::string::npos)
      << narrow.err;
}

TEST_F(DriverGradcheck, MaxElementsLimitsEachParameter) {
  RunResult r = run({"gradcheck", "--max-elements", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<Line> lines = checkLines(r.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].elements, 1);
  EXPECT_EQ(lines[1].elements, 1);
}

TEST_F(DriverGradcheck, F32ProgramsGetAWarning) {
  options.f64 = false;
  // The loss is quadratic: a large step is exact but for f32 rounding.
  RunResult r =
      run({"gradcheck", "--step-size", "1e-2", "--tolerance", "1e-3"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("warning: 2 of 2 parameters are f32 (the first: "
                       "fc.weight); finite differences in f32 cannot reach a "
                       "relative error of 1e-6; rebuild the program with "
                       "modelc --widen-f64"),
            std::string::npos)
      << r.err;
  RunResult tiny = run({"gradcheck", "--step-size", "1e-12"});
  EXPECT_EQ(tiny.code, 2);
  EXPECT_NE(tiny.err.find("--step-size 1e-12: too small to change fc.weight"),
            std::string::npos)
      << tiny.err;
}

TEST_F(DriverGradcheck, NonFiniteLossExits3) {
  std::vector<float> y(40, 1.0f);
  y[2] = std::nanf(""); // in the first batch
  ASSERT_TRUE(writeNpy(path("nan_y.npy"), DType::F32, {40}, y.data()).ok());
  RunResult r = run({"gradcheck", "--data", "y=" + path("nan_y.npy")});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("the loss of the first batch is nan"), std::string::npos)
      << r.err;
  EXPECT_TRUE(linesStartingWith(r.out, "gradcheck").empty());
}

TEST_F(DriverGradcheck, UsageErrors) {
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{"gradcheck", "--step-size", "0"},
        {"gradcheck", "--tolerance", "-1"},
        {"gradcheck", "--max-elements", "0"},
        {"gradcheck", "--step-size", "nan"},
        {"gradcheck", "nosuch"},
        {"gradcheck", "--data", "z=" + path("x.npy")}}) {
    RunResult r = run(args);
    EXPECT_EQ(r.code, 2) << args.back() << ": " << r.err;
    EXPECT_TRUE(linesStartingWith(r.out, "gradcheck").empty());
  }
}

TEST(Gradcheck, CheckedElementsAreEvenlySpaced) {
  EXPECT_EQ(checkedElements(10, 4), (std::vector<uint64_t>{0, 2, 5, 7}));
  EXPECT_EQ(checkedElements(3, 64), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(checkedElements(1000, 1), (std::vector<uint64_t>{0}));
  EXPECT_EQ(checkedElements(0, 64), (std::vector<uint64_t>{}));
}

TEST(Gradcheck, RelativeErrorIsNormWise) {
  EXPECT_EQ(relativeGradientError({3, 4}, {3, 4}), 0);
  EXPECT_EQ(relativeGradientError({3, 4}, {0, 0}), 1);
  EXPECT_EQ(relativeGradientError({2}, {1}), 0.5);
  EXPECT_EQ(relativeGradientError({0, 0}, {0, 0}), 0);
  EXPECT_DOUBLE_EQ(relativeGradientError({1e-13}, {0}), 0.1);
  EXPECT_TRUE(std::isnan(
      relativeGradientError({std::numeric_limits<double>::quiet_NaN()}, {1})));
}

} // namespace
} // namespace modelc::rt::test
