// The frontend's entry point: load a .mdl file and its imports, check them,
// and elaborate every entry into a Program.
#pragma once

#include "frontend/Diagnostics.h"
#include "frontend/Program.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace modelc {

namespace ast {
struct Module;
}

struct FrontendOptions {
  /// `-D NAME=VALUE` overrides of top-level consts of the main file, as text;
  /// the value is parsed as a .mdl literal (int, float, true/false, or a
  /// string with or without quotes) and must match the const's kind.
  std::vector<std::pair<std::string, std::string>> defines;
  /// Where `import "nn"` finds `nn.mdl`.
  std::string stdlibDir;
  /// `--precision`: f32, bf16 or f16 for every train entry instead of its
  /// `precision` setting; empty keeps the settings.
  std::string precision;
};

/// Parses one file (no imports). Null when there were syntax errors (they are
/// reported to `diag`; the parser recovers to report several in one run).
std::unique_ptr<ast::Module> parseFile(int fileId, const SourceManager &sm,
                                       DiagnosticEngine &diag);

/// Parses `path`, its imports, checks and elaborates everything. Returns
/// false when any error was reported; `program` is then incomplete.
bool buildProgram(const std::string &path, const FrontendOptions &options,
                  SourceManager &sm, DiagnosticEngine &diag, Program &program);

} // namespace modelc
