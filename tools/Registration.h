// The dialects and passes of modelc, registered the same way by every tool.
#ifndef MODELC_TOOLS_REGISTRATION_H
#define MODELC_TOOLS_REGISTRATION_H

#include "codegen/Passes.h"
#include "codegen/Pipeline.h"
#include "codegen/gpu/GpuTarget.h"
#include "dialects/mdl/MdlDialect.h"
#include "dialects/mdlrt/MdlrtDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

namespace modelc {

/// The dialects modelc's IR uses, from the mdl dialect down to LLVM.
/// Deliberately not registerAllDialects: each dialect costs compile time in
/// every file that includes its headers.
inline void registerModelcDialects(mlir::DialectRegistry &registry) {
  registry.insert<
      mlir::mdl::MdlDialect, mlir::mdlrt::MdlrtDialect, mlir::func::FuncDialect,
      mlir::arith::ArithDialect, mlir::math::MathDialect,
      mlir::tensor::TensorDialect, mlir::linalg::LinalgDialect,
      mlir::bufferization::BufferizationDialect, mlir::memref::MemRefDialect,
      mlir::scf::SCFDialect, mlir::cf::ControlFlowDialect,
      mlir::affine::AffineDialect, mlir::index::IndexDialect,
      mlir::vector::VectorDialect, mlir::LLVM::LLVMDialect>();
  // Lets the inliner inline func.call, e.g. the blocks MLIRGen emits as
  // functions into the entry points.
  mlir::func::registerInlinerExtension(registry);
  // One-shot bufferization of the lowered tensor code.
  mlir::arith::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::linalg::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::scf::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::tensor::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  // The CPU backend translates its LLVM-dialect module to LLVM IR.
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  // The CUDA backend: gpu and nvvm, the #nvvm.target serialiser and the
  // kernels' translation to LLVM IR (docs/codegen/gpu.md).
  modelc::registerGpuDialects(registry);
}

/// The passes modelc-opt can run: ours, the upstream ones our pipeline
/// uses, and the pipeline's stages as named pipelines (codegen/Pipeline.h).
inline void registerModelcPasses() {
  registerMdlPasses();
  registerMdlCodegenPasses();
  registerModelcPipelines();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerInlinerPass();
  mlir::registerSymbolDCEPass();
  mlir::bufferization::registerBufferizationPasses();
  mlir::registerLinalgPasses();
}

} // namespace modelc

#endif // MODELC_TOOLS_REGISTRATION_H
