// The kernel form that --mdl-outline-kernels makes, --mdl-dedupe-kernels
// shares and every backend consumes (docs/codegen/kernels.md).
#ifndef MODELC_CODEGEN_MEMORY_KERNELFORM_H
#define MODELC_CODEGEN_MEMORY_KERNELFORM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace modelc {

/// Marks a kernel and gives its index in the module's numbering:
/// `func.func private @"T.fwd_bwd_k3"(%x: memref<8x4xf32>, ...)
/// attributes {mdl.kernel = 3 : i64}`.
inline constexpr llvm::StringLiteral kKernelAttrName = "mdl.kernel";

/// The index of kernel `function`; nullopt when it is not a kernel.
inline std::optional<int64_t> getKernelIndex(mlir::func::FuncOp function) {
  if (auto index = function->getAttrOfType<mlir::IntegerAttr>(kKernelAttrName))
    return index.getInt();
  return std::nullopt;
}

/// A memref the bare-pointer convention passes as one pointer: static
/// shape, identity layout.
inline bool isBarePointerMemRef(mlir::Type type) {
  auto memref = llvm::dyn_cast<mlir::MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getLayout().isIdentity();
}

/// `(memref<Nxi8>) -> ()` with a static, identity-layout arena: the
/// signature --mdl-plan-memory gives program functions, which the
/// bare-pointer convention turns into `void f(uint8_t *arena)`.
inline bool isArenaSignature(mlir::FunctionType type) {
  if (type.getNumInputs() != 1 || type.getNumResults() != 0)
    return false;
  auto arena = llvm::dyn_cast<mlir::MemRefType>(type.getInput(0));
  return arena && arena.getRank() == 1 && isBarePointerMemRef(arena) &&
         arena.getElementType().isInteger(8);
}

/// A kernel's signature: no results; each argument a buffer (a static,
/// identity-layout memref: one pointer) or an i64 (an
/// `mdlrt.launch_constant` of the caller).
inline bool isKernelSignature(mlir::FunctionType type) {
  if (type.getNumResults() != 0)
    return false;
  return llvm::all_of(type.getInputs(), [](mlir::Type input) {
    return isBarePointerMemRef(input) || input.isInteger(64);
  });
}

} // namespace modelc

#endif // MODELC_CODEGEN_MEMORY_KERNELFORM_H
