// How modelc reports MLIR diagnostics: the program's own errors were all
// reported by the frontend, so an error that a pass, the verifier or a
// translation raises is a bug of the compiler. It is printed as
// `modelc: internal error: in --PASS at FILE:LINE:COL: message` (the pass
// that ran, the .mdl location of the op) and makes modelc exit 3
// (docs/cli.md), apart from the 1 of the program's errors.
#ifndef MODELC_TOOLS_MODELC_COMPILERDIAGNOSTICS_H
#define MODELC_TOOLS_MODELC_COMPILERDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>
#include <string>

namespace modelc {

/// modelc's exit statuses (docs/cli.md).
enum CompilerExit : int { kCompiledOk = 0, kUserError = 1, kInternalError = 3 };

/// Prints the context's diagnostics in the frontend's clang style and, once
/// the backend has begun, as internal errors with the pass that was running
/// (tracked through the context's pass-execution actions, in every pass
/// manager on the context, nested ones included).
class CompilerDiagnostics {
public:
  explicit CompilerDiagnostics(mlir::MLIRContext &context);
  ~CompilerDiagnostics();

  /// From here on, errors are internal errors (after the frontend, or for a
  /// `.mlir` input after parsing).
  void beginBackend() { backend = true; }

  /// Names a step that is not a pass (the translation to LLVM IR, say) for
  /// the errors raised until the next pass or step.
  void setStep(std::string step);

  /// Whether an internal error has been printed.
  bool sawInternalError() const { return internalErrors > 0; }

  /// Whether a pass found the program past a limit of every target
  /// (kProgramLimitPrefix): the program's error, exit 1.
  bool sawProgramError() const { return programErrors > 0; }

  /// Prints `message` as an internal error of the current step, at the
  /// source location `loc` when there is one, and counts it.
  void reportInternalError(const llvm::Twine &message,
                           llvm::StringRef loc = "");

private:
  mlir::LogicalResult print(mlir::Diagnostic &diag);
  void wrapPass(llvm::function_ref<void()> transform,
                const mlir::tracing::Action &action);
  std::string currentStep() const;

  struct PassStack;
  mlir::MLIRContext &context;
  std::unique_ptr<PassStack> passes;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  bool backend = false;
  int internalErrors = 0;
  int programErrors = 0;
};

/// LLVM's fatal errors (`LLVM ERROR: ...`) become internal errors with exit
/// 3, running out of memory an error with exit 1, and a crash's stack dump
/// asks for a modelc bug report.
void installInternalErrorHandlers();

} // namespace modelc

#endif // MODELC_TOOLS_MODELC_COMPILERDIAGNOSTICS_H
