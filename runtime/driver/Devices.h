// Where a command runs (spec §10 `--gpus`, `--cpu`): the CPU, or one GPU of
// a program built with the cuda target (docs/runtime/cli.md, "Devices").
#pragma once

#include "runtime/driver/Arena.h"
#include "runtime/driver/CommandLine.h"
#include "runtime/driver/Manifest.h"
#include "runtime/driver/RunLog.h"

#include <functional>
#include <memory>
#include <string>

namespace modelc::rt {

struct DeviceChoice {
  bool gpu = false;
  int ordinal = 0; // the CUDA device, when gpu (the first of `ordinals`)
  /// train: the GPUs of the ranks this process runs, rank by rank; empty
  /// when none was asked with --gpus (one GPU, no collectives).
  std::vector<int> ordinals;
  std::string reason; // why the CPU was chosen without --cpu, else empty
};

/// Parses `--gpus` (N = the first N GPUs, "I,J" = these, "all"): a list of
/// device ordinals, or a usage error. Pure; `deviceCount` resolves "all".
Result<std::vector<int>> parseGpuList(const std::string &text, int deviceCount);

/// The device for `cl` and `manifest`: `--cpu` or a program without the
/// cuda target runs on the CPU; `--gpus` asks for GPUs, and it is a usage
/// error (exit 2) when there is none, when the program has no cuda target,
/// when one named is not there, or when a command other than train asks
/// for more than one (train runs one rank per GPU); without
/// either, GPU 0 when one is present, else the CPU with `reason` set.
Result<DeviceChoice> chooseDevice(const CommandLine &cl,
                                  const Manifest &manifest);

/// Opens the chosen GPU and moves `arena`'s work there (a no-op for the
/// CPU). Prints the one-line notice when the CPU was chosen for lack of a
/// GPU.
Status useDevice(const DeviceChoice &choice, const Manifest &manifest,
                 Arena &arena, ProgramIO &io);

/// How the commands reach GPUs: cuda::probe and cuda::Device::open, unless
/// a test put in its own (an emulated device that runs the CPU functions on
/// memory of its own, to check the driver's transfers without a GPU).
struct GpuBackend {
  std::function<cuda::Probe()> probe;
  std::function<Result<std::unique_ptr<cuda::Device>>(int ordinal,
                                                      const Manifest &)>
      open;
};
const GpuBackend &gpuBackend();
/// Replaces the backend until the next call; nullptr restores CUDA's.
void setGpuBackendForTesting(const GpuBackend *backend);

/// "CPU (2 BLAS threads)" or the GPU's description, for banners.
std::string deviceText(const Arena &arena);

} // namespace modelc::rt
