// Source files, locations and clang-style diagnostics for the frontend.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace modelc {

/// A position in a loaded source file. `file` indexes SourceManager's files;
/// line and column are 1-based (column counts bytes). A default location is
/// "unknown" and prints without a file.
struct SourceLoc {
  int file = -1;
  uint32_t line = 0;
  uint32_t col = 0;
  bool isValid() const { return file >= 0; }
};

struct SourceFile {
  std::string path;    // as given or resolved; printed in diagnostics
  std::string buffer;  // whole contents
  std::vector<uint32_t> lineStarts;  // byte offset of each line
};

/// Owns every loaded source buffer so AST nodes can refer to them by index.
class SourceManager {
public:
  /// Loads a file from disk; returns -1 (and sets `error`) when it cannot.
  int loadFile(const std::string &path, std::string &error);
  /// Adds an in-memory buffer (tests, -D values).
  int addBuffer(const std::string &path, std::string contents);
  const SourceFile &file(int id) const { return *files[id]; }
  int numFiles() const { return static_cast<int>(files.size()); }
  /// The text of line `line` (1-based) without its newline.
  std::string lineText(int file, uint32_t line) const;
  /// "path:line:col" (or "<unknown>").
  std::string format(SourceLoc loc) const;

private:
  std::vector<std::unique_ptr<SourceFile>> files;
};

enum class Severity { Error, Warning, Note };

/// Collects and prints diagnostics as they are reported:
///   file:line:col: error: message
///     <source line>
///          ^
/// Sema pushes the chain of block calls that it is elaborating; an error
/// reported inside a block then prints one note per enclosing call site:
///   file:line:col: note: in 'nn.linear' called from here
class DiagnosticEngine {
public:
  DiagnosticEngine(const SourceManager &sm, std::ostream &os)
      : sm(sm), os(os) {}

  void error(SourceLoc loc, const std::string &message);
  void warning(SourceLoc loc, const std::string &message);
  /// A note attached to the previous error (e.g. "previous definition is here").
  void note(SourceLoc loc, const std::string &message);

  /// The call chain: pushCall when elaboration enters a block from a call
  /// site, popCall when it returns.
  void pushCall(const std::string &callee, SourceLoc callSite);
  void popCall();
  /// Stops printing the call chain in notes (e.g. for errors reported at the
  /// call site itself, the innermost entry is the site; sema decides).
  size_t callDepth() const { return callStack.size(); }

  unsigned errorCount() const { return errors; }
  bool hasErrors() const { return errors != 0; }
  /// After this many errors, further ones are counted but not printed.
  void setErrorLimit(unsigned limit) { errorLimit = limit; }

private:
  void emit(Severity severity, SourceLoc loc, const std::string &message);
  const SourceManager &sm;
  std::ostream &os;
  struct CallFrame {
    std::string callee;
    SourceLoc site;
  };
  std::vector<CallFrame> callStack;
  unsigned errors = 0;
  unsigned errorLimit = 50;
  bool suppressNotes = false;  // notes of an error past the limit are dropped
};

} // namespace modelc
