// LLVM dialect -> LLVM IR -> object file for the host, with LLVM's own
// TargetMachine and new pass manager (no llc or clang at compile time).
#include "codegen/cpu/ObjectEmitter.h"

#include "mlir/IR/Threading.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <algorithm>
#include <mutex>

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
  // Registers the target once: the parts' threads create machines too.
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
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

namespace {

/// `module` translated to LLVM IR for the host's triple and the data layout
/// of `options`' CPU.
llvm::Expected<std::unique_ptr<llvm::Module>>
translate(mlir::ModuleOp module, llvm::LLVMContext &context,
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
  return std::move(llvmModule);
}

/// LLVM's default module pipeline at `options.optLevel`.
llvm::Error optimize(llvm::Module &module, const CpuTargetOptions &options) {
  if (options.optLevel == 0)
    return llvm::Error::success();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(options);
  if (!machine)
    return machine.takeError();
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
      .run(module, modules);
  return llvm::Error::success();
}

size_t countDefinedFunctions(const llvm::Module &module) {
  size_t count = 0;
  for (const llvm::Function &function : module)
    if (!function.isDeclaration())
      ++count;
  return count;
}

} // namespace

llvm::Expected<std::unique_ptr<llvm::Module>>
translateAndOptimize(mlir::ModuleOp module, llvm::LLVMContext &context,
                     const CpuTargetOptions &options) {
  llvm::Expected<std::unique_ptr<llvm::Module>> llvmModule =
      translate(module, context, options);
  if (!llvmModule)
    return llvmModule.takeError();
  if (llvm::Error error = optimize(**llvmModule, options))
    return std::move(error);
  return std::move(*llvmModule);
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

llvm::Expected<std::vector<std::string>>
emitObjectFiles(mlir::ModuleOp module, const CpuTargetOptions &options,
                unsigned parts, mlir::TimingScope &timing) {
  // One context for the whole module, then one per part: an LLVMContext is
  // used by one thread at a time, so parts travel as bitcode.
  std::vector<std::string> bitcodes;
  {
    mlir::TimingScope translation = timing.nest("translation to LLVM IR");
    llvm::LLVMContext context;
    llvm::Expected<std::unique_ptr<llvm::Module>> whole =
        translate(module, context, options);
    if (!whole)
      return whole.takeError();
    if (!parts)
      parts = unsigned(std::clamp<size_t>(
          (countDefinedFunctions(**whole) + kFunctionsPerPart - 1) /
              kFunctionsPerPart,
          1, kMaxObjectParts));
    translation.stop();
    mlir::TimingScope split = timing.nest("split into parts");
    auto keep = [&](std::unique_ptr<llvm::Module> part) {
      std::string bitcode;
      llvm::raw_string_ostream os(bitcode);
      llvm::WriteBitcodeToFile(*part, os);
      os.flush();
      bitcodes.push_back(std::move(bitcode));
    };
    if (parts == 1)
      keep(std::move(*whole));
    else
      llvm::SplitModule(**whole, parts, keep, /*PreserveLocals=*/false);
  }

  mlir::TimingScope compile = timing.nest(
      "optimisation and object code (" + std::to_string(bitcodes.size()) +
      (bitcodes.size() == 1 ? " part)" : " parts in parallel)"));
  std::vector<std::string> objects(bitcodes.size()), errors(bitcodes.size());
  auto indices = llvm::to_vector(llvm::seq<size_t>(0, bitcodes.size()));
  (void)mlir::failableParallelForEach(
      module.getContext(), indices, [&](size_t i) -> mlir::LogicalResult {
        auto fail = [&](llvm::Error error) {
          errors[i] = llvm::toString(std::move(error));
          return mlir::failure();
        };
        llvm::LLVMContext context;
        llvm::Expected<std::unique_ptr<llvm::Module>> part =
            llvm::parseBitcodeFile(
                llvm::MemoryBufferRef(bitcodes[i], "modelc-part"), context);
        if (!part)
          return fail(part.takeError());
        if (llvm::Error error = optimize(**part, options))
          return fail(std::move(error));
        llvm::SmallVector<char, 0> object;
        llvm::raw_svector_ostream stream(object);
        if (llvm::Error error = emitObjectFile(**part, options, stream))
          return fail(std::move(error));
        objects[i].assign(object.begin(), object.end());
        return mlir::success();
      });
  for (const std::string &error : errors)
    if (!error.empty())
      return makeError(error);
  return objects;
}

} // namespace modelc
