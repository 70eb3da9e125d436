// Verifies the manifest's GpuProgram against the arena, the kernels and the
// function table, copies it into GpuProgram.h's plain values, and picks
// the image a device loads.
#include "runtime/cuda/GpuProgram.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

namespace modelc::rt::cuda {

namespace fb = modelc::manifest;

namespace {

Status corrupt(const std::string &what) {
  return Status::error(
      "internal error: the program's GPU section is corrupt (" + what +
          "); rebuild it with modelc",
      kExitInternal);
}

std::string str(const flatbuffers::String *s) { return s ? s->str() : ""; }

/// [offset, offset + bytes) inside [0, limit), without overflow.
bool inside(uint64_t offset, uint64_t bytes, uint64_t limit) {
  return offset <= limit && bytes <= limit - offset;
}

std::string decimal(unsigned __int128 v) {
  std::string digits;
  do {
    digits.insert(digits.begin(), char('0' + int(v % 10)));
    v /= 10;
  } while (v);
  return digits;
}

bool overlaps(uint64_t a, uint64_t aBytes, uint64_t b, uint64_t bBytes) {
  return aBytes && bBytes && a < b + bBytes && b < a + aBytes;
}

Status copyImages(const fb::GpuProgram &gpu, GpuProgramInfo &info) {
  if (!gpu.images())
    return Status();
  size_t index = 0;
  for (const fb::GpuImage *image : *gpu.images()) {
    GpuImageInfo out;
    out.arch = str(image->arch());
    out.cubin = image->kind() == fb::GpuImageKind::Cubin;
    std::optional<Arch> arch = parseArch(out.arch);
    if (!arch || flatbuffers::IsOutRange(image->kind(), fb::GpuImageKind::MIN,
                                         fb::GpuImageKind::MAX))
      return corrupt(fmt::format("image {} has architecture '{}' and kind {}",
                                 index, out.arch, int(image->kind())));
    out.sm = arch->sm;
    out.archSpecific = arch->archSpecific;
    if (!image->data() || image->data()->size() == 0)
      return corrupt(fmt::format("image {} ({} {}) is empty", index,
                                 out.cubin ? "cubin" : "PTX", out.arch));
    out.data = image->data()->data();
    out.size = image->data()->size();
    out.part = image->part();
    // Each part has an image per architecture and kind: fewer images than
    // parts cannot be.
    if (out.part >= gpu.images()->size())
      return corrupt(fmt::format("image {} is of part {}, with {} images",
                                 index, out.part, gpu.images()->size()));
    info.parts = std::max(info.parts, out.part + 1);
    info.images.push_back(std::move(out));
    ++index;
  }
  // Every architecture and kind has each part once.
  std::set<std::tuple<std::string, bool, uint32_t>> seen;
  for (const GpuImageInfo &image : info.images)
    if (!seen.insert({image.arch, image.cubin, image.part}).second)
      return corrupt(fmt::format("two {} images of {} part {}",
                                 image.cubin ? "cubin" : "PTX", image.arch,
                                 image.part));
  for (const GpuImageInfo &image : info.images)
    for (uint32_t part = 0; part < info.parts; ++part)
      if (!seen.count({image.arch, image.cubin, part}))
        return corrupt(fmt::format("the {} of {} has no image of part {}",
                                   image.cubin ? "cubin" : "PTX", image.arch,
                                   part));
  return Status();
}

Status copyKernels(const fb::GpuProgram &gpu, GpuProgramInfo &info) {
  if (!gpu.kernels())
    return Status();
  for (const fb::GpuKernel *k : *gpu.kernels()) {
    GpuKernelInfo out{str(k->name()), k->grid(), k->block(), k->shared_bytes()};
    std::string name =
        out.name.empty() ? fmt::format("{}", info.kernels.size()) : out.name;
    if (out.name.empty())
      return corrupt(fmt::format("kernel {} has no name", name));
    if (out.block % 32 != 0 || out.block < 32 || out.block > kMaxBlock)
      return corrupt(fmt::format(
          "kernel {} has block {}, not a multiple of 32 in [32, {}]", name,
          out.block, kMaxBlock));
    if (out.grid < 1 || out.grid > kMaxGrid)
      return corrupt(fmt::format("kernel {} has grid {}, not in [1, {}]", name,
                                 out.grid, kMaxGrid));
    if (out.sharedBytes > kMaxStaticSharedBytes)
      return corrupt(fmt::format(
          "kernel {} asks for {} bytes of shared memory, more than {}", name,
          out.sharedBytes, kMaxStaticSharedBytes));
    if (k->params())
      for (fb::GpuParamKind kind : *k->params()) {
        if (flatbuffers::IsOutRange(kind, fb::GpuParamKind::MIN,
                                    fb::GpuParamKind::MAX))
          return corrupt(fmt::format("kernel {} has a parameter of kind {}",
                                     name, int(kind)));
        out.bufferParams.push_back(kind == fb::GpuParamKind::Buffer);
      }
    size_t sizes = k->param_bytes() ? k->param_bytes()->size() : 0;
    if (sizes != out.bufferParams.size())
      return corrupt(fmt::format("kernel {} has {} parameter(s) and {} "
                                 "parameter size(s)",
                                 name, out.bufferParams.size(), sizes));
    for (size_t i = 0; i < sizes; ++i)
      out.paramBytes.push_back(k->param_bytes()->Get(uint32_t(i)));
    out.part = k->part();
    if (out.part >= info.parts)
      return corrupt(fmt::format("kernel {} is in part {} of {}", name,
                                 out.part, info.parts));
    info.kernels.push_back(std::move(out));
  }
  if (!info.kernels.empty() && info.images.empty())
    return corrupt("there are kernels but no image");
  return Status();
}

/// One operand of a GEMM: its span inside the arena and clear of the
/// workspace, element-aligned.
Status checkOperand(const std::string &where, const char *name, StoredMatrix m,
                    uint64_t offset, int64_t ld, int64_t stride, int64_t batch,
                    uint64_t elementBytes, const GpuProgramInfo &info) {
  std::optional<uint64_t> span =
      spanElements(m.rows, m.cols, ld, stride, batch);
  if (!span)
    return corrupt(fmt::format(
        "{}: GEMM operand {} ({} x {}, ld {}, batch stride {}, batch {}) has "
        "an invalid layout",
        where, name, m.rows, m.cols, ld, stride, batch));
  unsigned __int128 end =
      (unsigned __int128)offset + (unsigned __int128)*span * elementBytes;
  if (end > info.arenaBytes)
    return corrupt(fmt::format(
        "{}: GEMM operand {} [{}, {}) lies outside the {}-byte arena", where,
        name, offset, decimal(end), info.arenaBytes));
  uint64_t bytes = *span * elementBytes;
  if (offset % elementBytes != 0)
    return corrupt(fmt::format("{}: GEMM operand {} at offset {} is not "
                               "aligned to its {}-byte elements",
                               where, name, offset, elementBytes));
  if (overlaps(offset, bytes, info.workspaceOffset, info.workspaceBytes))
    return corrupt(fmt::format("{}: GEMM operand {} [{}, {}) overlaps the "
                               "cuBLASLt workspace",
                               where, name, offset, offset + bytes));
  return Status();
}

Result<GpuGemmInfo> copyGemm(const std::string &where, const fb::GpuGemm *g,
                             const GpuProgramInfo &info) {
  if (!g)
    return corrupt(where + ": a GEMM step without its GEMM");
  // f32, f64, and bf16/f16 A and B with an f32 C.
  fb::DType c = g->dtype(), ab = g->ab_dtype();
  bool sixteenBit = ab == fb::DType::BF16 || ab == fb::DType::F16;
  if ((c != fb::DType::F32 && c != fb::DType::F64) ||
      (ab != c && !(sixteenBit && c == fb::DType::F32)))
    return corrupt(fmt::format("{}: GEMM of dtypes {} (A, B) and {} (C) (the "
                               "GPU runs f32 and f64 GEMMs, and bf16/f16 ones "
                               "into f32)",
                               where, int(ab), int(c)));
  GpuGemmInfo out;
  out.dtype = c == fb::DType::F64 ? DType::F64 : DType::F32;
  out.ab = ab == fb::DType::F64    ? DType::F64
           : ab == fb::DType::BF16 ? DType::BF16
           : ab == fb::DType::F16  ? DType::F16
                                   : DType::F32;
  out.alpha = g->alpha();
  out.beta = g->beta();
  RowMajorGemm &l = out.layout;
  l = {g->trans_a(), g->trans_b(),  g->m(),        g->n(),        g->k(),
       g->a(),       g->b(),        g->c(),        g->lda(),      g->ldb(),
       g->ldc(),     g->stride_a(), g->stride_b(), g->stride_c(), g->batch()};
  constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
  if (l.m < 1 || l.n < 1 || l.k < 1 || l.batch < 1 || l.m > kMaxDim ||
      l.n > kMaxDim || l.k > kMaxDim || l.batch > kMaxDim)
    return corrupt(fmt::format("{}: GEMM of m {}, n {}, k {}, batch {}", where,
                               l.m, l.n, l.k, l.batch));
  uint64_t abBytes = dtypeSize(out.ab), cBytes = dtypeSize(out.dtype);
  MODELC_RETURN_IF_ERROR(checkOperand(where, "A", storedA(l), l.a, l.lda,
                                      l.strideA, l.batch, abBytes, info));
  MODELC_RETURN_IF_ERROR(checkOperand(where, "B", storedB(l), l.b, l.ldb,
                                      l.strideB, l.batch, abBytes, info));
  MODELC_RETURN_IF_ERROR(checkOperand(where, "C", storedC(l), l.c, l.ldc,
                                      l.strideC, l.batch, cBytes, info));
  // The batches of C run in parallel on the GPU: they must not overlap.
  if (l.batch > 1 && uint64_t(l.strideC) < *spanElements(l.m, l.n, l.ldc, 0, 1))
    return corrupt(fmt::format("{}: GEMM batches of C overlap (batch stride "
                               "{} for {} x {} matrices with ld {})",
                               where, l.strideC, l.m, l.n, l.ldc));
  return out;
}

/// An AllReduce step: its bucket and buffers (its writes), each of f32 or
/// f64 elements, aligned, inside the arena and outside the workspace.
Result<GpuAllReduceInfo> copyAllReduce(const std::string &where,
                                       const fb::GpuStep &s,
                                       const GpuProgramInfo &info) {
  if (!s.all_reduce() || !s.writes() || s.writes()->size() == 0)
    return corrupt(where + ": an all-reduce step without its bucket");
  GpuAllReduceInfo out;
  out.bucket = s.all_reduce()->bucket();
  for (const fb::GpuWrite *w : *s.writes()) {
    if (w->dtype() != fb::DType::F32 && w->dtype() != fb::DType::F64)
      return corrupt(fmt::format("{}: an all-reduce of dtype {} (f32 and f64 "
                                 "only)",
                                 where, int(w->dtype())));
    DType dtype = w->dtype() == fb::DType::F64 ? DType::F64 : DType::F32;
    uint64_t size = dtypeSize(dtype);
    if (w->bytes() == 0 || w->bytes() % size != 0 || w->offset() % size != 0 ||
        !inside(w->offset(), w->bytes(), info.arenaBytes) ||
        overlaps(w->offset(), w->bytes(), info.workspaceOffset,
                 info.workspaceBytes))
      return corrupt(fmt::format("{}: an all-reduce buffer [{}, +{}) is not "
                                 "whole aligned elements of the arena outside "
                                 "the workspace",
                                 where, w->offset(), w->bytes()));
    out.buffers.push_back({w->offset(), w->bytes() / size, dtype});
  }
  return out;
}

/// A Launch step's arguments: one per parameter of its kernel, each
/// buffer's offset inside the CPU plan's part of the arena (the kernels
/// never touch the workspace).
Status copyLaunchArguments(const std::string &where, const fb::GpuStep &s,
                           const GpuKernelInfo &kernel,
                           const Manifest &manifest, GpuStepInfo &step) {
  size_t count = s.args() ? s.args()->size() : 0;
  if (count != kernel.bufferParams.size())
    return corrupt(fmt::format("{} passes {} argument(s) to kernel {}, which "
                               "has {} parameter(s)",
                               where, count, kernel.name,
                               kernel.bufferParams.size()));
  for (size_t i = 0; i < count; ++i) {
    uint64_t value = s.args()->Get(uint32_t(i));
    if (kernel.bufferParams[i] &&
        !inside(value, kernel.paramBytes[i], manifest.arenaBytes))
      return corrupt(fmt::format("{} passes kernel {} a buffer of {} bytes at "
                                 "arena offset {}, outside the {}-byte arena",
                                 where, kernel.name, kernel.paramBytes[i],
                                 value, manifest.arenaBytes));
    step.args.push_back(value);
  }
  return Status();
}

Status copyFunctions(const fb::GpuProgram &gpu, const Manifest &manifest,
                     GpuProgramInfo &info) {
  size_t count = gpu.functions() ? gpu.functions()->size() : 0;
  if (count != manifest.functions.size())
    return corrupt(
        fmt::format("it describes {} function(s), the program has {}", count,
                    manifest.functions.size()));
  for (size_t i = 0; i < count; ++i) {
    const fb::GpuFunction *f = gpu.functions()->Get(i);
    GpuFunctionInfo out;
    out.symbol = str(f->symbol());
    if (out.symbol != manifest.functions[i].symbol)
      return corrupt(fmt::format("GPU function {} is '{}', the program's is "
                                 "'{}'",
                                 i, out.symbol, manifest.functions[i].symbol));
    size_t stepIndex = 0;
    if (f->steps())
      for (const fb::GpuStep *s : *f->steps()) {
        std::string where =
            fmt::format("function {} step {}", out.symbol, stepIndex++);
        GpuStepInfo step;
        if (s->kind() == fb::GpuStepKind::Launch) {
          step.kind = GpuStepInfo::Kind::Launch;
          step.kernel = s->kernel();
          if (step.kernel >= info.kernels.size())
            return corrupt(fmt::format("{} launches kernel {} of {}", where,
                                       step.kernel, info.kernels.size()));
          MODELC_RETURN_IF_ERROR(copyLaunchArguments(
              where, *s, info.kernels[step.kernel], manifest, step));
        } else if (s->kind() == fb::GpuStepKind::Gemm) {
          Result<GpuGemmInfo> gemm = copyGemm(where, s->gemm(), info);
          if (!gemm)
            return gemm.status();
          step.kind = GpuStepInfo::Kind::Gemm;
          step.gemm = info.gemms.size();
          info.gemms.push_back(gemm.take());
        } else if (s->kind() == fb::GpuStepKind::AllReduce) {
          Result<GpuAllReduceInfo> bucket = copyAllReduce(where, *s, info);
          if (!bucket)
            return bucket.status();
          step.kind = GpuStepInfo::Kind::AllReduce;
          step.allReduce = info.allReduces.size();
          info.allReduces.push_back(bucket.take());
        } else {
          return corrupt(fmt::format("{} has kind {}", where, int(s->kind())));
        }
        out.steps.push_back(step);
      }
    info.functions.push_back(std::move(out));
  }
  return Status();
}

std::string archList(const std::vector<GpuImageInfo> &images, bool cubin) {
  std::string list;
  for (const GpuImageInfo &image : images)
    if (image.cubin == cubin && image.part == 0)
      list += (list.empty() ? "" : ", ") + image.arch;
  return list;
}

} // namespace

std::optional<Arch> parseArch(const std::string &arch) {
  if (arch.rfind("sm_", 0) != 0)
    return std::nullopt;
  size_t i = 3, digits = 0;
  int sm = 0;
  for (; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i, ++digits)
    sm = sm * 10 + (arch[i] - '0');
  if (digits < 2 || digits > 3)
    return std::nullopt;
  if (i == arch.size())
    return Arch{sm, false};
  if (i + 1 == arch.size() && (arch[i] == 'a' || arch[i] == 'f'))
    return Arch{sm, true};
  return std::nullopt;
}

Result<GpuProgramInfo> readGpuProgram(const Manifest &manifest) {
  const fb::GpuProgram *gpu = manifest.gpuProgram();
  if (!gpu)
    return Status::error("this program was built without the cuda target; "
                         "rebuild with --target cuda,cpu or run with --cpu",
                         kExitUsage);
  GpuProgramInfo info;
  info.arenaBytes = gpu->arena_bytes();
  info.workspaceOffset = gpu->workspace_offset();
  info.workspaceBytes = gpu->workspace_bytes();
  info.flatbuffer = manifest.flatbuffer;
  if (info.arenaBytes < manifest.arenaBytes)
    return corrupt(fmt::format("the GPU arena of {} bytes is smaller than the "
                               "CPU arena of {}",
                               info.arenaBytes, manifest.arenaBytes));
  if (info.workspaceOffset % 256 != 0 ||
      !inside(info.workspaceOffset, info.workspaceBytes, info.arenaBytes))
    return corrupt(fmt::format("the cuBLASLt workspace at {} ({} bytes) is "
                               "not 256-byte aligned inside the {}-byte arena",
                               info.workspaceOffset, info.workspaceBytes,
                               info.arenaBytes));
  MODELC_RETURN_IF_ERROR(copyImages(*gpu, info));
  MODELC_RETURN_IF_ERROR(copyKernels(*gpu, info));
  MODELC_RETURN_IF_ERROR(copyFunctions(*gpu, manifest, info));
  return info;
}

Result<size_t> selectImage(const std::vector<GpuImageInfo> &images, int sm) {
  for (size_t i = 0; i < images.size(); ++i)
    if (images[i].cubin && images[i].sm == sm && images[i].part == 0)
      return i;
  std::optional<size_t> best;
  for (size_t i = 0; i < images.size(); ++i) {
    const GpuImageInfo &image = images[i];
    bool runs = image.archSpecific ? image.sm == sm : image.sm <= sm;
    if (!image.cubin && runs && image.part == 0 &&
        (!best || image.sm > images[*best].sm))
      best = i;
  }
  if (best)
    return *best;
  std::string cubins = archList(images, true), ptx = archList(images, false);
  std::string has = !cubins.empty() && !ptx.empty()
                        ? "cubin " + cubins + "; PTX " + ptx
                    : !cubins.empty() ? "cubin " + cubins
                    : !ptx.empty()    ? "PTX " + ptx
                                      : "no images";
  return Status::error(
      fmt::format("this program's GPU code ({}) cannot run on this sm_{} "
                  "GPU; rebuild it with `modelc --arch sm_{}` or run with "
                  "--cpu",
                  has, sm, sm),
      kExitUsage);
}

std::vector<size_t> imagesOfParts(const std::vector<GpuImageInfo> &images,
                                  size_t chosen, uint32_t parts) {
  std::vector<size_t> byPart(parts, chosen);
  for (size_t i = 0; i < images.size(); ++i)
    if (images[i].arch == images[chosen].arch &&
        images[i].cubin == images[chosen].cubin && images[i].part < parts)
      byPart[images[i].part] = i;
  return byPart;
}

} // namespace modelc::rt::cuda
