// `main` of every program modelc makes: hands the generated object file's
// manifest and function table (runtime/include/modelc/ProgramABI.h) to the
// driver, whose return value is the exit status.
#include "runtime/driver/Driver.h"

int main(int argc, char **argv) {
  return modelc::rt::runProgram(argc, argv,
                                {modelc_manifest, size_t(modelc_manifest_size),
                                 modelc_functions, size_t(modelc_num_functions),
                                 modelc_cpu_kernels,
                                 size_t(modelc_num_cpu_kernels)});
}
