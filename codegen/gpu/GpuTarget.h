// The CUDA target as the pipeline and the tools see it (docs/codegen/gpu.md):
// the architectures, the registration of what the NVVM serialisation needs,
// and the GPU program that mdl-kernels-to-gpu (codegen/Pipeline.h) leaves.
#ifndef MODELC_CODEGEN_GPU_GPUTARGET_H
#define MODELC_CODEGEN_GPU_GPUTARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <string>
#include <vector>

namespace modelc {

struct GpuTargetOptions {
  /// PTX (and a cubin, with ptxas) for each; validated by checkGpuArch.
  std::vector<std::string> archs = {"sm_80", "sm_90"};
  /// ptxas: "auto" (PATH, then /usr/local/cuda/bin), "none", or a path.
  std::string ptxas = "auto";
  /// The parts the kernels are compiled in, each part and architecture on
  /// its own thread (then each by ptxas); 0: choosePartCount's.
  unsigned parts = 0;
};

/// The module attribute that holds the GPU program (kernels, step lists,
/// images) for the manifest writer (codegen/manifest/ManifestGpu.cpp).
inline constexpr llvm::StringLiteral kGpuProgramAttrName = "mdl.gpu_program";

/// The module attribute in which --mdl-lower-to-gpu leaves the kernel table
/// (name, grid, block, params, part and reduction of each kernel, in index
/// order) for --mdl-serialize-gpu: the lowering to NVVM replaces the
/// gpu.funcs in between.
inline constexpr llvm::StringLiteral kGpuKernelsAttrName = "mdl.gpu_kernels";

/// The number of the part a `gpu.module` of the kernels holds.
inline constexpr llvm::StringLiteral kGpuPartAttrName = "mdl.part";

/// Kernels per part when the part count is chosen: enough work per part
/// that linking libdevice and starting LLVM's pipelines into each part is
/// small beside it.
inline constexpr size_t kKernelsPerPart = 64;
/// At most this many parts.
inline constexpr size_t kMaxParts = 16;

/// `requested` parts, or for 0 one per kKernelsPerPart kernels (at least
/// one, at most kMaxParts, never more than the kernels): a function of the
/// program alone, so that the program is the same whatever the threads.
inline size_t choosePartCount(size_t requested, size_t kernels) {
  size_t parts = requested
                     ? requested
                     : std::min(kMaxParts, (kernels + kKernelsPerPart - 1) /
                                               kKernelsPerPart);
  return std::max<size_t>(1, std::min(parts, kernels));
}

/// `sm_NN` (optionally `sm_NNa`) with NN >= 50 that LLVM's NVPTX backend
/// knows; an error saying why not otherwise.
llvm::Error checkGpuArch(llvm::StringRef arch);

/// LLVM's NVPTX target (info, MC, code generation, asm printer); once is
/// enough, again is harmless.
void initializeNvptxTarget();

/// The dialects, interfaces and translations to LLVM IR that the lowering
/// to NVVM and gpu-module-to-binary need.
void registerGpuDialects(mlir::DialectRegistry &registry);

/// One image of the GPU program: PTX text or a cubin of one part of the
/// kernels for one architecture.
struct GpuImage {
  std::string arch;
  bool cubin;
  std::string data;
  unsigned part = 0;
};

/// The images of kGpuProgramAttrName, in order (the PTX of each arch, part
/// by part, in --arch order; then the cubins); none without the attribute.
std::vector<GpuImage> getGpuImages(mlir::ModuleOp module);

} // namespace modelc

#endif // MODELC_CODEGEN_GPU_GPUTARGET_H
