// Everything a training run needs, resolved and checked before the first
// step: the entry and its settings, functions, bound data, eval, run
// length and checkpoint configuration.
#pragma once

#include "runtime/dist/Launch.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/Evaluate.h"

#include <optional>

namespace modelc::rt {

struct CheckpointConfig {
  std::string dir; // empty: checkpointing off
  int64_t every = 0;
  int64_t keep = 0;
  std::string resumeFrom; // a D/step_N directory when resuming
  std::string resumeDir;  // D of --resume, also when it holds none yet
  std::string notice;     // printed before the run (--resume found none)
};

struct TrainPlan {
  const TrainInfo *entry = nullptr;
  RunSettings settings;
  modelc_fn fwdBwd = nullptr, update = nullptr;
  std::optional<BoundData> data;
  std::optional<Evaluator> evaluator;
  std::optional<Hypers> hypers;
  std::vector<const BufferInfo *> outputs; // "loss", then the metrics
  const BufferInfo *lr = nullptr;          // optional outputs of update
  const BufferInfo *gradNorm = nullptr;
  const BufferInfo *foundInf = nullptr; // f16: update's inf/NaN verdict
  /// Where this process stands (one process unless --nnodes or a
  /// launcher's variables say otherwise) and the run's ranks over all its
  /// processes.
  dist::LaunchPlan launch;
  int64_t ranks = 1;
  int64_t globalBatch = 0; // batch × accumulate × ranks
  /// The micro-batches each rank takes per step: the entry's, or on a run
  /// resumed on another rank count what keeps the checkpoint's global
  /// batch; `rescaled` then says so for the banner.
  int64_t accumulate = 1;
  std::string rescaled;
  /// A run resumed with --allow-batch-change on another global batch:
  /// the checkpoint's, and where its data cursor lands in batches of the
  /// new one (the samples of the epoch it had consumed, rounded down to a
  /// whole new batch). The step count goes on from the checkpoint's.
  struct BatchChange {
    int64_t fromGlobalBatch = 0;
    int64_t step = 0, epoch = 0, batchInEpoch = 0;
  };
  std::optional<BatchChange> batchChange;
  /// The data cursor's position less the step count (CheckpointState::
  /// cursorShift): the checkpoint's, or after a batch change the new one.
  int64_t cursorShift = 0;
  int64_t stepsPerEpoch = 0;
  int64_t totalSteps = 0;
  CheckpointConfig checkpoint;
  CheckpointTensors tensors;
  /// ZeRO-1: the optimizer state's bytes, which no arena buffer holds
  /// (`tensors.state` is empty; the ranks' shards hold it, Zero.h).
  uint64_t shardedStateBytes = 0;
};

/// Resolves the train command's entry, flags and data (spec §10).
Result<TrainPlan> planTraining(const Manifest &manifest, const CommandLine &cl,
                               int localRanks);

} // namespace modelc::rt
