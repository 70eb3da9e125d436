// modelc: the model compiler driver. Parses a .mdl file and its imports,
// checks and elaborates them, and emits the stage that --emit asks for.
#include "frontend/ASTDump.h"
#include "frontend/Frontend.h"
#include "frontend/Manifest.h"
#include "frontend/mlirgen/MLIRGen.h"
#include "tools/Registration.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Regex.h"
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
                                   cl::desc("<input .mdl file>"),
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
                          "the IR after autodiff, optimizer and lowering "
                          "(not available yet)"),
               clEnumValN(EmitKind::LLVM, "llvm",
                          "LLVM IR of the host program (not available yet)"),
               clEnumValN(EmitKind::PTX, "ptx",
                          "PTX of the GPU kernels (not available yet)"),
               clEnumValN(EmitKind::Obj, "obj",
                          "the object file (not available yet)")),
    cl::cat(modelcCategory));

cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Override a top-level const"),
                              cl::value_desc("NAME=VALUE"),
                              cl::cat(modelcCategory));

cl::list<std::string> targets("target", cl::CommaSeparated,
                              cl::desc("Targets of the program: cuda, cpu "
                                       "(default: cuda,cpu)"),
                              cl::value_desc("cuda,cpu"),
                              cl::cat(modelcCategory));

cl::list<std::string> archs("arch", cl::CommaSeparated,
                            cl::desc("GPU architectures (sm_80, sm_90, ...)"),
                            cl::value_desc("sm_XX,..."),
                            cl::cat(modelcCategory));

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
  llvm::Regex smArch("^sm_[1-9][0-9]+a?$");
  for (const std::string &arch : archs)
    if (!smArch.match(arch)) {
      fail("unknown GPU architecture '" + arch +
           "' (expected sm_XX, e.g. sm_80 or sm_90)");
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

llvm::StringRef severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  case mlir::DiagnosticSeverity::Note:
    break;
  }
  return "note";
}

/// MLIR diagnostics (only internal errors reach the user) in the frontend's
/// clang style: `file:line:col: error: message`, then the notes.
llvm::LogicalResult printDiagnostic(mlir::Diagnostic &diag) {
  auto print = [](mlir::Diagnostic &d) {
    if (auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
      llvm::errs() << loc.getFilename().getValue() << ":" << loc.getLine()
                   << ":" << loc.getColumn() << ": ";
    llvm::errs() << severityName(d.getSeverity()) << ": " << d << "\n";
  };
  print(diag);
  for (mlir::Diagnostic &note : diag.getNotes())
    print(note);
  return mlir::success();
}

const char *stageName(EmitKind kind) {
  switch (kind) {
  case EmitKind::Lowered:
    return "--emit=lowered";
  case EmitKind::LLVM:
    return "--emit=llvm";
  case EmitKind::PTX:
    return "--emit=ptx";
  case EmitKind::Obj:
    return "--emit=obj";
  default:
    return "building an executable";
  }
}

int compile() {
  modelc::FrontendOptions options;
  options.stdlibDir = stdlibDir;
  if (!parseDefines(options))
    return 1;

  modelc::SourceManager sm;
  modelc::DiagnosticEngine diag(sm, std::cerr);
  modelc::Program program;
  if (!modelc::buildProgram(inputFilename, options, sm, diag, program) ||
      diag.hasErrors())
    return 1;
  if (emitKind == EmitKind::Manifest)
    return writeOutput(
        [&](llvm::raw_ostream &os) { os << modelc::manifestJSON(program); });
  if (emitKind == EmitKind::Params)
    return writeOutput(
        [&](llvm::raw_ostream &os) { os << modelc::parameterTable(program); });

  mlir::DialectRegistry registry;
  modelc::registerModelcDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::ScopedDiagnosticHandler handler(&context, printDiagnostic);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      modelc::generateMLIR(program, sm, context);
  if (!module)
    return fail("internal error: generated IR does not verify");
  if (emitKind == EmitKind::Mdl)
    return writeOutput([&](llvm::raw_ostream &os) {
      // Exactly as modelc-opt prints, so the two agree byte for byte.
      module->print(os);
      os << "\n";
    });
  return fail(llvm::Twine(stageName(emitKind)) +
              " is not available yet: the CPU and CUDA backends come in a "
              "later release (available now: --emit=ast, --emit=mdl, "
              "--emit=manifest, --emit=params)");
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
  mlir::registerAsmPrinterCLOptions();
  showDebugInfoOption();
  cl::HideUnrelatedOptions(modelcCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "modelc: the ahead-of-time model compiler\n");
  if (!checkTargetFlags())
    return 1;
  // Nothing that a user writes may crash the compiler: anything thrown
  // below is a bug of ours, reported as such.
  try {
    return emitKind == EmitKind::AST ? emitAST() : compile();
  } catch (const std::exception &e) {
    return fail(llvm::Twine("internal error: ") + e.what());
  } catch (...) {
    return fail("internal error: unexpected exception");
  }
}
