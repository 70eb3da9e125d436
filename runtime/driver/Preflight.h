// Before the first step of a run: every output it will write is checked
// (created or opened, a file tried in each directory), so that a bad path
// fails in a second with exit 2 instead of after hours of training; free
// space is compared with what the run will write; and a checkpoint
// directory holding another run's checkpoints is refused, so that a later
// --resume never picks them up.
#pragma once

#include "runtime/driver/RunLog.h"
#include "runtime/driver/TrainPlan.h"

namespace modelc::rt {

/// The identity of a run that its checkpoints record (state.json): source
/// hash, entry, length, seed and trajectory settings.
CheckpointState runIdentity(const TrainPlan &plan,
                            const std::string &sourceHash);

/// Checks --save and the checkpoint directory (created here), clears the
/// temporary directories an interrupted run left there, and refuses or
/// (--overwrite-checkpoints) removes another run's checkpoints. Warnings
/// and notices go to io.err.
Status preflightTraining(const TrainPlan &plan, const CommandLine &cl,
                         const CheckpointState &identity, ProgramIO &io);

} // namespace modelc::rt
