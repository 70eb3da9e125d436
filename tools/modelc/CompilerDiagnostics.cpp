// modelc's diagnostics: the frontend's clang style for what the program did
// wrong, and internal errors, with the pass and the source location, for
// what the compiler did wrong (CompilerDiagnostics.h).
#include "tools/modelc/CompilerDiagnostics.h"

#include "codegen/Passes.h"

#include "mlir/IR/Location.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

using namespace mlir;

namespace modelc {

/// The passes running on the thread that runs the pipeline, outermost
/// first. Nested pass managers may run their passes on worker threads too;
/// their diagnostics reach the handler on the main thread (MLIR collects
/// them in order), while the outer pass still runs, so the main thread's
/// view names the pass. Errors of the verifier come just after a pass ends:
/// they go to the pass that ended last.
struct CompilerDiagnostics::PassStack {
  std::mutex mutex;
  std::thread::id mainThread = std::this_thread::get_id();
  std::vector<std::string> running;
  std::string lastEnded;
  std::string step;
};

namespace {

llvm::StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Note:
    break;
  }
  return "note";
}

/// The first `file:line:col` in `loc`: the op's own for a call site (an
/// inlined block's op), the first of a fused location; empty for none.
std::string sourceLocation(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    auto file = dyn_cast<FileLineColLoc>(inner);
    if (!file)
      return WalkResult::advance();
    text = (file.getFilename().getValue() + ":" + llvm::Twine(file.getLine()) +
            ":" + llvm::Twine(file.getColumn()))
               .str();
    return WalkResult::interrupt();
  });
  return text;
}

/// A note's text, cut short: "see current operation" can print a whole
/// function.
std::string shortened(const Diagnostic &diag) {
  constexpr size_t kMaxNote = 1500;
  std::string text = diag.str();
  if (text.size() > kMaxNote)
    text = text.substr(0, kMaxNote) + " ...";
  return text;
}

void printPlain(const Diagnostic &diag) {
  std::string loc = sourceLocation(diag.getLocation());
  if (!loc.empty())
    llvm::errs() << loc << ": ";
  llvm::errs() << severityName(diag.getSeverity()) << ": " << shortened(diag)
               << "\n";
}

} // namespace

CompilerDiagnostics::CompilerDiagnostics(MLIRContext &context)
    : context(context), passes(std::make_unique<PassStack>()) {
  handler = std::make_unique<ScopedDiagnosticHandler>(
      &context, [this](Diagnostic &diag) { return print(diag); });
  context.registerActionHandler(
      [this](llvm::function_ref<void()> transform,
             const tracing::Action &action) { wrapPass(transform, action); });
}

CompilerDiagnostics::~CompilerDiagnostics() {
  context.registerActionHandler(nullptr);
}

void CompilerDiagnostics::wrapPass(llvm::function_ref<void()> transform,
                                   const tracing::Action &action) {
  auto *execution = llvm::dyn_cast<PassExecutionAction>(&action);
  // A pass adaptor (a nested pipeline) has no argument: its passes have.
  if (!execution || execution->getPass().getArgument().empty() ||
      std::this_thread::get_id() != passes->mainThread)
    return transform();
  std::string name = execution->getPass().getArgument().str();
  {
    std::lock_guard<std::mutex> lock(passes->mutex);
    passes->running.push_back(name);
  }
  transform();
  std::lock_guard<std::mutex> lock(passes->mutex);
  passes->running.pop_back();
  passes->lastEnded = name;
  passes->step.clear();
}

void CompilerDiagnostics::setStep(std::string step) {
  std::lock_guard<std::mutex> lock(passes->mutex);
  passes->step = std::move(step);
}

std::string CompilerDiagnostics::currentStep() const {
  std::lock_guard<std::mutex> lock(passes->mutex);
  if (!passes->running.empty()) {
    std::string text = "in --" + passes->running.front();
    if (passes->running.size() > 1)
      text += " (its --" + passes->running.back() + ")";
    return text;
  }
  if (!passes->step.empty())
    return "in " + passes->step;
  if (!passes->lastEnded.empty())
    return "after --" + passes->lastEnded;
  return "before the first pass";
}

void CompilerDiagnostics::reportInternalError(const llvm::Twine &message,
                                              llvm::StringRef loc) {
  ++internalErrors;
  llvm::errs() << "modelc: internal error: " << currentStep();
  if (!loc.empty())
    llvm::errs() << " at " << loc;
  llvm::errs() << ": " << message << "\n";
}

LogicalResult CompilerDiagnostics::print(Diagnostic &diag) {
  if (!backend || diag.getSeverity() != DiagnosticSeverity::Error) {
    printPlain(diag);
    for (Diagnostic &note : diag.getNotes())
      printPlain(note);
    return success();
  }
  std::string loc = sourceLocation(diag.getLocation());
  std::string message = diag.str();
  llvm::StringRef text(message);
  // The program's fault after all: it exceeds a limit of every target.
  if (text.starts_with(kProgramLimitPrefix)) {
    ++programErrors;
    printPlain(diag);
    return success();
  }
  text.consume_front("internal error: ");
  reportInternalError(text, loc);
  for (Diagnostic &note : diag.getNotes())
    printPlain(note);
  return success();
}

void installInternalErrorHandlers() {
  llvm::setBugReportMsg("modelc crashed: this is a bug in modelc, not in the "
                        "program. Please report it with the .mdl file and "
                        "the command line.\n");
  llvm::install_fatal_error_handler(
      [](void *, const char *reason, bool) {
        llvm::errs() << "modelc: internal error: LLVM ERROR: " << reason
                     << "\n";
        llvm::errs().flush();
        // Removes the output files that were being written.
        llvm::sys::RunInterruptHandlers();
        std::_Exit(kInternalError);
      },
      nullptr);
  // Not a bug: the program needs more memory than the machine has.
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *reason, bool) {
        llvm::errs() << "modelc: error: out of memory (" << reason << ")\n";
        llvm::errs().flush();
        llvm::sys::RunInterruptHandlers();
        std::_Exit(kUserError);
      },
      nullptr);
}

} // namespace modelc
