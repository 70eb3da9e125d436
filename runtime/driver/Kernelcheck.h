// The kernelcheck developer command (docs/runtime/cli.md, Kernelcheck):
// every step of every function of a cuda,cpu program, run on the GPU and
// on the CPU from the same arena, compared within a tolerance.
#pragma once

#include "runtime/driver/CommandLine.h"
#include "runtime/driver/Manifest.h"
#include "runtime/driver/RunLog.h"

#include <cstdint>
#include <string>

namespace modelc::rt {

/// How far apart two copies of arena bytes are, read as `dtype` elements:
/// an element passes when its bytes are equal, when both are NaN, or, for
/// floating-point types (f32, f64, f16, bf16), when |a - b| <= atol + rtol *
/// max(|a|, |b|); integers and booleans must be equal.
struct ArenaDiff {
  uint64_t elements = 0, mismatches = 0;
  uint64_t worstOffset = 0; // byte offset of the worst element in the range
  double worstA = 0, worstB = 0, worstExcess = 0; // |a-b| / (atol + rtol m)
};
ArenaDiff compareArenaBytes(const uint8_t *a, const uint8_t *b, uint64_t bytes,
                            DType dtype, double rtol, double atol);

/// Runs `OUT kernelcheck`: exit 0 when every step agrees, 1 when one does
/// not (each mismatch named), 2 without a usable GPU.
Status runKernelcheck(const Manifest &manifest, const CommandLine &cl,
                      ProgramIO &io);

} // namespace modelc::rt
