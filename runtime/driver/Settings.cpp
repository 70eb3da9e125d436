// `--set KEY=VALUE` (spec §10): parsing and range checks of each settable key
// (the checks torch.optim makes), and the hyper values of docs/pipeline.md.
#include "runtime/driver/Settings.h"

#include <fmt/format.h>

#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>

namespace modelc::rt {

namespace {

std::optional<int64_t> parseInt(const std::string &s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

std::optional<double> parseReal(const std::string &s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])))
    return std::nullopt;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

constexpr int64_t kMaxSeed = int64_t(1) << 53; // exact as the f64 hyper

// One settable key: `apply` parses VALUE into the settings or returns what
// the value should be.
struct Key {
  const char *name;
  std::function<std::optional<std::string>(const std::string &, RunSettings &)>
      apply;
};

Key real(const char *name, double RunSettings::*field, double lo, bool openLo,
         double hi, const char *expected) {
  return {
      name,
      [=](const std::string &s, RunSettings &r) -> std::optional<std::string> {
        std::optional<double> v = parseReal(s);
        if (!v || *v < lo || (openLo && *v == lo) || *v >= hi)
          return std::string(expected);
        r.*field = *v;
        return std::nullopt;
      }};
}

/// A `grad_scaler.` key: a number strictly between lo and hi.
Key scaler(const char *name, double GradScalerInfo::*field, double lo,
           double hi, const char *expected) {
  return {
      name,
      [=](const std::string &s, RunSettings &r) -> std::optional<std::string> {
        std::optional<double> v = parseReal(s);
        if (!v || !(*v > lo && *v < hi))
          return std::string(expected);
        r.gradScaler.value().*field = *v;
        return std::nullopt;
      }};
}

Key integer(const char *name, int64_t RunSettings::*field, int64_t lo,
            const char *expected) {
  return {
      name,
      [=](const std::string &s, RunSettings &r) -> std::optional<std::string> {
        std::optional<int64_t> v = parseInt(s);
        if (!v || *v < lo)
          return std::string(expected);
        r.*field = *v;
        return std::nullopt;
      }};
}

/// An optimizer hyperparameter's key (schema/Optimizers.def).
Key optimizerKey(const optimizers::HyperDef &hyper) {
  return {
      hyper.key,
      [&hyper](const std::string &s,
               RunSettings &r) -> std::optional<std::string> {
        std::optional<double> v = parseReal(s);
        if (!v || !hyper.allows(*v))
          return std::string(hyper.expected);
        *r.optimizer.find(hyper.key) = *v;
        return std::nullopt;
      }};
}

const std::vector<Key> &keys() {
  constexpr double inf = HUGE_VAL;
  static const std::vector<Key> table = [&] {
    std::vector<Key> t;
    for (const optimizers::HyperDef &hyper : optimizers::kHypers)
      t.push_back(optimizerKey(hyper));
    std::vector<Key> rest = {
      real("grad_clip", &RunSettings::gradClip, 0, false, inf,
           "a number >= 0 (0 = off)"),
      {"shuffle",
       [](const std::string &s, RunSettings &r) -> std::optional<std::string> {
         if (s == "true" || s == "1")
           r.shuffle = true;
         else if (s == "false" || s == "0")
           r.shuffle = false;
         else
           return std::string("true or false");
         return std::nullopt;
       }},
      integer("warmup", &RunSettings::warmup, 0, "an integer >= 0"),
      real("min_lr", &RunSettings::minLr, 0, false, inf, "a number >= 0"),
      integer("every", &RunSettings::every, 1, "an integer >= 1"),
      real("gamma", &RunSettings::gamma, 0, true, inf, "a number > 0"),
      {"seed",
       [](const std::string &s, RunSettings &r) -> std::optional<std::string> {
         std::optional<int64_t> v = parseInt(s);
         if (!v || *v < 0 || *v > kMaxSeed)
           return fmt::format("an integer from 0 to {}", kMaxSeed);
         r.seed = uint64_t(*v);
         return std::nullopt;
       }},
      integer("log.every", &RunSettings::logEvery, 1, "an integer >= 1"),
      {"eval.every",
       [](const std::string &s, RunSettings &r) -> std::optional<std::string> {
         std::optional<int64_t> v = s == "epoch" ? 0 : parseInt(s);
         if (!v || *v < 0)
           return std::string("an integer >= 1, or 0 or 'epoch' for every "
                              "epoch");
         r.evalEvery = *v;
         return std::nullopt;
       }},
      integer("eval.steps", &RunSettings::evalSteps, 0,
              "an integer >= 0 (0 = the whole eval set)"),
      integer("checkpoint.every", &RunSettings::checkpointEvery, 0,
              "an integer >= 0 (0 = only at the end)"),
      // torch.amp.GradScaler's checks; precision f16 only.
      scaler("grad_scaler.init_scale", &GradScalerInfo::initScale, 0,
             FLT_MAX, "a number > 0 (at most the largest f32)"),
      scaler("grad_scaler.growth_factor", &GradScalerInfo::growthFactor, 1,
             inf, "a number > 1"),
      scaler("grad_scaler.backoff_factor", &GradScalerInfo::backoffFactor, 0,
             1, "a number between 0 and 1"),
      {"grad_scaler.growth_interval",
       [](const std::string &s, RunSettings &r) -> std::optional<std::string> {
         std::optional<int64_t> v = parseInt(s);
         if (!v || *v < 1)
           return std::string("an integer >= 1");
         r.gradScaler->growthInterval = *v;
         return std::nullopt;
       }},
    };
    t.insert(t.end(), rest.begin(), rest.end());
    return t;
  }();
  return table;
}

std::string validKeys() {
  std::string out;
  for (const std::string &k : settableKeys())
    out += (out.empty() ? "" : ", ") + k;
  return out;
}

} // namespace

const std::vector<std::string> &settableKeys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Key &k : keys())
      v.push_back(k.name);
    return v;
  }();
  return names;
}

Result<RunSettings> resolveSettings(const TrainInfo &entry,
                                    const std::vector<std::string> &sets,
                                    std::optional<uint64_t> seed) {
  RunSettings r;
  r.optimizer = entry.optimizer.hypers;
  r.gradClip = entry.hasGradClip ? entry.gradClip : 0;
  r.minLr = entry.schedule.minLr;
  r.gamma = entry.schedule.gamma;
  r.warmup = entry.schedule.warmup;
  r.every = entry.schedule.every;
  r.seed = uint64_t(entry.seed);
  r.shuffle = entry.shuffle;
  r.logEvery = entry.logEvery;
  r.evalEvery = entry.evalEvery;
  r.evalSteps = entry.evalSteps;
  r.checkpointEvery = entry.checkpointEvery;
  r.gradScaler = entry.gradScaler;
  for (const std::string &set : sets) {
    size_t eq = set.find('=');
    if (eq == std::string::npos)
      return Status::error(fmt::format(
          "--set '{}': expected KEY=VALUE; valid keys: {}", set, validKeys()));
    std::string key = set.substr(0, eq), value = set.substr(eq + 1);
    const Key *found = nullptr;
    for (const Key &k : keys())
      if (key == k.name)
        found = &k;
    if (!found)
      return Status::error(fmt::format(
          "--set {}: unknown key '{}'; valid keys: {}", set, key, validKeys()));
    if (key.rfind("grad_scaler.", 0) == 0 && !r.gradScaler)
      return Status::error(fmt::format(
          "--set {}: train entry '{}' is {}: loss scaling (grad_scaler.*) "
          "is for precision f16 only",
          set, entry.name, entry.precision));
    if (std::optional<std::string> expected = found->apply(value, r))
      return Status::error(
          fmt::format("--set {}: bad value '{}', {} takes {}; valid keys: {}",
                      set, value, key, *expected, validKeys()));
  }
  if (seed)
    r.seed = *seed;
  return r;
}

std::vector<std::pair<std::string, std::string>>
trajectorySettings(const RunSettings &s) {
  auto real = [](double v) { return fmt::format("{:.17g}", v); };
  auto integer = [](int64_t v) { return std::to_string(v); };
  std::vector<std::pair<std::string, std::string>> out;
  for (const optimizers::HyperDef &hyper : optimizers::kHypers)
    out.push_back({hyper.key, real(*s.optimizer.find(hyper.key))});
  std::vector<std::pair<std::string, std::string>> rest = {
      {"grad_clip", real(s.gradClip)},
      {"shuffle", s.shuffle ? "true" : "false"},
      {"warmup", integer(s.warmup)},
      {"min_lr", real(s.minLr)},
      {"every", integer(s.every)},
      {"gamma", real(s.gamma)},
      {"seed", std::to_string(s.seed)}};
  out.insert(out.end(), rest.begin(), rest.end());
  if (const std::optional<GradScalerInfo> &g = s.gradScaler) {
    out.push_back({"grad_scaler.init_scale", real(g->initScale)});
    out.push_back({"grad_scaler.growth_factor", real(g->growthFactor)});
    out.push_back({"grad_scaler.backoff_factor", real(g->backoffFactor)});
    out.push_back(
        {"grad_scaler.growth_interval", integer(g->growthInterval)});
  }
  return out;
}

Result<double> hyperValue(const RunSettings &s, const std::string &key,
                          const StepCounters &c) {
  const std::pair<const char *, double> values[] = {
      {"step", double(c.step)},
      {"total_steps", double(c.totalSteps)},
      {"grad_clip", s.gradClip},
      {"warmup", double(s.warmup)},
      {"min_lr", s.minLr},
      {"every", double(s.every)},
      {"gamma", s.gamma},
      {"seed", double(s.seed)},
      {"rng_counter", double(c.rngCounter)},
      {"optimizer_step", double(c.optimizerStep)},
      {"loss_scale", c.lossScale},
  };
  if (const double *hyper = s.optimizer.find(key))
    return *hyper;
  for (const auto &[name, value] : values)
    if (key == name)
      return value;
  return Status::error("internal error: the manifest has a hyper buffer '" +
                           key + "' this runtime does not know",
                       kExitInternal);
}

} // namespace modelc::rt
