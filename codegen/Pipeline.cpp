// The pass order of docs/pipeline.md, built from one options struct, and
// its registration as named pipelines.
#include "codegen/Pipeline.h"

#include "codegen/Passes.h"
#include "passes/EntryUtils.h"
#include "passes/Passes.h"

#include "dialects/mdl/MdlDialect.h"
#include "dialects/mdl/MdlOps.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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

} // namespace

void buildMdlToLinalgPipeline(OpPassManager &pm,
                              const PipelineOptions &options) {
  pm.addPass(createMdlInlineCalls());
  pm.addPass(createMdlBuildEntryFunctions());
  pm.addPass(createMdlDecompose());
  if (options.widenToF64)
    pm.addPass(createMdlWidenToF64());
  pm.addPass(createMdlAutodiff());
  pm.addPass(createMdlExpandOptimizer());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createMdlLowerToLinalg());
}

void buildLinalgToKernelsPipeline(OpPassManager &pm) {
  // Elementwise chains become one loop nest (one kernel) before
  // bufferization, so their temporaries are never allocated.
  pm.addPass(createMdlFuseElementwise());
  pm.addPass(createBufferizePass());
  // Folds the copies and casts bufferization leaves, so that matmuls see
  // their real operands and the plan sees fewer temporaries.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createMdlGemmToLibrary());
  pm.addPass(createMdlPlanMemory());
  pm.addPass(createCSEPass());
  pm.addPass(createMdlOutlineKernels());
}

void buildLinalgToLLVMPipeline(OpPassManager &pm) {
  buildLinalgToKernelsPipeline(pm);
  pm.addPass(createMdlLowerToCpu());
}

void registerModelcPipelines() {
  PassPipelineRegistration<PipelineCLOptions>(
      "mdl-to-linalg",
      "The mdl passes and --mdl-lower-to-linalg (modelc --emit=lowered)",
      [](OpPassManager &pm, const PipelineCLOptions &options) {
        buildMdlToLinalgPipeline(pm, options.get());
      });
  PassPipelineRegistration<>(
      "mdl-linalg-to-llvm",
      "From linalg on tensors to the LLVM dialect with the program's ABI",
      [](OpPassManager &pm) { buildLinalgToLLVMPipeline(pm); });
  PassPipelineRegistration<PipelineCLOptions>(
      "mdl-to-llvm", "mdl-to-linalg, then mdl-linalg-to-llvm",
      [](OpPassManager &pm, const PipelineCLOptions &options) {
        buildMdlToLinalgPipeline(pm, options.get());
        buildLinalgToLLVMPipeline(pm);
      });
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
                          InputStage from, PipelineEnd to) {
  // One timer for both pass managers: --mlir-timing reports them together.
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope root = timing.getRootScope();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  TimingScope kernelsTimer = root.nest("to the kernels");
  pm.enableTiming(kernelsTimer);
  if (from == InputStage::Mdl)
    buildMdlToLinalgPipeline(pm, options);
  if (to != PipelineEnd::Linalg) {
    // On a planned module that is already partitioned, the partition
    // leaves what it finds.
    if (from == InputStage::Planned)
      pm.addPass(createMdlOutlineKernels());
    else
      buildLinalgToKernelsPipeline(pm);
  }
  if (failed(pm.run(module)))
    return failure();
  if (to == PipelineEnd::Linalg)
    return success();
  // The GPU program comes from a clone of the outlined module, so the CPU
  // lowering sees it as it is; the manifest it writes takes the program.
  if (options.gpu) {
    TimingScope gpuTimer = root.nest("GPU program");
    if (failed(buildGpuProgram(module, *options.gpu, &gpuTimer)))
      return failure();
  }
  if (to == PipelineEnd::GpuProgram)
    return success();
  PassManager cpu(module.getContext(), ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(cpu)))
    return failure();
  TimingScope cpuTimer = root.nest("CPU lowering");
  cpu.enableTiming(cpuTimer);
  cpu.addPass(createMdlLowerToCpu());
  return cpu.run(module);
}

} // namespace modelc
