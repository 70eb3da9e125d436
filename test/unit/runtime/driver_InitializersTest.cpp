// Parameter initialisers (spec §6): the distributions' bounds and moments
// (moments within 4 standard errors of the expected value), PyTorch's fan
// computation, and determinism: a seed gives the same values, and each
// parameter's values depend only on its own name.
#include "runtime/driver/Initializers.h"

#include <gtest/gtest.h>

#include <cmath>

namespace modelc::rt {
namespace {

ParamInfo param(const std::string &name, InitKind init,
                std::vector<double> args, std::vector<int64_t> shape) {
  return {name, DType::F32, std::move(shape), init, std::move(args), 0};
}

std::vector<float> values(const ParamInfo &p, uint64_t seed) {
  size_t n = 1;
  for (int64_t d : p.shape)
    n *= size_t(d);
  std::vector<float> out(n);
  Status s = initializeParameter(p, seed, out.data());
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

void moments(const std::vector<float> &v, double &mean, double &sd) {
  double sum = 0, sq = 0;
  for (float x : v)
    sum += x, sq += double(x) * x;
  mean = sum / double(v.size());
  sd = std::sqrt(sq / double(v.size()) - mean * mean);
}

TEST(DriverInit, ConstantInitialisers) {
  for (float x : values(param("z", InitKind::Zeros, {}, {3, 4}), 0))
    EXPECT_EQ(x, 0.0f);
  for (float x : values(param("o", InitKind::Ones, {}, {5}), 0))
    EXPECT_EQ(x, 1.0f);
  for (float x : values(param("f", InitKind::Full, {0.25}, {2, 2}), 0))
    EXPECT_EQ(x, 0.25f);
}

TEST(DriverInit, UniformFamiliesStayInTheirBounds) {
  struct Case {
    ParamInfo p;
    double lo, hi;
  } cases[] = {
      {param("u", InitKind::Uniform, {-0.5, 2.0}, {100, 100}), -0.5, 2.0},
      // kaiming_uniform(fan_in): bound 1/sqrt(fan_in).
      {param("k", InitKind::KaimingUniform, {16}, {100, 100}), -0.25, 0.25},
      // xavier_uniform on [64, 32, 3, 3]: fan_in 32*9, fan_out 64*9.
      {param("x", InitKind::XavierUniform, {}, {64, 32, 3, 3}),
       -std::sqrt(6.0 / (288 + 576)), std::sqrt(6.0 / (288 + 576))}};
  for (const Case &c : cases) {
    std::vector<float> v = values(c.p, 1);
    float lo = v[0], hi = v[0];
    for (float x : v)
      lo = std::min(lo, x), hi = std::max(hi, x);
    EXPECT_GE(lo, c.lo) << c.p.name;
    EXPECT_LT(hi, c.hi) << c.p.name;
    // Close to the bounds: the whole range is used.
    EXPECT_LT(lo, c.lo + 0.01 * (c.hi - c.lo)) << c.p.name;
    EXPECT_GT(hi, c.hi - 0.01 * (c.hi - c.lo)) << c.p.name;
    double mean, sd;
    moments(v, mean, sd);
    double expectedSd = (c.hi - c.lo) / std::sqrt(12.0);
    EXPECT_NEAR(mean, (c.lo + c.hi) / 2, 4 * expectedSd / 100) << c.p.name;
  }
}

TEST(DriverInit, NormalAndTruncatedNormal) {
  double mean, sd;
  moments(values(param("n", InitKind::Normal, {1.0, 0.5}, {200, 200}), 3), mean,
          sd);
  EXPECT_NEAR(mean, 1.0, 4 * 0.5 / 200);
  EXPECT_NEAR(sd, 0.5, 0.01);
  // truncated_normal(std): N(0, std²) redrawn outside ±2 std; the standard
  // deviation of that truncation is 0.8796 std.
  std::vector<float> t =
      values(param("t", InitKind::TruncatedNormal, {0.02}, {200, 200}), 3);
  for (float x : t)
    ASSERT_LE(std::fabs(x), 0.04f);
  moments(t, mean, sd);
  EXPECT_NEAR(mean, 0.0, 4 * 0.02 / 200);
  EXPECT_NEAR(sd, 0.02 * 0.8796, 0.02 * 0.015);
}

TEST(DriverInit, DeterministicPerSeedAndPerName) {
  ParamInfo a = param("fc1.weight", InitKind::Normal, {0, 1}, {8, 8});
  EXPECT_EQ(values(a, 5), values(a, 5));
  EXPECT_NE(values(a, 5), values(a, 6));
  // Another parameter of the same shape draws other values, and the values
  // of `a` do not depend on which other parameters exist.
  ParamInfo b = param("fc2.weight", InitKind::Normal, {0, 1}, {8, 8});
  EXPECT_NE(values(a, 5), values(b, 5));
  EXPECT_NE(parameterStream("fc1.weight"), parameterStream("fc2.weight"));
}

TEST(DriverInit, F64Parameters) {
  ParamInfo p = param("d", InitKind::Full, {0.1}, {3});
  p.dtype = DType::F64;
  double out[3];
  ASSERT_TRUE(initializeParameter(p, 0, out).ok());
  EXPECT_EQ(out[2], 0.1);
}

TEST(DriverInit, MalformedInitialisersAreInternalErrors) {
  float out[4];
  for (const ParamInfo &p : {param("a", InitKind::Full, {}, {4}),
                             param("b", InitKind::XavierUniform, {}, {4}),
                             param("c", InitKind::KaimingUniform, {0}, {4})}) {
    Status s = initializeParameter(p, 0, out);
    ASSERT_FALSE(s.ok()) << p.name;
    EXPECT_EQ(s.exitCode(), kExitInternal);
  }
}

} // namespace
} // namespace modelc::rt
