// `main` of every program modelc makes: hands the generated object file's
// manifest and function table (runtime/include/modelc/ProgramABI.h) to the
// driver, whose return value is the exit status.
#include "runtime/driver/Driver.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

int main(int argc, char **argv) {
  int status = modelc::rt::runProgram(
      argc, argv,
      {modelc_manifest, size_t(modelc_manifest_size), modelc_functions,
       size_t(modelc_num_functions), modelc_cpu_kernels,
       size_t(modelc_num_cpu_kernels)});
  if (status != 0) {
    // After an error (perhaps out of memory) OpenBLAS's exit handler can
    // wait forever for threads it never started: everything of ours is
    // closed by now, so flush and leave without the exit handlers.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(status);
  }
  return status;
}
