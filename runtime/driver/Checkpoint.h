// Checkpoints (spec §10): D/step_N/{model,optimizer}.safetensors and
// state.json, written under a new D/.step_N.tmp.XXXXXX and renamed into
// place (an existing step_N is exchanged with it, never removed first);
// `keep` prunes old ones; resuming takes the newest complete one. A
// checkpoint whose parameters made the next step's loss non-finite is
// renamed step_N.diverged, so that no resume picks it up.
#pragma once

#include "runtime/driver/Weights.h"

#include <optional>
#include <utility>

namespace modelc::rt {

/// What state.json records besides the tensors.
struct CheckpointState {
  int64_t step = 0;         // optimizer steps done
  int64_t epoch = 0;        // data cursor: the next global batch is batch
  int64_t batchInEpoch = 0; // `batchInEpoch` of epoch `epoch` (0-based)
  uint64_t rngCounter = 0;  // the rng_counter hyper after the last fwd_bwd
  /// f16's loss scaling: the scale for the next step and GradScaler's
  /// growth tracker (1 and 0 in other precisions), and the steps whose
  /// update it skipped (the optimizer's own step count is step less these).
  double lossScale = 1;
  int64_t growthTracker = 0;
  int64_t skippedSteps = 0;
  std::string precision; // the entry's; "" in older checkpoints
  /// The data-parallel ranks and the micro-batches each took per step: a
  /// run resumed on another rank count keeps ranks x accumulate (the global
  /// batch). 1 and 0 (= the entry's) in older checkpoints.
  int64_t ranks = 1;
  int64_t accumulate = 0;
  /// Where the data cursor is (epoch × steps per epoch + batch in epoch)
  /// less the step count: 0, except after a resume with
  /// --allow-batch-change, whose steps before it counted other batches.
  int64_t cursorShift = 0;
  std::string sourceHash;
  std::string entry;
  int64_t totalSteps = 0;
  uint64_t seed = 0;
  /// Whether every parameter was finite when it was written.
  bool paramsFinite = true;
  /// The settings that shape the run's trajectory (trajectorySettings in
  /// Settings.h), KEY and exact VALUE: with the source hash, entry, length
  /// and seed they tell one run's checkpoints from another's. Absent (empty)
  /// in checkpoints of older programs.
  std::vector<std::pair<std::string, std::string>> settings;
};

/// The tensors a checkpoint holds.
struct CheckpointTensors {
  std::vector<NamedBuffer> params; // model.safetensors
  std::vector<NamedBuffer> state;  // optimizer.safetensors
  /// Where `state` is when not in the run's arena: ZeRO-1's whole state,
  /// gathered from the ranks' shards (Zero.h).
  Arena *stateArena = nullptr;
};

/// Writes D/step_N and, when keep > 0, removes all but the newest `keep`
/// step directories (and never the newest one with finite parameters).
/// Returns the directory written.
Result<std::string> writeCheckpoint(const std::string &dir,
                                    const CheckpointState &state,
                                    const CheckpointTensors &tensors,
                                    const Arena &arena, int64_t keep);

/// The newest complete D/step_N (all three files present) whose parameters
/// were finite; nullopt when D does not exist or holds none.
Result<std::optional<std::string>> newestCheckpoint(const std::string &dir);

/// The newest complete checkpoint of D at step <= maxStep with finite
/// parameters; nullopt when there is none.
Result<std::optional<std::string>> lastGoodCheckpoint(const std::string &dir,
                                                      int64_t maxStep);

/// Renames D/step_N to D/step_N.diverged (replacing an older one); nothing
/// to do when there is no D/step_N. Returns the new name, or "".
Result<std::string> markDiverged(const std::string &dir, int64_t step);

/// Why the complete checkpoints in D are not those of the run `identity`
/// describes (source hash, entry, length, seed, settings): "" when they all
/// are, or D holds none; else the first difference, naming the checkpoint.
Result<std::string> foreignCheckpoint(const std::string &dir,
                                      const CheckpointState &identity);

/// Removes every step_N, step_N.diverged and leftover temporary directory
/// of D (--overwrite-checkpoints); returns how many checkpoints went.
Result<int64_t> removeCheckpoints(const std::string &dir);

/// Removes the temporary directories (.step_N.tmp.*) an interrupted write
/// left in D.
Status removeTemporaries(const std::string &dir);

/// The bytes one checkpoint of these tensors takes on disk (approximately:
/// the tensors plus headers).
uint64_t checkpointBytes(const CheckpointTensors &tensors);

Result<CheckpointState> readCheckpointState(const std::string &stepDir);

/// Parses the text of a state.json; `path` names it in messages. Every
/// field is type- and range-checked.
Result<CheckpointState> parseCheckpointState(const std::string &text,
                                             const std::string &path);

/// Reads a checkpoint made by this model (same source hash and entry) into
/// the arena; a different model's checkpoint is a usage error.
Result<CheckpointState> restoreCheckpoint(const std::string &stepDir,
                                          const std::string &sourceHash,
                                          const std::string &entry,
                                          const CheckpointTensors &tensors,
                                          Arena &arena);

} // namespace modelc::rt
