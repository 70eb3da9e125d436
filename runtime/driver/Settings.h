// The run-time settings of a train entry: the manifest's values with the
// command line's `--set KEY=VALUE` and `--seed` applied, and the f64 hyper
// buffers that the compiled functions read.
#pragma once

#include "runtime/driver/Manifest.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace modelc::rt {

struct RunSettings {
  /// The optimizer's hyperparameters (schema/Optimizers.def).
  optimizers::Hypers optimizer;
  double gradClip = 0, minLr = 0, gamma = 0;
  int64_t warmup = 0, every = 0;
  uint64_t seed = 0;
  bool shuffle = true;
  int64_t logEvery = 10, evalEvery = 0, evalSteps = 0, checkpointEvery = 0;
  /// f16's loss scaling (the entry's `grad_scaler { }` with --set
  /// grad_scaler.KEY applied); absent for f32 and bf16.
  std::optional<GradScalerInfo> gradScaler;
};

/// The keys `--set` accepts, in the order the error message lists them.
const std::vector<std::string> &settableKeys();

/// The entry's settings with `sets` ("KEY=VALUE", applied in order) and then
/// `seed` applied. An unknown key or a bad value is a usage error listing
/// the valid keys.
Result<RunSettings> resolveSettings(const TrainInfo &entry,
                                    const std::vector<std::string> &sets,
                                    std::optional<uint64_t> seed);

/// The settings that change what a run computes (not log, eval or
/// checkpoint intervals), as KEY and an exact VALUE, in a fixed order:
/// checkpoints record them to tell one run from another.
std::vector<std::pair<std::string, std::string>>
trajectorySettings(const RunSettings &settings);

/// Where the optimizer step stands when the hypers are written.
struct StepCounters {
  int64_t step = 0;       // the train step about to run, 1-based
  int64_t totalSteps = 0; // S
  uint64_t rngCounter = 0;
  /// The optimizer's own count for this step (torch's state['step']): step
  /// less the steps f16's loss scaling skipped.
  int64_t optimizerStep = 0;
  double lossScale = 1; // what the backward multiplies the loss by
};

/// The value of the hyper buffer `key` (docs/pipeline.md); an unknown key is
/// an internal error.
Result<double> hyperValue(const RunSettings &settings, const std::string &key,
                          const StepCounters &counters);

} // namespace modelc::rt
