// Device choice and setup (see Devices.h).
#include "runtime/driver/Devices.h"

#include "runtime/cpu/Gemm.h"
#include "runtime/cuda/Device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace modelc::rt {

namespace {

std::string joined(const std::vector<std::string> &v) {
  std::string out;
  for (const std::string &s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool allDigits(const std::string &s) {
  return !s.empty() && s.size() <= 6 &&
         std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::isdigit(c); });
}

} // namespace

Result<std::vector<int>> parseGpuList(const std::string &text,
                                      int deviceCount) {
  auto bad = [&](const std::string &why) {
    return Status::error("--gpus " + text + ": " + why +
                         " (expected N, a list such as 0,2,3, or all)");
  };
  std::vector<int> gpus;
  if (text == "all") {
    for (int i = 0; i < deviceCount; ++i)
      gpus.push_back(i);
    return gpus;
  }
  if (text.find(',') == std::string::npos) {
    if (!allDigits(text))
      return bad("not a number");
    int n = std::stoi(text);
    if (n == 0)
      return bad("no GPUs asked; use --cpu to run on the CPU");
    for (int i = 0; i < n; ++i)
      gpus.push_back(i);
    return gpus;
  }
  // A list; "2," (one element and a trailing comma) names GPU 2 alone.
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma - start);
    if (!allDigits(item))
      return bad("'" + item + "' is not a GPU number");
    int ordinal = std::stoi(item);
    if (std::find(gpus.begin(), gpus.end(), ordinal) != gpus.end())
      return bad("GPU " + item + " is named twice");
    gpus.push_back(ordinal);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (gpus.empty())
    return bad("no GPU named");
  return gpus;
}

namespace {
const GpuBackend *testBackend = nullptr;
} // namespace

const GpuBackend &gpuBackend() {
  static const GpuBackend cudaBackend{cuda::probe, cuda::Device::open};
  return testBackend ? *testBackend : cudaBackend;
}

void setGpuBackendForTesting(const GpuBackend *backend) {
  testBackend = backend;
}

Result<DeviceChoice> chooseDevice(const CommandLine &cl, const Manifest &m) {
  DeviceChoice choice;
  if (cl.gpus && cl.cpu)
    return Status::error("--cpu and --gpus: choose one");
  if (cl.ranks != 1 && cl.command != Command::Train)
    return Status::error("--ranks " + std::to_string(cl.ranks) +
                         ": only train runs data-parallel ranks");
  if (cl.ranks != 1 && cl.gpus)
    return Status::error("--ranks " + std::to_string(cl.ranks) +
                         " and --gpus: --ranks gives CPU ranks (with --cpu); "
                         "--gpus N trains on N GPUs");
  if (cl.ranks != 1 && !cl.cpu && m.hasTarget("cuda") && m.gpuProgram())
    return Status::error("--ranks " + std::to_string(cl.ranks) +
                         ": CPU ranks need --cpu (this program has the CUDA "
                         "target, whose ranks are GPUs: --gpus N)");
  bool hasCuda = m.hasTarget("cuda") && m.gpuProgram();
  if (cl.cpu) {
    if (!m.hasTarget("cpu"))
      return Status::error("--cpu: this program was built without the CPU "
                           "target (targets: " +
                           joined(m.targets) +
                           "); rebuild it with modelc --target cuda,cpu");
    return choice;
  }
  if (cl.gpus) {
    if (!hasCuda)
      return Status::error("--gpus " + *cl.gpus +
                           ": this program was built without the CUDA target "
                           "(targets: " +
                           joined(m.targets) +
                           "); run it with --cpu, or rebuild it with modelc "
                           "--target cuda,cpu");
    cuda::Probe probe = gpuBackend().probe();
    Result<std::vector<int>> gpus = parseGpuList(*cl.gpus, probe.devices);
    if (!gpus)
      return gpus.status();
    if (probe.devices == 0)
      return Status::error("--gpus " + *cl.gpus + ": " + probe.problem +
                           "; run with --cpu to train on the CPU");
    if (gpus->size() > 1 && cl.command != Command::Train)
      return Status::error(fmt::format(
          "--gpus {}: {} GPUs asked, but only train runs on several GPUs "
          "(data-parallel ranks); use --gpus 1, or name one GPU with --gpus I,",
          *cl.gpus, gpus->size()));
    for (int ordinal : *gpus)
      if (ordinal >= probe.devices)
        return Status::error(fmt::format("--gpus {}: there is no GPU {} (this "
                                         "machine has {})",
                                         *cl.gpus, ordinal, probe.devices));
    choice.gpu = true;
    choice.ordinal = gpus->front();
    choice.ordinals = *gpus;
    return choice;
  }
  if (!hasCuda)
    return choice;
  cuda::Probe probe = gpuBackend().probe();
  if (probe.devices == 0) {
    if (!m.hasTarget("cpu"))
      return Status::error(probe.problem + ", and this program was built "
                                           "without the CPU target");
    choice.reason = probe.problem;
    return choice;
  }
  choice.gpu = true;
  return choice;
}

Status useDevice(const DeviceChoice &choice, const Manifest &m, Arena &arena,
                 ProgramIO &io) {
  if (!choice.gpu) {
    if (!choice.reason.empty())
      io.err << "note: " << choice.reason << "; running on the CPU\n";
    return reserveGemmBuffers();
  }
  Result<std::unique_ptr<cuda::Device>> device =
      gpuBackend().open(choice.ordinal, m);
  if (!device)
    return device.status();
  return arena.useDevice(device.take(), m);
}

std::string deviceText(const Arena &arena) {
  if (const cuda::Device *d = arena.device())
    return d->description();
  return fmt::format("CPU ({} BLAS threads)", gemmThreadCount());
}

} // namespace modelc::rt
