// The manifest's GpuProgram (docs/codegen/gpu.md) verified and copied into
// plain values, and the choice of the image a device loads. Pure functions:
// no CUDA, so that every check is testable without a GPU.
#pragma once

#include "runtime/cuda/GemmLayout.h"
#include "runtime/driver/Manifest.h"
#include "runtime/support/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace modelc::rt::cuda {

/// A PTX or cubin image; `data` points into the manifest's flatbuffer.
struct GpuImageInfo {
  std::string arch; // "sm_90", "sm_90a"
  int sm = 0;       // 90
  /// "sm_90a"-style: runs on exactly that architecture, nowhere else.
  bool archSpecific = false;
  bool cubin = false;
  /// Which part of the kernels it holds (GpuKernelInfo::part).
  uint32_t part = 0;
  const uint8_t *data = nullptr;
  size_t size = 0;
};

struct GpuKernelInfo {
  std::string name;
  uint32_t grid = 0, block = 0, sharedBytes = 0;
  /// Per parameter: a pointer into the arena (true) or a 64-bit value.
  std::vector<bool> bufferParams;
  /// Per buffer parameter, the bytes the kernel may touch from its pointer.
  std::vector<uint64_t> paramBytes;
  /// The images of this part hold the kernel.
  uint32_t part = 0;
};

struct GpuGemmInfo {
  /// C's type and the computation's: F32 or F64. A and B have `ab`: the
  /// same, or BF16/F16 with an F32 C (cuBLASLt's 16-bit inputs with f32
  /// accumulation).
  DType dtype = DType::F32, ab = DType::F32;
  double alpha = 1, beta = 0;
  RowMajorGemm layout;
};

/// One bucket of gradients averaged over the data-parallel ranks: its
/// buffers, each a contiguous run of f32 or f64 elements in the arena.
struct GpuAllReduceInfo {
  int64_t bucket = 0;
  struct Buffer {
    uint64_t offset = 0, count = 0;
    DType dtype = DType::F32;
  };
  std::vector<Buffer> buffers;
};

struct GpuStepInfo {
  enum class Kind { Launch, Gemm, AllReduce } kind = Kind::Launch;
  uint32_t kernel = 0;  // Launch: index into GpuProgramInfo::kernels
  /// Launch: per kernel parameter, a buffer's byte offset in the arena or
  /// the value itself.
  std::vector<uint64_t> args;
  size_t gemm = 0;      // Gemm: index into GpuProgramInfo::gemms
  size_t allReduce = 0; // AllReduce: index into GpuProgramInfo::allReduces
};

struct GpuFunctionInfo {
  std::string symbol;
  std::vector<GpuStepInfo> steps;
};

struct GpuProgramInfo {
  uint64_t arenaBytes = 0, workspaceOffset = 0, workspaceBytes = 0;
  std::vector<GpuImageInfo> images;
  /// The parts the kernels are in; every architecture and kind has an
  /// image of each.
  uint32_t parts = 1;
  std::vector<GpuKernelInfo> kernels;
  std::vector<GpuGemmInfo> gemms;
  std::vector<GpuAllReduceInfo> allReduces;
  std::vector<GpuFunctionInfo> functions; // index i = Manifest::functions[i]
  /// Keeps the images' bytes alive.
  std::shared_ptr<const std::vector<uint64_t>> flatbuffer;
};

/// The limits the runtime checks kernels against.
constexpr uint32_t kMaxBlock = 1024;
constexpr uint32_t kMaxGrid = 0x7fffffff;
constexpr uint32_t kMaxStaticSharedBytes = 48 * 1024;

/// Verifies `manifest`'s GpuProgram and copies it. A usage error when the
/// program has none (built without the cuda target); an internal error
/// "the program's GPU section is corrupt (...)" for anything modelc would
/// not write: a function count or symbol that disagrees with the manifest,
/// a kernel index out of range, a launch whose arguments do not match its
/// kernel's parameters or whose buffers lie outside the arena, a GEMM
/// operand or the workspace outside the arena, a block size that is not a
/// multiple of 32 in [32, 1024], an empty image, an unknown architecture,
/// or an architecture without an image of some part.
Result<GpuProgramInfo> readGpuProgram(const Manifest &manifest);

/// "sm_90" → 90, "sm_100a" → 100 (arch-specific); nothing when malformed.
struct Arch {
  int sm = 0;
  bool archSpecific = false;
};
std::optional<Arch> parseArch(const std::string &arch);

/// The image to load on a device of compute capability `sm` (major * 10 +
/// minor): the cubin built for exactly `sm`, else the PTX of the highest
/// architecture not above it (the driver JIT-compiles it), else a usage
/// error naming the device's and the program's architectures and the
/// --arch to rebuild with. Returns an index into `images`: the image of
/// part 0; imagesOfParts gives the others.
Result<size_t> selectImage(const std::vector<GpuImageInfo> &images, int sm);

/// The images of the architecture and kind of `images[chosen]`, one per
/// part, indexed by part (readGpuProgram checked that each exists).
std::vector<size_t> imagesOfParts(const std::vector<GpuImageInfo> &images,
                                  size_t chosen, uint32_t parts);

} // namespace modelc::rt::cuda
