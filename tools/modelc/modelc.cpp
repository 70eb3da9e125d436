// modelc: the model compiler driver. Parses a .mdl file and its imports,
// checks and elaborates them, runs the pipeline of codegen/Pipeline.h and
// emits the stage that --emit asks for, by default a linked executable.
#include "codegen/Link.h"
#include "codegen/Pipeline.h"
#include "frontend/ASTDump.h"
#include "frontend/Frontend.h"
#include "frontend/Manifest.h"
#include "frontend/mlirgen/MLIRGen.h"
#include "tools/Registration.h"
#include "tools/modelc/CompilerDiagnostics.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <exception>
#include <iostream>
#include <sstream>

namespace cl = llvm::cl;

namespace {

enum class EmitKind {
  Executable,
  AST,
  Mdl,
  Manifest,
  Params,
  Lowered,
  LLVM,
  PTX,
  Obj
};

cl::OptionCategory modelcCategory("modelc options");

cl::opt<std::string> inputFilename(cl::Positional, cl::Required,
                                   cl::desc("<input .mdl or .mlir file>"),
                                   cl::cat(modelcCategory));

cl::opt<std::string> outputFilename("o", cl::desc("Output file ('-': stdout)"),
                                    cl::value_desc("file"), cl::init("-"),
                                    cl::cat(modelcCategory));

cl::opt<EmitKind> emitKind(
    "emit", cl::desc("Stop after a stage and write it"),
    cl::init(EmitKind::Executable),
    cl::values(clEnumValN(EmitKind::AST, "ast",
                          "the syntax tree of the main file"),
               clEnumValN(EmitKind::Mdl, "mdl", "the mdl dialect (MLIR text)"),
               clEnumValN(EmitKind::Manifest, "manifest",
                          "entries, parameters and data sets as JSON"),
               clEnumValN(EmitKind::Params, "params",
                          "a table of the parameters and their total"),
               clEnumValN(EmitKind::Lowered, "lowered",
                          "linalg on tensors, after autodiff, optimizer and "
                          "--mdl-lower-to-linalg (MLIR text)"),
               clEnumValN(EmitKind::LLVM, "llvm",
                          "optimised LLVM IR of the CPU program"),
               clEnumValN(EmitKind::PTX, "ptx",
                          "PTX of the GPU kernels: each --arch after a "
                          "'// arch sm_XX' line, or the one asked for"),
               clEnumValN(EmitKind::Obj, "obj", "the program's object file")),
    cl::cat(modelcCategory));

cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Override a top-level const"),
                              cl::value_desc("NAME=VALUE"),
                              cl::cat(modelcCategory));

cl::opt<std::string> precision(
    "precision",
    cl::desc("The precision of every train entry, instead of its setting: "
             "f32, bf16 or f16"),
    cl::value_desc("f32|bf16|f16"), cl::cat(modelcCategory));

cl::list<std::string> targets("target", cl::CommaSeparated,
                              cl::desc("Targets of the program: cuda, cpu "
                                       "(default: cuda,cpu)"),
                              cl::value_desc("cuda,cpu"),
                              cl::cat(modelcCategory));

cl::list<std::string> archs("arch", cl::CommaSeparated,
                            cl::desc("GPU architectures (sm_80, sm_90, ...)"),
                            cl::value_desc("sm_XX,..."),
                            cl::cat(modelcCategory));

cl::opt<std::string>
    runtimeDir("runtime-dir",
               cl::desc("Where libmodelc_rt.a and libmodelc_rt_main.a are"),
               cl::value_desc("dir"), cl::init(MODELC_DEFAULT_RUNTIME_DIR),
               cl::cat(modelcCategory));

cl::opt<std::string> cpuName(
    "mcpu",
    cl::desc("LLVM CPU name the code is for (default: the host's, 'native'); "
             "x86-64 or x86-64-v3 for programs that run elsewhere"),
    cl::value_desc("cpu"), cl::cat(modelcCategory));

cl::opt<std::string>
    cpuFeatures("cpu-features",
                cl::desc("LLVM CPU features to add (+avx2,-avx512f)"),
                cl::value_desc("features"), cl::cat(modelcCategory));

cl::opt<bool> widenToF64(
    "widen-f64",
    cl::desc("Compute in f64 where the program says f32 (testing aid: "
             "gradient checks)"),
    cl::init(false), cl::cat(modelcCategory));

cl::opt<std::string> linkerName(
    "fuse-ld",
    cl::desc("The linker of -o (lld, gold, bfd; default: lld, else gold, "
             "else the C++ driver's)"),
    cl::value_desc("name"), cl::Hidden, cl::cat(modelcCategory));

cl::opt<unsigned>
    jobs("j",
         cl::desc("Threads to compile with: the kernels' parts, architectures "
                  "and ptxas runs, the object file's parts (default: every "
                  "core)"),
         cl::value_desc("N"), cl::init(0), cl::cat(modelcCategory));

cl::opt<std::string> stdlibDir("stdlib",
                               cl::desc("Where `import \"nn\"` finds nn.mdl"),
                               cl::value_desc("dir"),
                               cl::init(MODELC_DEFAULT_STDLIB_DIR),
                               cl::cat(modelcCategory));

int fail(const llvm::Twine &message) {
  llvm::errs() << "modelc: error: " << message << "\n";
  return 1;
}

/// Checks the flags that the frontend does not read.
bool checkTargetFlags() {
  for (const std::string &target : targets)
    if (target != "cuda" && target != "cpu") {
      fail("unknown target '" + target + "' (expected cuda or cpu)");
      return false;
    }
  for (const std::string &arch : archs)
    if (llvm::Error error = modelc::checkGpuArch(arch)) {
      fail(llvm::toString(std::move(error)));
      return false;
    }
  return true;
}

/// Splits the -D flags into (name, value) pairs.
bool parseDefines(modelc::FrontendOptions &options) {
  for (llvm::StringRef define : defines) {
    auto [name, value] = define.split('=');
    if (name.size() == define.size() || name.trim().empty()) {
      fail("-D expects NAME=VALUE, got '" + define + "'");
      return false;
    }
    options.defines.emplace_back(name.trim().str(), value.str());
  }
  return true;
}

/// Opens the output (`-o`, stdout by default) and writes to it.
int writeOutput(llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  write(output->os());
  output->os().flush();
  if (output->os().has_error()) {
    output->os().clear_error();
    return fail("cannot write '" + outputFilename + "'");
  }
  output->keep();
  return 0;
}

int emitAST() {
  modelc::SourceManager sm;
  modelc::DiagnosticEngine diag(sm, std::cerr);
  std::string error;
  int file = sm.loadFile(inputFilename, error);
  if (file < 0)
    return fail(error);
  std::unique_ptr<modelc::ast::Module> module =
      modelc::parseFile(file, sm, diag);
  if (!module || diag.hasErrors())
    return 1;
  std::ostringstream text;
  modelc::dumpAST(*module, sm, text);
  return writeOutput([&](llvm::raw_ostream &os) { os << text.str(); });
}

bool isMLIRInput() { return llvm::StringRef(inputFilename).ends_with(".mlir"); }

/// Whether the program is for the GPU too: the default `cuda,cpu`, or a
/// --target list with cuda. The CPU object is built either way: the
/// runtime's function table needs it, and `--cpu` runs it.
bool hasCudaTarget() {
  return targets.empty() || llvm::is_contained(targets, "cuda");
}

/// The PTX of each architecture, after a `// arch sm_XX` line each when
/// there are several.
void writePtx(mlir::ModuleOp module, llvm::raw_ostream &os) {
  std::vector<modelc::GpuImage> images = modelc::getGpuImages(module);
  size_t ptxCount = llvm::count_if(
      images, [](const modelc::GpuImage &image) { return !image.cubin; });
  for (const modelc::GpuImage &image : images) {
    if (image.cubin)
      continue;
    if (ptxCount > 1)
      os << "// arch " << image.arch << "\n";
    os << image.data;
  }
}

/// Runs the pipeline on `module` (from the stage its IR is at) and writes
/// what --emit asks for: linalg IR, LLVM IR, an object file or, by default,
/// the linked executable. A step that fails after reporting internal errors
/// exits 3; one that fails for a reason outside the compiler (an option
/// LLVM refuses, a failing link) exits 1. Each step reports under `timing`.
int runBackend(mlir::ModuleOp module, modelc::CompilerDiagnostics &diagnostics,
               mlir::TimingScope &timing) {
  if (emitKind == EmitKind::PTX && !hasCudaTarget())
    return fail("--emit=ptx needs the cuda target (--target cuda or "
                "cuda,cpu)");
  if (emitKind == EmitKind::Executable && outputFilename == "-")
    return fail("an executable needs -o FILE");
  modelc::PipelineOptions options;
  options.widenToF64 = widenToF64;
  options.cpu.cpu = cpuName;
  options.cpu.features = cpuFeatures;
  if (hasCudaTarget()) {
    options.gpu.emplace();
    if (!archs.empty())
      options.gpu->archs.assign(archs.begin(), archs.end());
    // --emit=ptx stops at the PTX: no cubins, and one PTX text per
    // architecture.
    if (emitKind == EmitKind::PTX) {
      options.gpu->ptxas = "none";
      options.gpu->parts = 1;
    }
  }
  modelc::PipelineEnd end = modelc::PipelineEnd::LLVM;
  if (emitKind == EmitKind::Lowered)
    end = modelc::PipelineEnd::Linalg;
  else if (emitKind == EmitKind::PTX)
    end = modelc::PipelineEnd::GpuProgram;
  diagnostics.beginBackend();
  auto internalError = [&](const llvm::Twine &message) {
    if (!diagnostics.sawInternalError())
      diagnostics.reportInternalError(message);
    return int(modelc::kInternalError);
  };
  if (mlir::failed(modelc::runPipeline(
          module, options, modelc::detectInputStage(module), end, timing)))
    return diagnostics.sawProgramError() && !diagnostics.sawInternalError()
               ? int(modelc::kUserError)
               : internalError("the pipeline failed without a message");
  if (end == modelc::PipelineEnd::Linalg)
    return writeOutput([&](llvm::raw_ostream &os) {
      module->print(os);
      os << "\n";
    });
  if (end == modelc::PipelineEnd::GpuProgram)
    return writeOutput([&](llvm::raw_ostream &os) { writePtx(module, os); });
  auto llvmFailure = [&](llvm::Error error) {
    std::string message = llvm::toString(std::move(error));
    return diagnostics.sawInternalError() ? int(modelc::kInternalError)
                                          : fail(message);
  };

  if (emitKind == EmitKind::LLVM) {
    llvm::LLVMContext llvmContext;
    diagnostics.setStep("the translation to LLVM IR");
    mlir::TimingScope llvmTimer = timing.nest("LLVM IR");
    llvm::Expected<std::unique_ptr<llvm::Module>> llvmModule =
        modelc::translateAndOptimize(module, llvmContext, options.cpu);
    if (!llvmModule)
      return llvmFailure(llvmModule.takeError());
    return writeOutput(
        [&](llvm::raw_ostream &os) { (*llvmModule)->print(os, nullptr); });
  }
  // --emit=obj writes one object file; an executable links the parts.
  diagnostics.setStep("the object file's code generation");
  mlir::TimingScope objectTimer = timing.nest("object code");
  llvm::Expected<std::vector<std::string>> objects = modelc::emitObjectFiles(
      module, options.cpu, emitKind == EmitKind::Obj ? 1 : 0, objectTimer);
  objectTimer.stop();
  if (!objects)
    return llvmFailure(objects.takeError());
  if (emitKind == EmitKind::Obj)
    return writeOutput([&](llvm::raw_ostream &os) { os << objects->front(); });
  modelc::LinkOptions link;
  link.runtimeDir = runtimeDir;
  link.linker = linkerName;
  mlir::TimingScope linkTimer = timing.nest("link");
  if (llvm::Error error =
          modelc::linkExecutable(*objects, outputFilename, link))
    return fail(llvm::toString(std::move(error)));
  return 0;
}

/// A `.mlir` input: a module at the mdl level (as --emit=mdl writes it) or
/// at the linalg level (as --emit=lowered writes it); the pipeline starts
/// where its IR is.
int compileMLIR(mlir::MLIRContext &context,
                modelc::CompilerDiagnostics &diagnostics,
                mlir::TimingScope &timing) {
  if (emitKind == EmitKind::Manifest || emitKind == EmitKind::Params)
    return fail("--emit=manifest and --emit=params need a .mdl input");
  if (!precision.empty())
    return fail("--precision needs a .mdl input (an .mlir module has its "
                "settings)");
  mlir::TimingScope parseTimer = timing.nest("parse MLIR");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(inputFilename, &context);
  parseTimer.stop();
  if (!module)
    return 1;
  if (emitKind == EmitKind::Mdl)
    return writeOutput([&](llvm::raw_ostream &os) {
      module->print(os);
      os << "\n";
    });
  return runBackend(*module, diagnostics, timing);
}

/// A `.mdl` input: the frontend, then the stage --emit asks for.
int compileMDL(mlir::MLIRContext &context,
               modelc::CompilerDiagnostics &diagnostics,
               mlir::TimingScope &timing) {
  modelc::FrontendOptions options;
  options.stdlibDir = stdlibDir;
  if (!parseDefines(options))
    return 1;
  if (!precision.empty() && precision != "f32" && precision != "bf16" &&
      precision != "f16")
    return fail("--precision must be f32, bf16 or f16, got '" + precision +
                "'");
  options.precision = precision;

  modelc::SourceManager sm;
  modelc::DiagnosticEngine diag(sm, std::cerr);
  modelc::Program program;
  mlir::TimingScope frontendTimer = timing.nest("frontend");
  if (!modelc::buildProgram(inputFilename, options, sm, diag, program) ||
      diag.hasErrors())
    return 1;
  if (emitKind == EmitKind::Manifest)
    return writeOutput(
        [&](llvm::raw_ostream &os) { os << modelc::manifestJSON(program); });
  if (emitKind == EmitKind::Params)
    return writeOutput(
        [&](llvm::raw_ostream &os) { os << modelc::parameterTable(program); });

  // The program is checked: whatever fails from here on is the compiler's.
  diagnostics.beginBackend();
  diagnostics.setStep("the generation of the mdl dialect");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      modelc::generateMLIR(program, sm, context);
  frontendTimer.stop();
  if (!module) {
    if (!diagnostics.sawInternalError())
      diagnostics.reportInternalError("the generated IR does not verify");
    return modelc::kInternalError;
  }
  if (emitKind == EmitKind::Mdl)
    return writeOutput([&](llvm::raw_ostream &os) {
      // Exactly as modelc-opt prints, so the two agree byte for byte.
      module->print(os);
      os << "\n";
    });
  return runBackend(*module, diagnostics, timing);
}

/// The threads of -j: every core by default.
unsigned countThreads() {
  return jobs ? unsigned(jobs)
              : llvm::hardware_concurrency().compute_thread_count();
}

int compile() {
  mlir::DialectRegistry registry;
  modelc::registerModelcDialects(registry);
  // MLIR's parallel passes and modelc's parallel compilation (GPU parts and
  // architectures, ptxas, the object file's parts) share one pool of -j
  // threads; with one there is none.
  unsigned threads = countThreads();
  std::unique_ptr<llvm::DefaultThreadPool> pool;
  if (threads > 1)
    pool = std::make_unique<llvm::DefaultThreadPool>(
        llvm::hardware_concurrency(threads));
  // A context made without threads takes a pool of ours (setThreadPool
  // requires it), which turns its threading on.
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  if (pool)
    context.setThreadPool(*pool);
  modelc::CompilerDiagnostics diagnostics(context);
  // --mlir-timing: one tree from the frontend to the link.
  mlir::DefaultTimingManager timingManager;
  mlir::applyDefaultTimingManagerCLOptions(timingManager);
  mlir::TimingScope timing = timingManager.getRootScope();
  int status = isMLIRInput() ? compileMLIR(context, diagnostics, timing)
                             : compileMDL(context, diagnostics, timing);
  if (diagnostics.sawInternalError()) {
    if (isMLIRInput())
      llvm::errs() << "modelc: note: a bug in modelc, or in '" << inputFilename
                   << "', which no frontend has checked\n";
    else
      llvm::errs() << "modelc: note: this is a bug in modelc, not in '"
                   << inputFilename
                   << "': please report it with that file and the command "
                      "line\n";
  }
  return status;
}

/// Lists --mlir-print-debuginfo with modelc's own options in --help.
void showDebugInfoOption() {
  auto &options = cl::getRegisteredOptions();
  auto it = options.find("mlir-print-debuginfo");
  if (it != options.end())
    it->second->addCategory(modelcCategory);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  modelc::installInternalErrorHandlers();
  mlir::registerAsmPrinterCLOptions();
  // --mlir-timing (hidden): where the compile time goes, pass by pass.
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  showDebugInfoOption();
  cl::HideUnrelatedOptions(modelcCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "modelc: the ahead-of-time model compiler\n");
  // The CUDA target's PTX comes from LLVM's NVPTX backend, in process.
  modelc::initializeNvptxTarget();
  if (!checkTargetFlags())
    return 1;
  // Nothing that a user writes may crash the compiler: anything thrown
  // below is a bug of ours, reported as such.
  try {
    if (emitKind == EmitKind::AST && isMLIRInput())
      return fail("--emit=ast needs a .mdl input");
    return emitKind == EmitKind::AST ? emitAST() : compile();
  } catch (const std::bad_alloc &) {
    llvm::errs() << "modelc: error: out of memory\n";
    return modelc::kUserError;
  } catch (const std::exception &e) {
    llvm::errs() << "modelc: internal error: " << e.what() << "\n";
  } catch (...) {
    llvm::errs() << "modelc: internal error: an unexpected exception\n";
  }
  return modelc::kInternalError;
}
