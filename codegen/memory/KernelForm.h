// The kernel form that --mdl-outline-kernels makes and every backend
// consumes (docs/codegen/kernels.md).
#ifndef MODELC_CODEGEN_MEMORY_KERNELFORM_H
#define MODELC_CODEGEN_MEMORY_KERNELFORM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace modelc {

/// Marks a kernel and gives its index in the module's numbering:
/// `func.func private @"T.fwd_bwd_k3"(%arena: memref<Nxi8>)
/// attributes {mdl.kernel = 3 : i64}`.
inline constexpr llvm::StringLiteral kKernelAttrName = "mdl.kernel";

/// The index of kernel `function`; nullopt when it is not a kernel.
inline std::optional<int64_t> getKernelIndex(mlir::func::FuncOp function) {
  if (auto index = function->getAttrOfType<mlir::IntegerAttr>(kKernelAttrName))
    return index.getInt();
  return std::nullopt;
}

} // namespace modelc

#endif // MODELC_CODEGEN_MEMORY_KERNELFORM_H
