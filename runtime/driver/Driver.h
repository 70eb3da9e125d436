// The entry point of every generated program: parses the command line,
// loads the manifest and runs a command. runtime/main/main.cpp calls it
// with the generated object's symbols; tests call it with hand-made ones.
#pragma once

#include "runtime/driver/RunLog.h"

#include <modelc/ProgramABI.h>

#include <cstddef>
#include <cstdint>

namespace modelc::rt {

/// The generated half of a program (docs/pipeline.md, the program ABI).
struct ProgramImage {
  const uint8_t *manifest;
  size_t manifestSize;
  const modelc_fn *functions;
  size_t numFunctions;
  /// modelc_cpu_kernels: only the kernelcheck command uses them.
  const modelc_kernel_fn *cpuKernels = nullptr;
  size_t numCpuKernels = 0;
};

/// Runs the program and returns its exit status (spec §10): 0, 1 internal
/// error (or a failed gradcheck), 2 usage or input error, 3 diverged, 128 +
/// signal when stopped.
int runProgram(int argc, const char *const *argv, const ProgramImage &image,
               ProgramIO &io);

/// The same on std::cout/std::cerr.
int runProgram(int argc, const char *const *argv, const ProgramImage &image);

} // namespace modelc::rt
