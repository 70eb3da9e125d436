// `--set` and the hyper values: the entry's settings, overrides applied in
// order, `--seed` last, and every hyper key of docs/pipeline.md.
#include "runtime/driver/Settings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace modelc::rt {
namespace {

TrainInfo entry() {
  TrainInfo e;
  e.name = "fit";
  e.optimizer.kind = "adamw";
  e.optimizer.hypers.lr = 1e-3;
  e.optimizer.hypers.weight_decay = 0.01;
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
  EXPECT_EQ(r->optimizer.lr, 0.25);
  EXPECT_EQ(r->optimizer.weight_decay, 0.01);
  EXPECT_EQ(r->optimizer.beta2, 0.999);
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

TEST(DriverSettings, GradScalerKeysAreForF16Only) {
  TrainInfo e = entry();
  e.precision = "f16";
  e.gradScaler = GradScalerInfo{};
  Result<RunSettings> r = resolveSettings(
      e,
      {"grad_scaler.init_scale=1024", "grad_scaler.growth_factor=4",
       "grad_scaler.backoff_factor=0.25", "grad_scaler.growth_interval=7"},
      std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->gradScaler->initScale, 1024);
  EXPECT_EQ(r->gradScaler->growthFactor, 4);
  EXPECT_EQ(r->gradScaler->backoffFactor, 0.25);
  EXPECT_EQ(r->gradScaler->growthInterval, 7);
  auto settings = trajectorySettings(*r);
  EXPECT_EQ(settings.back(),
            std::make_pair(std::string("grad_scaler.growth_interval"),
                           std::string("7")));
  // torch.amp.GradScaler's checks.
  for (const char *bad :
       {"grad_scaler.init_scale=0", "grad_scaler.init_scale=1e39",
        "grad_scaler.growth_factor=1", "grad_scaler.backoff_factor=1",
        "grad_scaler.backoff_factor=0", "grad_scaler.growth_interval=0"}) {
    Result<RunSettings> rejected = resolveSettings(e, {bad}, std::nullopt);
    ASSERT_FALSE(rejected.ok()) << bad;
    EXPECT_NE(rejected.status().message().find("bad value"),
              std::string::npos);
  }
  // An entry that is not f16 has no scaler to set.
  TrainInfo bf16 = entry();
  bf16.precision = "bf16";
  Result<RunSettings> refused =
      resolveSettings(bf16, {"grad_scaler.init_scale=2"}, std::nullopt);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "--set grad_scaler.init_scale=2: train entry 'fit' is bf16: loss "
            "scaling (grad_scaler.*) is for precision f16 only");
}

TEST(DriverSettings, HyperValues) {
  Result<RunSettings> r = resolveSettings(entry(), {}, std::nullopt);
  StepCounters c{12, 340, 24, 9, 32768};
  EXPECT_EQ(*hyperValue(*r, "step", c), 12);
  EXPECT_EQ(*hyperValue(*r, "optimizer_step", c), 9);
  EXPECT_EQ(*hyperValue(*r, "loss_scale", c), 32768);
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

TEST(DriverSettings, OptimizerTableIsConsistent) {
  // schema/Optimizers.def: each kind's arguments are hypers, flags or betas,
  // without repeats; each hyper is a --set key with a value for the update.
  namespace opt = optimizers;
  for (const opt::KindDef &kind : opt::kKinds) {
    std::set<std::string> seen;
    for (const opt::ArgDef &arg : kind.args) {
      if (!arg.key)
        break;
      std::string key = arg.key;
      EXPECT_TRUE(seen.insert(key).second) << kind.name << " " << key;
      EXPECT_TRUE(key == "betas" || opt::isFlag(key) || opt::findHyper(key))
          << kind.name << " " << key;
      if (opt::findHyper(key) && !arg.isRequired())
        EXPECT_TRUE(opt::findHyper(key)->allows(arg.defaultValue))
            << kind.name << " " << key;
    }
    EXPECT_EQ(std::string(kind.args[0].key), "lr") << kind.name;
  }
  Result<RunSettings> r = resolveSettings(entry(), {}, std::nullopt);
  const std::vector<std::string> &keys = settableKeys();
  for (const opt::HyperDef &hyper : opt::kHypers) {
    EXPECT_TRUE(opt::Hypers().find(hyper.key)) << hyper.key;
    EXPECT_EQ(*opt::Hypers().find(hyper.key), hyper.defaultValue);
    EXPECT_NE(std::find(keys.begin(), keys.end(), hyper.key), keys.end())
        << hyper.key;
    EXPECT_TRUE(hyperValue(*r, hyper.key, StepCounters{}).ok()) << hyper.key;
    Result<RunSettings> negative = resolveSettings(
        entry(), {std::string(hyper.key) + "=-1"}, std::nullopt);
    EXPECT_FALSE(negative.ok()) << hyper.key;
  }
  Result<RunSettings> rho = resolveSettings(entry(), {"rho=1"}, std::nullopt);
  EXPECT_TRUE(rho.ok());
  EXPECT_FALSE(resolveSettings(entry(), {"beta1=1"}, std::nullopt).ok());
}

} // namespace
} // namespace modelc::rt
