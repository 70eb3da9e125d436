// describe's GPU section: the device arena, the images, and what each
// program function does on the GPU per call — its kernel launches, GEMMs
// and all-reduces (the nodes of its CUDA graph) and how many distinct
// kernels it launches — from the manifest's GpuProgram.
#pragma once

#include "runtime/driver/Manifest.h"

#include <nlohmann/json_fwd.hpp>

#include <ostream>

namespace modelc::rt {

/// The "memory plan (GPU)" and "GPU steps" sections of `describe`;
/// nothing for a program without the cuda target.
void describeGpuText(const Manifest &m, std::ostream &out);

/// The `gpu` object of `describe --json`; null for a program without the
/// cuda target.
nlohmann::ordered_json describeGpuJson(const Manifest &m);

} // namespace modelc::rt
