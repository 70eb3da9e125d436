// describe's GPU section (DescribeGpu.h): counts of each function's GPU
// steps per call, and per optimizer step of each train entry.
#include "runtime/driver/DescribeGpu.h"

#include "runtime/driver/Text.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace modelc::rt {

namespace {

namespace fb = modelc::manifest;
using Json = nlohmann::ordered_json;

/// What one call of a program function runs on the GPU.
struct GpuFunctionCounts {
  std::string symbol;
  size_t launches = 0, gemms = 0, allReduces = 0;
  /// The distinct kernels among its launches.
  size_t kernels = 0;
  /// The nodes of its CUDA graph on one GPU: launches and GEMMs (an
  /// all-reduce is a collective only with several ranks).
  size_t nodes() const { return launches + gemms; }
};

std::vector<GpuFunctionCounts> countGpuSteps(const fb::GpuProgram &gpu) {
  std::vector<GpuFunctionCounts> counts;
  if (!gpu.functions())
    return counts;
  for (const fb::GpuFunction *f : *gpu.functions()) {
    GpuFunctionCounts c;
    c.symbol = f->symbol() ? f->symbol()->str() : "";
    std::set<uint32_t> kernels;
    if (f->steps())
      for (const fb::GpuStep *s : *f->steps()) {
        switch (s->kind()) {
        case fb::GpuStepKind::Launch:
          ++c.launches;
          kernels.insert(s->kernel());
          break;
        case fb::GpuStepKind::Gemm:
          ++c.gemms;
          break;
        case fb::GpuStepKind::AllReduce:
          ++c.allReduces;
          break;
        }
      }
    c.kernels = kernels.size();
    counts.push_back(std::move(c));
  }
  return counts;
}

size_t gpuKernelCount(const fb::GpuProgram &gpu) {
  return gpu.kernels() ? gpu.kernels()->size() : 0;
}

/// "sm_80 (PTX 12.3 KiB), sm_90 (cubin 20.1 KiB)", parts summed.
std::string gpuImagesText(const fb::GpuProgram &gpu) {
  std::vector<std::pair<std::string, uint64_t>> images;
  if (gpu.images())
    for (const fb::GpuImage *image : *gpu.images()) {
      std::string name = fmt::format(
          "{} ({}", image->arch() ? image->arch()->str() : "?",
          image->kind() == fb::GpuImageKind::Cubin ? "cubin" : "PTX");
      uint64_t bytes = image->data() ? image->data()->size() : 0;
      auto same = std::find_if(images.begin(), images.end(),
                               [&](auto &i) { return i.first == name; });
      if (same != images.end())
        same->second += bytes;
      else
        images.push_back({name, bytes});
    }
  std::string text;
  for (const auto &[name, bytes] : images)
    text += fmt::format("{}{} {})", text.empty() ? "" : ", ", name,
                        formatBytes(bytes));
  return text.empty() ? "none" : text;
}

/// A train entry's GPU nodes per optimizer step: `accumulate` calls of its
/// fwd_bwd and one of its update.
std::optional<size_t> nodesPerStep(const Manifest &m, const TrainInfo &e,
                                   const std::vector<GpuFunctionCounts> &c) {
  std::optional<size_t> fwdBwd, update;
  for (size_t i = 0; i < m.functions.size() && i < c.size(); ++i) {
    if (m.functions[i].entry != e.name)
      continue;
    if (m.functions[i].kind == FunctionKind::FwdBwd)
      fwdBwd = c[i].nodes();
    else if (m.functions[i].kind == FunctionKind::Update)
      update = c[i].nodes();
  }
  if (!fwdBwd || !update)
    return std::nullopt;
  return size_t(e.accumulate) * *fwdBwd + *update;
}

} // namespace

void describeGpuText(const Manifest &m, std::ostream &out) {
  const fb::GpuProgram *gpu = m.gpuProgram();
  if (!gpu)
    return;
  out << fmt::format("\nmemory plan (GPU)\n  arena       {} ({} bytes)\n"
                     "  workspace   {} ({} bytes, cuBLASLt)\n",
                     formatBytes(gpu->arena_bytes()), gpu->arena_bytes(),
                     formatBytes(gpu->workspace_bytes()),
                     gpu->workspace_bytes());
  out << fmt::format("  kernels     {} distinct\n", gpuKernelCount(*gpu));
  out << "  images      " << gpuImagesText(*gpu) << "\n";
  std::vector<GpuFunctionCounts> counts = countGpuSteps(*gpu);
  out << "\nGPU steps per call (launches and GEMMs are CUDA graph nodes)\n";
  size_t width = 0;
  for (const GpuFunctionCounts &c : counts)
    width = std::max(width, c.symbol.size());
  for (const GpuFunctionCounts &c : counts)
    out << fmt::format("  {:<{}}  {} launches of {} kernels, {} GEMMs, {} "
                       "all-reduces\n",
                       c.symbol, width, c.launches, c.kernels, c.gemms,
                       c.allReduces);
  for (const TrainInfo &e : m.train)
    if (std::optional<size_t> nodes = nodesPerStep(m, e, counts))
      out << fmt::format("  per optimizer step of {}: {} nodes ({} x fwd_bwd "
                         "+ update)\n",
                         e.name, *nodes, e.accumulate);
}

Json describeGpuJson(const Manifest &m) {
  const fb::GpuProgram *gpu = m.gpuProgram();
  if (!gpu)
    return Json();
  Json images = Json::array();
  if (gpu->images())
    for (const fb::GpuImage *image : *gpu->images())
      images.push_back(
          {{"arch", image->arch() ? image->arch()->str() : ""},
           {"kind", image->kind() == fb::GpuImageKind::Cubin ? "cubin" : "ptx"},
           {"part", image->part()},
           {"bytes", image->data() ? image->data()->size() : 0}});
  std::vector<GpuFunctionCounts> counts = countGpuSteps(*gpu);
  Json functions = Json::array();
  for (const GpuFunctionCounts &c : counts)
    functions.push_back({{"name", c.symbol},
                         {"launches", c.launches},
                         {"gemms", c.gemms},
                         {"all_reduces", c.allReduces},
                         {"graph_nodes", c.nodes()},
                         {"distinct_kernels", c.kernels}});
  Json steps = Json::object();
  for (const TrainInfo &e : m.train)
    if (std::optional<size_t> nodes = nodesPerStep(m, e, counts))
      steps[e.name] = {{"accumulate", e.accumulate}, {"graph_nodes", *nodes}};
  // Each kernel's launch shape and the bytes of the buffers it takes: what
  // a check for kernels that run one block over much data reads.
  Json kernelTable = Json::array();
  if (gpu->kernels())
    for (const fb::GpuKernel *k : *gpu->kernels()) {
      uint64_t bytes = 0;
      if (k->params() && k->param_bytes())
        for (size_t i = 0;
             i < k->params()->size() && i < k->param_bytes()->size(); ++i)
          if (k->params()->Get(i) == fb::GpuParamKind::Buffer)
            bytes += k->param_bytes()->Get(i);
      kernelTable.push_back({{"name", k->name() ? k->name()->str() : ""},
                             {"grid", k->grid()},
                             {"block", k->block()},
                             {"buffer_bytes", bytes},
                             {"reduction", k->reduction()}});
    }
  return {{"arena_bytes", gpu->arena_bytes()},
          {"workspace_bytes", gpu->workspace_bytes()},
          {"persistent_bytes", m.persistentBytes},
          {"kernels", gpuKernelCount(*gpu)},
          {"kernel_table", kernelTable},
          {"images", images},
          {"functions", functions},
          {"optimizer_steps", steps}};
}

} // namespace modelc::rt
