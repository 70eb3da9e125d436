// The CUDA target as the pipeline and the tools see it (docs/codegen/gpu.md):
// the architectures, the registration of what the NVVM serialisation needs,
// and the GPU program that mdl-kernels-to-gpu (codegen/Pipeline.h) leaves.
#ifndef MODELC_CODEGEN_GPU_GPUTARGET_H
#define MODELC_CODEGEN_GPU_GPUTARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace modelc {

struct GpuTargetOptions {
  /// PTX (and a cubin, with ptxas) for each; validated by checkGpuArch.
  std::vector<std::string> archs = {"sm_80", "sm_90"};
  /// ptxas: "auto" (PATH, then /usr/local/cuda/bin), "none", or a path.
  std::string ptxas = "auto";
};

/// The module attribute that holds the GPU program (kernels, step lists,
/// images) for the manifest writer (codegen/manifest/ManifestGpu.cpp).
inline constexpr llvm::StringLiteral kGpuProgramAttrName = "mdl.gpu_program";

/// `sm_NN` (optionally `sm_NNa`) with NN >= 50 that LLVM's NVPTX backend
/// knows; an error saying why not otherwise.
llvm::Error checkGpuArch(llvm::StringRef arch);

/// LLVM's NVPTX target (info, MC, code generation, asm printer); once is
/// enough, again is harmless.
void initializeNvptxTarget();

/// The dialects, interfaces and translations to LLVM IR that the lowering
/// to NVVM and gpu-module-to-binary need.
void registerGpuDialects(mlir::DialectRegistry &registry);

/// One image of the GPU program: PTX text or a cubin for one architecture.
struct GpuImage {
  std::string arch;
  bool cubin;
  std::string data;
};

/// The images of kGpuProgramAttrName, in order (for each arch its PTX, then
/// its cubin when there is one); none without the attribute.
std::vector<GpuImage> getGpuImages(mlir::ModuleOp module);

} // namespace modelc

#endif // MODELC_CODEGEN_GPU_GPUTARGET_H
