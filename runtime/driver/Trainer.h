// The train command: the training loop of docs/pipeline.md with logging,
// evaluation, checkpoints, resume, signals and divergence.
#pragma once

#include "runtime/driver/CommandLine.h"
#include "runtime/driver/Manifest.h"
#include "runtime/driver/RunLog.h"

namespace modelc::rt {

/// Runs `OUT train`; errors carry the exit status (2 usage, 3 diverged,
/// 128 + signal when stopped by SIGINT/SIGTERM).
Status runTraining(const Manifest &manifest, const CommandLine &cl,
                   ProgramIO &io);

} // namespace modelc::rt
