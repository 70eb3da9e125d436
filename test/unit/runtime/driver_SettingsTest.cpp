// `--set` and the hyper values: the entry's settings, overrides applied in
// order, `--seed` last, and every hyper key of docs/pipeline.md.
#include "runtime/driver/Settings.h"

#include <gtest/gtest.h>

namespace modelc::rt {
namespace {

TrainInfo entry() {
  TrainInfo e;
  e.name = "fit";
  e.optimizer = {"adamw", 1e-3, 0.0, 0.01, false, 0.9, 0.999, 1e-8};
  e.schedule = {"warmup_cosine", 100, 1e-5, 1, 0.5};
  e.seed = 7;
  e.logEvery = 10;
  return e;
}

TEST(DriverSettings, EntryValuesWithOverrides) {
  Result<RunSettings> r = resolveSettings(
      entry(),
      {"lr=0.5", "lr=0.25", "shuffle=0", "eval.every=epoch", "grad_clip=1",
       "log.every=3", "checkpoint.every=4", "seed=9"},
      11);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->lr, 0.25);
  EXPECT_EQ(r->weightDecay, 0.01);
  EXPECT_EQ(r->beta2, 0.999);
  EXPECT_FALSE(r->shuffle);
  EXPECT_EQ(r->evalEvery, 0);
  EXPECT_EQ(r->gradClip, 1.0);
  EXPECT_EQ(r->logEvery, 3);
  EXPECT_EQ(r->checkpointEvery, 4);
  EXPECT_EQ(r->warmup, 100);
  EXPECT_EQ(r->seed, 11u); // --seed wins over --set seed
}

TEST(DriverSettings, GradClipIsOffUnlessSet) {
  TrainInfo e = entry();
  e.gradClip = 5;
  e.hasGradClip = false;
  EXPECT_EQ(resolveSettings(e, {}, std::nullopt)->gradClip, 0.0);
  e.hasGradClip = true;
  EXPECT_EQ(resolveSettings(e, {}, std::nullopt)->gradClip, 5.0);
}

TEST(DriverSettings, RangeChecks) {
  for (const char *bad :
       {"lr=-1", "eps=nan", "momentum=inf", "beta2=1.0", "gamma=0", "every=0",
        "warmup=-2", "warmup=1.5", "seed=9007199254740993", "log.every=0",
        "eval.steps=-1", "lr= 1", "weight_decay=1e-3x"}) {
    Result<RunSettings> r = resolveSettings(entry(), {bad}, std::nullopt);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().exitCode(), kExitUsage);
    EXPECT_NE(r.status().message().find("valid keys"), std::string::npos);
  }
}

TEST(DriverSettings, HyperValues) {
  Result<RunSettings> r = resolveSettings(entry(), {}, std::nullopt);
  StepCounters c{12, 340, 24};
  EXPECT_EQ(*hyperValue(*r, "step", c), 12);
  EXPECT_EQ(*hyperValue(*r, "total_steps", c), 340);
  EXPECT_EQ(*hyperValue(*r, "rng_counter", c), 24);
  EXPECT_EQ(*hyperValue(*r, "lr", c), 1e-3);
  EXPECT_EQ(*hyperValue(*r, "min_lr", c), 1e-5);
  EXPECT_EQ(*hyperValue(*r, "warmup", c), 100);
  EXPECT_EQ(*hyperValue(*r, "gamma", c), 0.5);
  EXPECT_EQ(*hyperValue(*r, "seed", c), 7);
  for (const std::string &k : settableKeys())
    if (k.find('.') == std::string::npos && k != "shuffle")
      EXPECT_TRUE(hyperValue(*r, k, c).ok()) << k;
  Result<double> unknown = hyperValue(*r, "temperature", c);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().exitCode(), kExitInternal);
}

} // namespace
} // namespace modelc::rt
