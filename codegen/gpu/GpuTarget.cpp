// The CUDA target's entry points for the pipeline and the tools: the
// architectures, the registrations the NVVM serialisation needs, and the
// images of the GPU program.
#include "codegen/gpu/GpuTarget.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Regex.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

using namespace mlir;

namespace modelc {

namespace {

constexpr llvm::StringLiteral kNvptxTriple = "nvptx64-nvidia-cuda";

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

void initializeNvptxTarget() {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
}

llvm::Error checkGpuArch(llvm::StringRef arch) {
  llvm::SmallVector<llvm::StringRef> match;
  unsigned number = 0;
  if (!llvm::Regex("^sm_([0-9]+)a?$").match(arch, &match) ||
      match[1].getAsInteger(10, number) || number < 50)
    return makeError("unknown GPU architecture '" + arch +
                     "' (expected sm_NN with NN >= 50, e.g. sm_80 or sm_90)");
  initializeNvptxTarget();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(kNvptxTriple.str(), error);
  if (!target)
    return makeError("no NVPTX backend in this LLVM: " + error);
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(kNvptxTriple, "", ""));
  if (!subtarget || !subtarget->isCPUStringValid(arch))
    return makeError("LLVM's NVPTX backend does not know GPU architecture '" +
                     arch + "'");
  return llvm::Error::success();
}

void registerGpuDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  // gpu-module-to-binary asks the #nvvm.target for the PTX.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // The kernels' translation to LLVM IR.
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  // convert-gpu-to-nvvm lowers the other dialects in the kernels through
  // their ConvertToLLVM interfaces.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
}

std::vector<GpuImage> getGpuImages(ModuleOp module) {
  std::vector<GpuImage> images;
  auto program = module->getAttrOfType<DictionaryAttr>(kGpuProgramAttrName);
  if (!program)
    return images;
  for (auto image :
       program.getAs<ArrayAttr>("images").getAsRange<DictionaryAttr>())
    images.push_back({image.getAs<StringAttr>("arch").str(),
                      image.getAs<StringAttr>("kind").getValue() == "cubin",
                      image.getAs<StringAttr>("data").str(),
                      unsigned(image.getAs<IntegerAttr>("part").getInt())});
  return images;
}

} // namespace modelc
