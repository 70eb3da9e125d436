// The CPU's matrix multiplication (modelc_gemm_f32/_f64 of ProgramABI.h) is
// OpenBLAS; this header exposes what the driver reports about it.
#pragma once

#include "runtime/support/Status.h"

namespace modelc::rt {

/// The number of threads OpenBLAS uses for one GEMM.
int gemmThreadCount();

/// Runs one multi-threaded GEMM at start-up, so that OpenBLAS allocates its
/// buffers (hundreds of MiB of address space) before the first step. Under
/// an address-space limit too small for them OpenBLAS spins instead of
/// failing; a watchdog then ends the program with exit 2 and the limit.
Status reserveGemmBuffers();

} // namespace modelc::rt
