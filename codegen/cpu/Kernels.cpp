// The kernels of --mdl-outline-kernels on the CPU: found by their index,
// named after the program function that calls them, and kept apart from
// it in LLVM (internal, never inlined).
#include "codegen/cpu/CpuLowering.h"
#include "codegen/memory/KernelForm.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace modelc {

FailureOr<SmallVector<func::FuncOp>>
collectKernels(ModuleOp module, ArrayRef<ProgramFunction> functions) {
  SmallVector<func::FuncOp> kernels;
  llvm::StringMap<func::FuncOp> byName;
  for (auto function : module.getOps<func::FuncOp>()) {
    std::optional<int64_t> index = getKernelIndex(function);
    if (!index)
      continue;
    if (*index < 0 || (size_t(*index) < kernels.size() && kernels[*index]))
      return function.emitError("kernel index ") << *index << " is not unique";
    if (size_t(*index) >= kernels.size())
      kernels.resize(*index + 1);
    kernels[*index] = function;
    byName[function.getSymName()] = function;
  }
  for (auto [index, kernel] : llvm::enumerate(kernels))
    if (!kernel)
      return module.emitError("no kernel has index ") << index;

  // `modelc_fn_0_T_fwd_bwd_k3` tells a profile which function kernel 3
  // belongs to; the calls follow the new name.
  for (const ProgramFunction &fn : functions)
    for (auto call : func::FuncOp(fn.op).getBody().getOps<func::CallOp>()) {
      func::FuncOp kernel = byName.lookup(call.getCallee());
      if (!kernel)
        continue;
      if (kernel.getSymName() == call.getCallee())
        kernel.setSymName(fn.symbol + "_k" +
                          std::to_string(*getKernelIndex(kernel)));
      call.setCallee(kernel.getSymName());
    }
  return kernels;
}

void markKernelsInternal(ModuleOp module, ArrayRef<std::string> names) {
  llvm::StringSet<> kernels;
  kernels.insert(names.begin(), names.end());
  for (auto function : module.getOps<LLVM::LLVMFuncOp>())
    if (kernels.contains(function.getSymName())) {
      function.setLinkage(LLVM::Linkage::Internal);
      // LLVM would inline a function called once, and undo the split.
      function.setNoInline(true);
    }
}

} // namespace modelc
