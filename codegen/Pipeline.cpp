// The stages of docs/pipeline.md, each built by one function from one
// options struct, their registration as named pipelines for modelc-opt, and
// runPipeline, which runs them for modelc.
#include "codegen/Pipeline.h"

#include "codegen/Passes.h"
#include "codegen/gpu/Ptxas.h"
#include "passes/EntryUtils.h"
#include "passes/Passes.h"

#include "dialects/mdl/MdlDialect.h"
#include "dialects/mdl/MdlOps.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/LegalizeForExport.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace modelc {

namespace {

/// The declarations of entries (and data sets) keep the bodies MLIRGen gave
/// them, still on mdl tensors; codegen only reads their attributes, so
/// bufferization leaves them and everything in them alone.
bool isEntryDeclaration(Operation *op) {
  auto isDeclaration = [](Operation *op) {
    return isa<mdl::TrainOp, mdl::InferOp, mdl::DataOp>(op);
  };
  if (isDeclaration(op))
    return true;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isDeclaration(parent))
      return true;
  return false;
}

std::unique_ptr<Pass> createBufferizePass() {
  bufferization::OneShotBufferizationOptions options;
  options.opFilter.denyOperation(isEntryDeclaration);
  return bufferization::createOneShotBufferizePass(options);
}

/// modelc-opt's view of PipelineOptions.
struct PipelineCLOptions : public PassPipelineOptions<PipelineCLOptions> {
  Option<bool> widenToF64{*this, "widen-f64",
                          llvm::cl::desc("Compute in f64 (--mdl-widen-to-f64)"),
                          llvm::cl::init(false)};

  PipelineOptions get() const {
    PipelineOptions options;
    options.widenToF64 = widenToF64;
    return options;
  }
};

/// Each part of the kernels (a gpu.module of --mdl-lower-to-gpu) to NVVM
/// and the LLVM dialect, ready for --mdl-serialize-gpu. The pass manager
/// runs the parts in parallel.
void buildKernelsToNvvmPasses(OpPassManager &pm) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(arith::createArithExpandOpsPass());
  kernels.addPass(createConvertSCFToCFPass());
  // libdevice and NVVM's math patterns are f32/f64 only: a 16-bit math op
  // (gelu's tanh or erf on bf16, say) computes in f32 and rounds, as the CPU
  // target's LLVM promotion and PyTorch's opmath do.
  kernels.addPass(math::createMathLegalizeToF32());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  // Each buffer argument is one .u64 kernel parameter, its pointer.
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // What NVVM's patterns leave (integer math such as absi, ctpop) as LLVM
  // intrinsics, which NVPTX has.
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // What the translation to LLVM IR would otherwise change in the module
  // as it reads it (a branch to one block twice): --mdl-serialize-gpu
  // translates each part for several architectures at once.
  kernels.addPass(LLVM::createLegalizeForExportPass());
}

/// modelc-opt's view of GpuTargetOptions (modelc's --arch and --ptxas).
struct GpuPipelineCLOptions : public PassPipelineOptions<GpuPipelineCLOptions> {
  ListOption<std::string> archs{
      *this, "arch", llvm::cl::desc("GPU architectures (default sm_80,sm_90)")};
  Option<std::string> ptxas{
      *this, "ptxas",
      llvm::cl::desc("ptxas to make cubins: auto (PATH, then "
                     "/usr/local/cuda/bin), none, or a path"),
      llvm::cl::init("auto")};
  Option<unsigned> parts{
      *this, "parts",
      llvm::cl::desc("Parts to compile the kernels in (0: one per 64 "
                     "kernels, at most 16)"),
      llvm::cl::init(0)};

  GpuTargetOptions get() const {
    GpuTargetOptions options;
    if (!archs.empty())
      options.archs.assign(archs.begin(), archs.end());
    options.ptxas = ptxas;
    options.parts = parts;
    return options;
  }
};

/// A builder of stages that take PipelineOptions.
using StageBuilder = void (*)(OpPassManager &, const PipelineOptions &);

/// Registers `stages`, in order, as the modelc-opt pipeline `name`, whose
/// options are PipelineCLOptions.
void registerStages(llvm::StringRef name, llvm::StringRef description,
                    std::vector<StageBuilder> stages) {
  PassPipelineRegistration<PipelineCLOptions>(
      name, description,
      [stages](OpPassManager &pm, const PipelineCLOptions &cl) {
        PipelineOptions options = cl.get();
        for (StageBuilder build : stages)
          build(pm, options);
      });
}

/// Runs mdl-kernels-to-gpu on a clone of the outlined `module`, which the
/// CPU stage then gets untouched, and sets the clone's GPU program on
/// `module` as kGpuProgramAttrName. The passes report under `timing`
/// (--mlir-timing).
LogicalResult buildGpuProgram(ModuleOp module, const GpuTargetOptions &options,
                              TimingScope &timing) {
  OwningOpRef<ModuleOp> gpuModule = module.clone();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  pm.enableTiming(timing);
  buildKernelsToGpuProgramPipeline(pm, options);
  if (failed(pm.run(*gpuModule)))
    return failure();
  module->setAttr(kGpuProgramAttrName,
                  (*gpuModule)->getAttr(kGpuProgramAttrName));
  return success();
}

} // namespace

void buildMdlToLinalgPipeline(OpPassManager &pm,
                              const PipelineOptions &options) {
  pm.addPass(createMdlInlineCalls());
  pm.addPass(createMdlBuildEntryFunctions());
  pm.addPass(createMdlDecompose());
  // --widen-f64 asks for f64 wherever the program computes in f32; it
  // replaces the precision setting (a testing aid, docs/passes/amp.md).
  if (options.widenToF64)
    pm.addPass(createMdlWidenToF64());
  else
    pm.addPass(createMdlInsertAmpCasts());
  pm.addPass(createMdlAutodiff());
  pm.addPass(createMdlExpandOptimizer());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Every program can run on any number of ranks: its gradients are
  // all-reduced in buckets (a no-op with one rank).
  pm.addPass(createMdlShardDataParallel());
  pm.addPass(createMdlLowerToLinalg());
}

void buildLinalgToKernelsPipeline(OpPassManager &pm,
                                  const PipelineOptions &options) {
  // Elementwise chains become one loop nest (one kernel) before
  // bufferization, so their temporaries are never allocated.
  pm.addPass(createMdlFuseElementwise());
  pm.addPass(createBufferizePass());
  // Folds the copies and casts bufferization leaves, so that matmuls see
  // their real operands and the plan sees fewer temporaries.
  pm.addPass(createCanonicalizerPass());
  // An elementwise result copied into a buffer is written there directly
  // (a gradient accumulated in place).
  pm.addPass(createMdlElideCopies());
  pm.addPass(createMdlGemmToLibrary());
  pm.addPass(createMdlPlanMemory());
  pm.addPass(createCSEPass());
  pm.addPass(createMdlOutlineKernels());
  // Layers, entries and parameters of one shape share their kernels.
  pm.addPass(createMdlDedupeKernels());
}

void buildKernelsToGpuProgramPipeline(OpPassManager &pm,
                                      const GpuTargetOptions &options) {
  MdlLowerToGpuOptions lower;
  lower.parts = options.parts;
  pm.addPass(createMdlLowerToGpu(lower));
  buildKernelsToNvvmPasses(pm);
  MdlSerializeGpuOptions serialize;
  serialize.archs = options.archs;
  // libdevice comes with the toolkit of the ptxas asked for, when no
  // variable names one.
  serialize.cudaToolkit = findCudaToolkit(findPtxas(options.ptxas));
  pm.addPass(createMdlSerializeGpu(serialize));
  MdlAssembleGpuOptions assemble;
  assemble.ptxasSetting = options.ptxas;
  pm.addPass(createMdlAssembleGpu(assemble));
}

void buildKernelsToCpuPipeline(OpPassManager &pm,
                               const PipelineOptions &options) {
  pm.addPass(createMdlLowerToCpu());
}

void registerModelcPipelines() {
  registerStages(
      "mdl-to-linalg",
      "The mdl passes and --mdl-lower-to-linalg (modelc --emit=lowered)",
      {buildMdlToLinalgPipeline});
  registerStages(
      "mdl-linalg-to-kernels",
      "From linalg on tensors to the planned module outlined into kernels",
      {buildLinalgToKernelsPipeline});
  PassPipelineRegistration<GpuPipelineCLOptions>(
      "mdl-kernels-to-gpu",
      "The GPU program of the outlined module: mdl-lower-to-gpu, the "
      "lowering to NVVM, mdl-serialize-gpu, mdl-assemble-gpu",
      [](OpPassManager &pm, const GpuPipelineCLOptions &options) {
        buildKernelsToGpuProgramPipeline(pm, options.get());
      });
  registerStages("mdl-kernels-to-cpu",
                 "The CPU program of the outlined module: the LLVM dialect "
                 "with the program's ABI and manifest",
                 {buildKernelsToCpuPipeline});
  registerStages("mdl-linalg-to-llvm",
                 "mdl-linalg-to-kernels, then mdl-kernels-to-cpu",
                 {buildLinalgToKernelsPipeline, buildKernelsToCpuPipeline});
  registerStages("mdl-to-llvm", "mdl-to-linalg, then mdl-linalg-to-llvm",
                 {buildMdlToLinalgPipeline, buildLinalgToKernelsPipeline,
                  buildKernelsToCpuPipeline});
}

InputStage detectInputStage(ModuleOp module) {
  if (module->hasAttr("mdl.arena_bytes"))
    return InputStage::Planned;
  // An entry without its functions has not been through
  // --mdl-build-entry-functions, even when no function holds an mdl op (a
  // block that only returns its parameter, an entry without blocks).
  for (Operation &op : module.getOps()) {
    auto entry = dyn_cast<SymbolOpInterface>(&op);
    if (!entry || !isa<mdl::TrainOp, mdl::InferOp>(op))
      continue;
    bool built =
        llvm::any_of(module.getOps<func::FuncOp>(), [&](func::FuncOp f) {
          auto name = f->getAttrOfType<StringAttr>(kEntryAttrName);
          return name && name.getValue() == entry.getName();
        });
    if (!built)
      return InputStage::Mdl;
  }
  for (auto func : module.getOps<func::FuncOp>()) {
    WalkResult found = func.walk([](Operation *op) {
      return isa_and_nonnull<mdl::MdlDialect>(op->getDialect())
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (found.wasInterrupted())
      return InputStage::Mdl;
  }
  return InputStage::Linalg;
}

LogicalResult runPipeline(ModuleOp module, const PipelineOptions &options,
                          InputStage from, PipelineEnd to,
                          TimingScope &timing) {
  {
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    TimingScope kernelsTimer = timing.nest("to the kernels");
    pm.enableTiming(kernelsTimer);
    if (from == InputStage::Mdl)
      buildMdlToLinalgPipeline(pm, options);
    if (to != PipelineEnd::Linalg) {
      // On a planned module that is already partitioned, the partition
      // leaves what it finds.
      if (from == InputStage::Planned) {
        pm.addPass(createMdlOutlineKernels());
        pm.addPass(createMdlDedupeKernels());
      } else {
        buildLinalgToKernelsPipeline(pm, options);
      }
    }
    if (failed(pm.run(module)))
      return failure();
  }
  if (to == PipelineEnd::Linalg)
    return success();
  // The GPU program comes from a clone of the outlined module, so the CPU
  // lowering sees it as it is; the manifest it writes takes the program.
  if (options.gpu) {
    TimingScope gpuTimer = timing.nest("GPU program");
    if (failed(buildGpuProgram(module, *options.gpu, gpuTimer)))
      return failure();
  }
  if (to == PipelineEnd::GpuProgram)
    return success();
  PassManager cpu(module.getContext(), ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(cpu)))
    return failure();
  TimingScope cpuTimer = timing.nest("CPU lowering");
  cpu.enableTiming(cpuTimer);
  buildKernelsToCpuPipeline(cpu, options);
  return cpu.run(module);
}

} // namespace modelc
