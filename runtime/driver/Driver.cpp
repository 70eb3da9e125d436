// runProgram: one place that turns a Status into a message and an exit
// status; nothing below it prints errors or exits.
#include "runtime/driver/Driver.h"

#include "runtime/driver/Describe.h"
#include "runtime/driver/Evaluate.h"
#include "runtime/driver/Gradcheck.h"
#include "runtime/driver/Infer.h"
#include "runtime/driver/Trainer.h"

#include <iostream>
#include <unistd.h>

namespace modelc::rt {

namespace {

std::string joined(const std::vector<std::string> &v) {
  std::string out;
  for (const std::string &s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

// This build runs on the CPU only (spec §10 `--gpus`, `--ranks`).
Status checkDevices(const CommandLine &cl, const Manifest &m) {
  if (cl.gpus) {
    if (cl.cpu)
      return Status::error("--cpu and --gpus: choose one");
    if (!m.hasTarget("cuda"))
      return Status::error("--gpus " + *cl.gpus +
                           ": this program was built without the CUDA target "
                           "(targets: " +
                           joined(m.targets) +
                           "); run it on the CPU (the default), or rebuild "
                           "it with modelc --target cuda,cpu");
    return Status::error("--gpus " + *cl.gpus +
                         ": this runtime has no GPU backend yet; run on the "
                         "CPU (the default)");
  }
  if (cl.ranks != 1)
    return Status::error("--ranks " + std::to_string(cl.ranks) +
                         ": this runtime runs one CPU rank; data-parallel "
                         "CPU ranks are not supported yet");
  return Status();
}

Status dispatch(const Manifest &m, const CommandLine &cl, ProgramIO &io) {
  switch (cl.command) {
  case Command::Describe:
    if (cl.json)
      describeJson(m, io.out);
    else
      describeText(m, io.out);
    return Status();
  case Command::Train:
    MODELC_RETURN_IF_ERROR(checkDevices(cl, m));
    return runTraining(m, cl, io);
  case Command::Eval:
    MODELC_RETURN_IF_ERROR(checkDevices(cl, m));
    return runEvaluation(m, cl, io);
  case Command::Infer:
    MODELC_RETURN_IF_ERROR(checkDevices(cl, m));
    return runInference(m, cl, io);
  case Command::Gradcheck:
    return runGradcheck(m, cl, io);
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
  Status status;
  try {
    Result<Manifest> manifest =
        Manifest::load(image.manifest, image.manifestSize, image.functions,
                       image.numFunctions);
    Result<CommandLine> cl =
        manifest ? parseCommandLine(
                       name, std::vector<std::string>(argv + 1, argv + argc))
                 : Result<CommandLine>(manifest.status());
    status = cl ? dispatch(*manifest, *cl, io) : cl.status();
  } catch (const std::exception &e) {
    status = Status::error(std::string("internal error: ") + e.what(),
                           kExitInternal);
  }
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
