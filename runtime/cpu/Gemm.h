// The CPU's matrix multiplication (modelc_gemm_f32/_f64 of ProgramABI.h) is
// OpenBLAS; this header exposes what the driver reports about it.
#pragma once

namespace modelc::rt {

/// The number of threads OpenBLAS uses for one GEMM.
int gemmThreadCount();

} // namespace modelc::rt
