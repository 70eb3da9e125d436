// Checkpoints (spec §10): D/step_N/{model,optimizer}.safetensors and
// state.json, written under D/.step_N.tmp and renamed into place; `keep`
// prunes old ones; resuming takes the newest complete one.
#pragma once

#include "runtime/driver/Weights.h"

namespace modelc::rt {

/// What state.json records besides the tensors.
struct CheckpointState {
  int64_t step = 0;         // optimizer steps done
  int64_t epoch = 0;        // data cursor: the next global batch is batch
  int64_t batchInEpoch = 0; // `batchInEpoch` of epoch `epoch` (0-based)
  uint64_t rngCounter = 0;  // the rng_counter hyper after the last fwd_bwd
  double lossScale = 1;
  std::string sourceHash;
  std::string entry;
  int64_t totalSteps = 0;
  uint64_t seed = 0;
};

/// The tensors a checkpoint holds.
struct CheckpointTensors {
  std::vector<NamedBuffer> params; // model.safetensors
  std::vector<NamedBuffer> state;  // optimizer.safetensors
};

/// Writes D/step_N and, when keep > 0, removes all but the newest `keep`
/// step directories. Returns the directory written.
Result<std::string> writeCheckpoint(const std::string &dir,
                                    const CheckpointState &state,
                                    const CheckpointTensors &tensors,
                                    const Arena &arena, int64_t keep);

/// The newest complete D/step_N (all three files present).
Result<std::string> newestCheckpoint(const std::string &dir);

Result<CheckpointState> readCheckpointState(const std::string &stepDir);

/// Parses the text of a state.json; `path` names it in messages.
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
