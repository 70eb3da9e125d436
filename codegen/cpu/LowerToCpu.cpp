// --mdl-lower-to-cpu: a planned module becomes one LLVM-dialect module for
// the host: manifest written from the declarations, program functions under
// their C names, mdlrt.gemm as runtime calls, the upstream lowering to LLVM,
// and the ABI's globals.
#include "codegen/Passes.h"
#include "codegen/cpu/CpuLowering.h"
#include "codegen/linalg/ReductionInit.h"
#include "codegen/manifest/ManifestWriter.h"
#include "codegen/memory/KernelArguments.h"
#include "codegen/memory/KernelForm.h"

#include "dialects/mdl/MdlDialect.h"
#include "dialects/mdl/MdlOps.h"
#include "dialects/mdlrt/MdlrtOps.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Transforms/Passes.h"

namespace modelc {
#define GEN_PASS_DEF_MDLLOWERTOCPU
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace modelc {

void buildLinalgToLoopsPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Views become explicit offset and stride arithmetic (as affine.apply,
  // which lower-affine turns into arith).
  pm.addPass(memref::createExpandStridedMetadataPass());
}

void buildLoopsToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertSCFToCFPass());
  // bf16 math and arithmetic compute in f32 and round, as on the GPU
  // (SerializeGpu.cpp) and as LLVM promotes f16; the casts then become
  // integer arithmetic (round to nearest even, NaN kept): LLVM on an x86
  // without AVX512-BF16 would call __truncsfbf2, which Debian 12's libgcc
  // lacks.
  pm.addPass(math::createMathLegalizeToF32());
  static const std::string kBf16[] = {"bf16"};
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = kBf16;
  emulate.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  arith::ArithExpandOpsPassOptions expandOptions;
  expandOptions.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandOptions));
  // LLVM intrinsics first (they vectorise); the libm calls only for what
  // LLVM has no intrinsic for (tanh, erf, atan2, ...).
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // The fused kernels' row vectors (attention's accumulators).
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  // Each program function takes its static arena memref as a plain
  // pointer: `void f(uint8_t *arena)`, the ABI's modelc_fn.
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

} // namespace modelc

namespace {

/// The ops that describe the program to the runtime rather than compute:
/// they go into the manifest (a flat view only places its members) and
/// have no code.
bool isDeclaration(Operation *op) {
  return isa<mdl::ParamOp, mdl::BufferOp, mdl::FlatViewOp, mdl::DataOp,
             mdl::TrainOp, mdl::InferOp>(op);
}

/// memref.copy between non-contiguous layouts would lower to a call of
/// MLIR's C runner library, which programs do not link: copy with loops.
void expandStridedCopies(ModuleOp module) {
  module.walk([](memref::CopyOp copy) {
    auto source = cast<MemRefType>(copy.getSource().getType());
    auto target = cast<MemRefType>(copy.getTarget().getType());
    if (memref::isStaticShapeAndContiguousRowMajor(source) &&
        memref::isStaticShapeAndContiguousRowMajor(target))
      return;
    OpBuilder builder(copy);
    builder.create<linalg::CopyOp>(copy.getLoc(), copy.getSource(),
                                   copy.getTarget());
    copy.erase();
  });
}

/// A reduction whose fill --mdl-fuse-elementwise folded into it
/// (ReductionInit.h) gets the fill back on the CPU, in the same kernel:
/// the output starts at the fill's value and the loop reads it as before,
/// without a select per element. The same values in the same order.
void splitFoldedFills(ModuleOp module) {
  module.walk([](linalg::GenericOp op) {
    if (!op.hasPureBufferSemantics())
      return;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      BlockArgument out = op.getMatchingBlockArgument(&init);
      std::optional<modelc::FirstIterationInit> folded =
          modelc::matchFirstIterationInit(op, out);
      if (!folded)
        continue;
      OpBuilder builder(op);
      builder.create<linalg::FillOp>(op.getLoc(), folded->init, init.get());
      folded->select->getResult(0).replaceAllUsesWith(out);
      folded->select->erase();
    }
  });
}

/// The fused ops run their portable loops on the CPU: each
/// mdlrt.attention_pass and mdlrt.row_scatter_add is replaced by its
/// region's ops.
void inlinePortableLoops(ModuleOp module) {
  module.walk([](Operation *op) {
    if (!isa<mdlrt::AttentionPassOp, mdlrt::RowScatterAddOp>(op))
      return;
    Block &body = op->getRegion(0).front();
    op->getBlock()->getOperations().splice(op->getIterator(),
                                           body.getOperations());
    op->erase();
  });
}

/// Removes the attributes of the mdl dialect, which the translation to
/// LLVM IR has no meaning for.
void dropMdlAttributes(Operation *op) {
  SmallVector<StringAttr> names;
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (attr.getName().getValue().starts_with("mdl."))
      names.push_back(attr.getName());
  for (StringAttr name : names)
    op->removeAttr(name);
}

struct MdlLowerToCpuPass : modelc::impl::MdlLowerToCpuBase<MdlLowerToCpuPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect, func::FuncDialect, arith::ArithDialect,
                    memref::MemRefDialect, linalg::LinalgDialect>();
    OpPassManager pm(ModuleOp::getOperationName());
    modelc::buildLinalgToLoopsPipeline(pm);
    modelc::buildLoopsToLLVMPipeline(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<std::vector<modelc::ProgramFunction>> functions =
        modelc::collectProgramFunctions(module);
    if (failed(functions))
      return signalPassFailure();
    FailureOr<std::string> manifest =
        modelc::writeManifest(module, *functions, {"cpu"});
    if (failed(manifest))
      return signalPassFailure();

    for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
      if (isDeclaration(&op))
        op.erase();
    Builder builder(&getContext());
    // What the ABI promises about the arena, for LLVM's optimiser: 64-byte
    // aligned, and reached through no other pointer.
    for (modelc::ProgramFunction &fn : *functions) {
      if (!modelc::isArenaSignature(fn.op.getFunctionType())) {
        fn.op.emitError("a program function takes only the arena "
                        "(memref<Nxi8>): run --mdl-plan-memory first");
        return signalPassFailure();
      }
      fn.op.setSymName(fn.symbol);
      dropMdlAttributes(fn.op);
      fn.op.setArgAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                       builder.getI64IntegerAttr(64));
      fn.op.setArgAttr(0, LLVM::LLVMDialect::getNoAliasAttrName(),
                       builder.getUnitAttr());
    }
    FailureOr<SmallVector<func::FuncOp>> kernels =
        modelc::collectKernels(module, *functions);
    if (failed(kernels))
      return signalPassFailure();
    SmallVector<std::string> kernelNames;
    for (func::FuncOp kernel : *kernels) {
      if (!modelc::isKernelSignature(kernel.getFunctionType())) {
        kernel.emitError("a kernel takes buffers (static memrefs with "
                         "identity layout) and i64 launch arguments, and "
                         "returns nothing");
        return signalPassFailure();
      }
      kernelNames.push_back(kernel.getSymName().str());
      dropMdlAttributes(kernel);
    }
    modelc::addKernelArgumentPromises(module, *functions, *kernels);
    SmallVector<std::string> kernelEntries;
    if (!functions->empty())
      kernelEntries = modelc::addKernelEntries(
          module, *kernels,
          cast<MemRefType>(functions->front().op.getArgumentTypes()[0]));
    else if (!kernels->empty()) {
      module.emitError("kernels without a program function");
      return signalPassFailure();
    }
    dropMdlAttributes(module);
    WalkResult leftover = module.walk([](Operation *op) {
      if (!isa_and_nonnull<mdl::MdlDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError("mdl op left for the CPU lowering: it should have been "
                    "lowered by --mdl-lower-to-linalg");
      return WalkResult::interrupt();
    });
    if (leftover.wasInterrupted())
      return signalPassFailure();

    // Where the program functions pass them to kernels, launch constants
    // are constants like any other.
    modelc::materializeLaunchConstants(module);
    expandStridedCopies(module);
    splitFoldedFills(module);
    inlinePortableLoops(module);
    OpPassManager loops(ModuleOp::getOperationName());
    modelc::buildLinalgToLoopsPipeline(loops);
    if (failed(runPipeline(loops, module)))
      return signalPassFailure();
    modelc::lowerGemmsToCalls(module);
    modelc::lowerAllReducesToCalls(module);
    OpPassManager toLLVM(ModuleOp::getOperationName());
    modelc::buildLoopsToLLVMPipeline(toLLVM);
    if (failed(runPipeline(toLLVM, module)))
      return signalPassFailure();

    WalkResult unlowered = module.walk([&](Operation *op) {
      if (op == module.getOperation() ||
          isa_and_nonnull<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError("op left after the lowering to the LLVM dialect");
      return WalkResult::interrupt();
    });
    if (unlowered.wasInterrupted())
      return signalPassFailure();
    modelc::markKernelsInternal(module, kernelNames);
    modelc::markKernelsInternal(module, kernelEntries);
    modelc::addProgramGlobals(module, *functions, kernelEntries, *manifest);
  }
};

} // namespace
