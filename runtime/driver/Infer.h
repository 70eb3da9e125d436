// The infer command: an infer entry over the rows of .npy/.npz inputs, in
// batches of the entry's batch (the last one padded), to .npy or .npz.
#pragma once

#include "runtime/driver/CommandLine.h"
#include "runtime/driver/Manifest.h"
#include "runtime/driver/RunLog.h"

namespace modelc::rt {

Status runInference(const Manifest &manifest, const CommandLine &cl,
                    ProgramIO &io);

} // namespace modelc::rt
