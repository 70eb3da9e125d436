// The developer command `OUT gradcheck`: a train entry's compiled gradients
// (its fwd_bwd function) against central finite differences of its loss.
#pragma once

#include "runtime/driver/CommandLine.h"
#include "runtime/driver/Manifest.h"
#include "runtime/driver/RunLog.h"

namespace modelc::rt {

/// The elements checked of a parameter with `count` elements: all of them
/// when count <= limit, else `limit` evenly spaced ones, ⌊k·count/limit⌋.
std::vector<uint64_t> checkedElements(uint64_t count, int64_t limit);

/// The norm-wise relative error of `numeric` against `analytic` (same
/// length): 2-norm of the difference over the larger 2-norm, at least 1e-12.
double relativeGradientError(const std::vector<double> &analytic,
                             const std::vector<double> &numeric);

/// Runs `OUT gradcheck [NAME]`: prints one line per parameter and a verdict
/// on stdout; a failed check is an error with exit status 1.
Status runGradcheck(const Manifest &manifest, const CommandLine &cl,
                    ProgramIO &io);

} // namespace modelc::rt
