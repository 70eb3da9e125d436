// LLVM dialect -> LLVM IR -> object file for the host, with LLVM's own
// TargetMachine and new pass manager (no llc or clang at compile time).
#include "codegen/cpu/ObjectEmitter.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

namespace modelc {

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The CPU name and feature string for `options`: the host's own when no CPU
/// is named, so that loops vectorise with every vector unit it has.
std::pair<std::string, std::string>
getCpuAndFeatures(const CpuTargetOptions &options) {
  if (!options.cpu.empty() && options.cpu != "native")
    return {options.cpu, options.features};
  std::string features;
  for (const llvm::StringMapEntry<bool> &feature :
       llvm::sys::getHostCPUFeatures())
    features += (features.empty() ? "" : ",") +
                std::string(feature.second ? "+" : "-") + feature.first().str();
  if (!options.features.empty())
    features += (features.empty() ? "" : ",") + options.features;
  return {llvm::sys::getHostCPUName().str(), features};
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CpuTargetOptions &options) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("no LLVM target for the host (" + triple + "): " + error);
  if (options.optLevel > 3)
    return makeError("optimisation level " + llvm::Twine(options.optLevel) +
                     " is not 0 to 3");
  auto [cpu, features] = getCpuAndFeatures(options);
  // Checked first: LLVM only warns about an unknown CPU and then ignores it.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!subtarget || !subtarget->isCPUStringValid(cpu))
    return makeError("unknown CPU '" + cpu + "' for " + triple +
                     " (try x86-64, x86-64-v2, x86-64-v3 or native)");
  // Position-independent: the system linker makes PIE executables.
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel(options.optLevel)));
  if (!machine)
    return makeError("LLVM cannot target CPU '" + cpu + "' with features '" +
                     features + "'");
  return std::move(machine);
}

llvm::OptimizationLevel getOptimizationLevel(unsigned level) {
  switch (level) {
  case 0:
    return llvm::OptimizationLevel::O0;
  case 1:
    return llvm::OptimizationLevel::O1;
  case 2:
    return llvm::OptimizationLevel::O2;
  default:
    return llvm::OptimizationLevel::O3;
  }
}

} // namespace

llvm::Expected<std::unique_ptr<llvm::Module>>
translateAndOptimize(mlir::ModuleOp module, llvm::LLVMContext &context,
                     const CpuTargetOptions &options) {
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(options);
  if (!machine)
    return machine.takeError();
  mlir::registerBuiltinDialectTranslation(*module.getContext());
  mlir::registerLLVMDialectTranslation(*module.getContext());
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context, "modelc");
  if (!llvmModule)
    return makeError("the LLVM dialect module does not translate to LLVM IR");
  llvmModule->setTargetTriple((*machine)->getTargetTriple().str());
  llvmModule->setDataLayout((*machine)->createDataLayout());
  if (options.optLevel == 0)
    return std::move(llvmModule);

  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgsccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  // No unrolling beyond the vectoriser's interleaving: our loops have
  // constant trip counts and constant addresses, which LLVM's cost model
  // finds cheap to unroll fully; in GPT-2 that turned 256-iteration vector
  // loops into straight-line code, 10x the IR and 5 minutes of instruction
  // scheduling, for loops that are bound by memory anyway.
  tuning.LoopUnrolling = false;
  llvm::PassBuilder builder(machine->get(), tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgsccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgsccs, modules);
  builder.buildPerModuleDefaultPipeline(getOptimizationLevel(options.optLevel))
      .run(*llvmModule, modules);
  return std::move(llvmModule);
}

llvm::Error emitObjectFile(llvm::Module &module,
                           const CpuTargetOptions &options,
                           llvm::raw_pwrite_stream &os) {
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(options);
  if (!machine)
    return machine.takeError();
  llvm::legacy::PassManager passes;
  if ((*machine)->addPassesToEmitFile(passes, os, nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return makeError("LLVM cannot emit an object file for " +
                     module.getTargetTriple());
  passes.run(module);
  return llvm::Error::success();
}

} // namespace modelc
