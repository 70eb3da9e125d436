// kernelcheck: the CPU is the reference. From parameters drawn by the
// initialisers, random inputs and the first step's hyperparameters, each
// function runs step by step on the CPU; before each step the device holds
// the same bytes (what the step may write is copied back from the CPU after
// every step), so each GPU kernel and GEMM is checked on its own inputs and
// errors do not accumulate.
#include "runtime/driver/Kernelcheck.h"

#include "runtime/cuda/GpuProgram.h"
#include "runtime/driver/Arena.h"
#include "runtime/driver/Bindings.h"
#include "runtime/driver/Devices.h"
#include "runtime/driver/Initializers.h"
#include "runtime/io/Random.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace modelc::rt {

namespace fb = modelc::manifest;

namespace {

/// How much the GPU may differ from the CPU for each term a result sums:
/// the two add in other orders, and the rounding error of a sum of n terms
/// grows like sqrt(n) units of roundoff when its signs are random (Higham,
/// Accuracy and Stability of Numerical Algorithms, 2nd ed., §4.2); this
/// slack bounds what sums of 400,000 squares showed on an H200.
constexpr double kReductionSlack = 16;

/// One range a step writes (GpuStep.writes).
struct WriteRange {
  uint64_t offset, bytes;
  DType dtype;
};

/// What step `step` writes, each range inside the arena; the whole arena as
/// F32 when the manifest does not say.
std::vector<WriteRange> stepWrites(const fb::GpuStep &step,
                                   uint64_t arenaBytes) {
  std::vector<WriteRange> ranges;
  if (!step.writes())
    return {{0, arenaBytes, DType::F32}};
  for (const fb::GpuWrite *w : *step.writes()) {
    if (w->offset() > arenaBytes || w->bytes() > arenaBytes - w->offset())
      return {{0, arenaBytes, DType::F32}};
    ranges.push_back({w->offset(), w->bytes(), DType(w->dtype())});
  }
  return ranges;
}

/// Random inputs: floats uniform in [-1, 1), integers in [0, 16), bytes in
/// [0, 256). Out-of-range ids and labels are clamped by the programs.
void fillInputs(const Manifest &m, Arena &arena, Rng &rng) {
  for (const BufferInfo &b : m.buffers) {
    if (b.role != Role::Input)
      continue;
    uint8_t *p = arena.at(b);
    uint64_t size = dtypeSize(b.dtype), n = size ? b.bytes / size : 0;
    for (uint64_t i = 0; i < n; ++i) {
      double u = rng.uniform();
      switch (b.dtype) {
      case DType::F32: {
        float v = float(2 * u - 1);
        std::memcpy(p + i * 4, &v, 4);
        break;
      }
      case DType::F64: {
        double v = 2 * u - 1;
        std::memcpy(p + i * 8, &v, 8);
        break;
      }
      case DType::U8:
        p[i] = uint8_t(u * 256);
        break;
      case DType::I32: {
        int32_t v = int32_t(u * 16);
        std::memcpy(p + i * 4, &v, 4);
        break;
      }
      case DType::I64: {
        int64_t v = int64_t(u * 16);
        std::memcpy(p + i * 8, &v, 8);
        break;
      }
      default:
        break;
      }
    }
  }
}

/// The CPU counterpart of a Gemm step: modelc_gemm_f32/_f64/_bf16/_f16 on
/// the host arena.
void cpuGemm(const fb::GpuGemm &g, uint8_t *arena) {
  if (g.ab_dtype() == fb::DType::BF16 || g.ab_dtype() == fb::DType::F16)
    (g.ab_dtype() == fb::DType::BF16 ? modelc_gemm_bf16 : modelc_gemm_f16)(
        g.trans_a(), g.trans_b(), g.m(), g.n(), g.k(), float(g.alpha()),
        reinterpret_cast<const uint16_t *>(arena + g.a()), g.lda(),
        g.stride_a(), reinterpret_cast<const uint16_t *>(arena + g.b()),
        g.ldb(), g.stride_b(), float(g.beta()),
        reinterpret_cast<float *>(arena + g.c()), g.ldc(), g.stride_c(),
        g.batch());
  else if (g.dtype() == fb::DType::F64)
    modelc_gemm_f64(g.trans_a(), g.trans_b(), g.m(), g.n(), g.k(), g.alpha(),
                    reinterpret_cast<const double *>(arena + g.a()), g.lda(),
                    g.stride_a(),
                    reinterpret_cast<const double *>(arena + g.b()), g.ldb(),
                    g.stride_b(), g.beta(),
                    reinterpret_cast<double *>(arena + g.c()), g.ldc(),
                    g.stride_c(), g.batch());
  else
    modelc_gemm_f32(g.trans_a(), g.trans_b(), g.m(), g.n(), g.k(),
                    float(g.alpha()),
                    reinterpret_cast<const float *>(arena + g.a()), g.lda(),
                    g.stride_a(),
                    reinterpret_cast<const float *>(arena + g.b()), g.ldb(),
                    g.stride_b(), float(g.beta()),
                    reinterpret_cast<float *>(arena + g.c()), g.ldc(),
                    g.stride_c(), g.batch());
}

} // namespace

ArenaDiff compareArenaBytes(const uint8_t *a, const uint8_t *b, uint64_t bytes,
                            DType dtype, double rtol, double atol) {
  ArenaDiff d;
  const uint64_t size = dtypeSize(dtype);
  const bool exact = unitRoundoff(dtype) == 0; // integers and bool
  for (uint64_t i = 0; i + size <= bytes; i += size) {
    ++d.elements;
    if (std::memcmp(a + i, b + i, size) == 0)
      continue;
    double x = elementAsDouble(dtype, a + i), y = elementAsDouble(dtype, b + i);
    if (std::isnan(x) && std::isnan(y))
      continue;
    double diff = std::fabs(x - y);
    double limit = exact ? 0 : atol + rtol * std::max(std::fabs(x), std::fabs(y));
    if (!exact && diff <= limit)
      continue;
    ++d.mismatches;
    double excess = !std::isfinite(diff) ? HUGE_VAL
                    : limit > 0          ? diff / limit
                                         : diff;
    if (excess > d.worstExcess || d.mismatches == 1) {
      d.worstExcess = excess;
      d.worstOffset = i;
      d.worstA = x;
      d.worstB = y;
    }
  }
  return d;
}

Status runKernelcheck(const Manifest &m, const CommandLine &cl,
                      ProgramIO &io) {
  const fb::GpuProgram *gpu = m.gpuProgram();
  if (!gpu || !gpu->functions() || !gpu->kernels())
    return Status::error("kernelcheck: this program was built without the "
                         "CUDA target; rebuild it with modelc --target "
                         "cuda,cpu");
  if (m.numCpuKernels != gpu->kernels()->size())
    return Status::error(
        fmt::format("kernelcheck: the program has {} CPU kernels and {} GPU "
                    "kernels; it was built by a modelc without kernel tables",
                    m.numCpuKernels, gpu->kernels()->size()),
        kExitInternal);
  Result<cuda::GpuProgramInfo> program = cuda::readGpuProgram(m);
  if (!program)
    return program.status();
  CommandLine gpuLine = cl;
  if (!gpuLine.gpus)
    gpuLine.gpus = "1";
  Result<DeviceChoice> choice = chooseDevice(gpuLine, m);
  if (!choice)
    return choice.status();

  uint64_t seed = cl.seed.value_or(0);
  Result<Arena> arena = Arena::allocate(m.arenaBytes);
  if (!arena)
    return arena.status();
  MODELC_RETURN_IF_ERROR(initializeParameters(m, seed, *arena));
  Rng rng(seed ^ 0x6b65726e656c636bULL); // "kernelck"
  fillInputs(m, *arena, rng);
  for (const TrainInfo &e : m.train) {
    Result<RunSettings> settings = resolveSettings(e, {}, seed);
    if (!settings)
      return settings.status();
    Result<Hypers> hypers = Hypers::bind(m, e.name, *settings);
    if (!hypers)
      return hypers.status();
    hypers->write({1, 100, 1, 1}, *arena);
  }
  Result<std::unique_ptr<cuda::Device>> device =
      gpuBackend().open(choice->ordinal, m);
  if (!device)
    return device.status();
  cuda::Device &d = **device;
  MODELC_RETURN_IF_ERROR(d.upload(0, arena->data(), m.arenaBytes));
  io.err << fmt::format("kernelcheck: {}, {} kernels, rtol {} atol {}\n",
                        d.description(), gpu->kernels()->size(), cl.rtol,
                        cl.atol);

  std::vector<uint8_t> fromGpu;
  uint64_t failed = 0, checked = 0;
  for (size_t f = 0; f < m.functions.size(); ++f) {
    const fb::GpuFunction *gf = gpu->functions()->Get(uint32_t(f));
    size_t steps = gf->steps() ? gf->steps()->size() : 0;
    for (size_t s = 0; s < steps; ++s) {
      const fb::GpuStep *step = gf->steps()->Get(uint32_t(s));
      std::string name;
      uint64_t terms = 0; // the most terms one result sums
      // An all-reduce computes nothing on one device.
      if (step->kind() == fb::GpuStepKind::AllReduce)
        continue;
      if (step->kind() == fb::GpuStepKind::Launch) {
        uint32_t k = step->kernel();
        if (k >= m.numCpuKernels)
          return Status::error("kernelcheck: a step names kernel " +
                                   std::to_string(k) + ", past the table",
                               kExitInternal);
        const fb::GpuKernel *kernel = gpu->kernels()->Get(k);
        name = kernel->name()->str();
        terms = kernel->reduction();
        // The arguments as the device's reader checked them: each buffer
        // inside the arena.
        m.cpuKernels[k](arena->data(),
                        program->functions[f].steps[s].args.data());
      } else if (step->gemm()) {
        const fb::GpuGemm &g = *step->gemm();
        name = fmt::format("gemm {}x{}x{}{}", g.m(), g.n(), g.k(),
                           g.batch() > 1 ? fmt::format(" x{}", g.batch()) : "");
        terms = g.k();
        cpuGemm(g, arena->data());
      } else {
        return Status::error("kernelcheck: a GEMM step without its GEMM",
                             kExitInternal);
      }
      MODELC_RETURN_IF_ERROR(d.runStep(f, s));
      ArenaDiff diff;
      uint64_t worstAt = 0;
      for (const WriteRange &w : stepWrites(*step, m.arenaBytes)) {
        fromGpu.resize(size_t(w.bytes));
        MODELC_RETURN_IF_ERROR(d.download(w.offset, fromGpu.data(), w.bytes));
        double rtol = cl.rtol + kReductionSlack * std::sqrt(double(terms)) *
                                    unitRoundoff(w.dtype);
        ArenaDiff part =
            compareArenaBytes(arena->data() + w.offset, fromGpu.data(),
                              w.bytes, w.dtype, rtol, cl.atol);
        if (part.mismatches &&
            (!diff.mismatches || part.worstExcess > diff.worstExcess)) {
          worstAt = w.offset + part.worstOffset;
          diff.worstExcess = part.worstExcess;
          diff.worstA = part.worstA;
          diff.worstB = part.worstB;
        }
        diff.elements += part.elements;
        diff.mismatches += part.mismatches;
        // The device continues from the CPU's bytes.
        MODELC_RETURN_IF_ERROR(
            d.upload(w.offset, arena->data() + w.offset, w.bytes));
      }
      ++checked;
      if (diff.mismatches) {
        ++failed;
        io.out << fmt::format(
            "MISMATCH {} step {} ({}): {} of {} elements; worst at arena "
            "offset {}: cpu {} gpu {}\n",
            m.functions[f].symbol, s, name, diff.mismatches, diff.elements,
            worstAt, diff.worstA, diff.worstB);
      }
    }
    io.out << fmt::format("{}: {} steps checked\n", m.functions[f].symbol,
                          steps);
  }
  MODELC_RETURN_IF_ERROR(d.synchronize());
  io.out << fmt::format("kernelcheck: {} of {} steps agree\n",
                        checked - failed, checked);
  if (failed)
    return Status::error(fmt::format("kernelcheck: {} steps differ from the "
                                     "CPU",
                                     failed),
                         kExitInternal);
  return Status();
}

} // namespace modelc::rt
