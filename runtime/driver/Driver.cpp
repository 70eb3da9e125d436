// runProgram: one place that turns a Status into a message and an exit
// status; nothing below it prints errors or exits.
#include "runtime/driver/Driver.h"

#include "runtime/driver/Describe.h"
#include "runtime/driver/Evaluate.h"
#include "runtime/driver/Gradcheck.h"
#include "runtime/driver/Infer.h"
#include "runtime/driver/Kernelcheck.h"
#include "runtime/driver/Trainer.h"
#include "runtime/io/Files.h"

#include <fmt/format.h>

#include <iostream>
#include <new>
#include <sys/resource.h>
#include <unistd.h>

namespace modelc::rt {

namespace {

Status dispatch(const Manifest &m, const CommandLine &cl, ProgramIO &io) {
  switch (cl.command) {
  case Command::Describe:
    if (cl.json)
      describeJson(m, io.out);
    else
      describeText(m, io.out);
    return Status();
  case Command::Train:
    return runTraining(m, cl, io);
  case Command::Eval:
    return runEvaluation(m, cl, io);
  case Command::Infer:
    return runInference(m, cl, io);
  case Command::Gradcheck:
    return runGradcheck(m, cl, io);
  case Command::Kernelcheck:
    return runKernelcheck(m, cl, io);
  case Command::Help:
    io.out << cl.help;
    return Status();
  }
  return Status();
}

} // namespace

int runProgram(int argc, const char *const *argv, const ProgramImage &image,
               ProgramIO &io) {
  std::string name = argc > 0 ? argv[0] : "program";
  name = name.substr(name.find_last_of('/') + 1);
  installMappedFileGuard(name);
  Status status;
  try {
    Result<Manifest> manifest =
        Manifest::load(image.manifest, image.manifestSize, image.functions,
                       image.numFunctions);
    if (manifest) {
      manifest->cpuKernels = image.cpuKernels;
      manifest->numCpuKernels = image.numCpuKernels;
    }
    Result<CommandLine> cl =
        manifest ? parseCommandLine(
                       name, std::vector<std::string>(argv + 1, argv + argc))
                 : Result<CommandLine>(manifest.status());
    status = cl ? dispatch(*manifest, *cl, io) : cl.status();
  } catch (const std::bad_alloc &) {
    struct rlimit limit;
    bool limited =
        ::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
    status = Status::error(
        limited ? fmt::format("out of memory within the address-space limit "
                              "(ulimit -v) of {} KiB; raise the limit",
                              uint64_t(limit.rlim_cur) / 1024)
                : std::string("out of memory: the machine's memory is too "
                              "small for this run"),
        kExitUsage);
  } catch (const std::exception &e) {
    status = Status::error(std::string("internal error: ") + e.what(),
                           kExitInternal);
  }
  // What was printed must have arrived (a full disk, a closed pipe).
  io.out.flush();
  if (!io.out && status.ok())
    status = Status::error("cannot write to the standard output (a full disk "
                           "or a closed pipe?)");
  if (status.ok())
    return kExitOk;
  bool signalled = status.exitCode() > 128;
  io.err << name << (signalled ? ": " : ": error: ") << status.message()
         << "\n";
  return status.exitCode();
}

int runProgram(int argc, const char *const *argv, const ProgramImage &image) {
  ProgramIO io{std::cout, std::cerr, isatty(STDOUT_FILENO) != 0};
  return runProgram(argc, argv, image, io);
}

} // namespace modelc::rt
