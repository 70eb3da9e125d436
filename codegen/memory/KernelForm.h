// The kernel form that --mdl-outline-kernels makes and every backend
// consumes (docs/codegen/kernels.md).
#ifndef MODELC_CODEGEN_MEMORY_KERNELFORM_H
#define MODELC_CODEGEN_MEMORY_KERNELFORM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
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

/// `(memref<Nxi8>) -> ()` with a static, identity-layout arena: the
/// signature --mdl-plan-memory gives program functions and kernels keep,
/// which the bare-pointer convention turns into `void f(uint8_t *arena)`.
inline bool isArenaSignature(mlir::FunctionType type) {
  if (type.getNumInputs() != 1 || type.getNumResults() != 0)
    return false;
  auto arena = llvm::dyn_cast<mlir::MemRefType>(type.getInput(0));
  return arena && arena.getRank() == 1 && arena.hasStaticShape() &&
         arena.getElementType().isInteger(8) && arena.getLayout().isIdentity();
}

} // namespace modelc

#endif // MODELC_CODEGEN_MEMORY_KERNELFORM_H
