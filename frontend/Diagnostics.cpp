// Source buffers and clang-style printing of errors, warnings and notes.
#include "frontend/Diagnostics.h"
#include "frontend/Utf8.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace modelc {

//===----------------------------------------------------------------------===//
// SourceManager
//===----------------------------------------------------------------------===//

int SourceManager::loadFile(const std::string &path, std::string &error) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return -1;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "cannot open '" + path + "': it is a directory";
    return -1;
  }
  // A device, FIFO or socket (/dev/zero, a pipe) would never end or never
  // answer; a huge file would exhaust memory long before it parsed.
  if (!S_ISREG(st.st_mode)) {
    error = "cannot open '" + path + "': it is not a regular file";
    return -1;
  }
  constexpr off_t kMaxSourceBytes = off_t(64) << 20;
  if (st.st_size > kMaxSourceBytes) {
    error = "cannot open '" + path + "': it is too large (" +
            std::to_string(st.st_size) + " bytes; the limit is 64 MiB)";
    return -1;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return -1;
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return -1;
  }
  return addBuffer(path, contents.str());
}

int SourceManager::addBuffer(const std::string &path, std::string contents) {
  auto file = std::make_unique<SourceFile>();
  file->path = path;
  file->buffer = std::move(contents);
  file->lineStarts.push_back(0);
  for (size_t i = 0; i < file->buffer.size(); ++i)
    if (file->buffer[i] == '\n')
      file->lineStarts.push_back(static_cast<uint32_t>(i + 1));
  files.push_back(std::move(file));
  return static_cast<int>(files.size()) - 1;
}

std::string SourceManager::lineText(int fileId, uint32_t line) const {
  if (fileId < 0 || fileId >= numFiles())
    return "";
  const SourceFile &f = *files[fileId];
  if (line == 0 || line > f.lineStarts.size())
    return "";
  size_t begin = f.lineStarts[line - 1];
  size_t end =
      line < f.lineStarts.size() ? f.lineStarts[line] - 1 : f.buffer.size();
  if (end > begin && f.buffer[end - 1] == '\r')
    --end;
  return f.buffer.substr(begin, end - begin);
}

std::string SourceManager::format(SourceLoc loc) const {
  if (!loc.isValid() || loc.file >= numFiles())
    return "<unknown>";
  const std::string &path = files[loc.file]->path;
  if (loc.line == 0)
    return path;
  return path + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

//===----------------------------------------------------------------------===//
// Source line and caret rendering
//===----------------------------------------------------------------------===//

namespace {

/// Lines longer than this many bytes on either side of the caret are cut.
constexpr size_t kMaxContext = 160;

/// Prints `line` and a caret under byte column `col` (1-based). Every
/// displayed character takes one column of the caret line, tabs stay tabs,
/// and bytes that a terminal cannot show (NUL, control, invalid UTF-8) print
/// as '?', so the caret stays aligned whatever the line holds.
void printSourceLine(std::ostream &os, const std::string &line, uint32_t col) {
  size_t caret = col == 0 ? 0 : col - 1;
  size_t begin = caret > kMaxContext ? caret - kMaxContext : 0;
  while (begin > 0 && begin < line.size() &&
         (static_cast<unsigned char>(line[begin]) & 0xC0) == 0x80)
    ++begin;
  size_t end = std::min(line.size(), caret + kMaxContext);
  std::string text, pad;
  if (begin > 0) {
    text = "...";
    pad = "   ";
  }
  size_t i = begin;
  while (i < end) {
    unsigned char c = line[i];
    size_t len = 1;
    if (c == '\t') {
      text += '\t';
    } else if (c >= 0x20 && c < 0x7F) {
      text += static_cast<char>(c);
    } else if (c >= 0x80 && (len = utf8SequenceLength(line, i)) != 0) {
      text.append(line, i, len);
    } else {
      len = 1;
      text += '?';
    }
    if (i < caret)
      pad += c == '\t' ? '\t' : ' ';
    i += len;
  }
  if (end < line.size())
    text += "...";
  // A caret past the end of the line (e.g. at a newline or end of file).
  for (; i < caret; ++i)
    pad += ' ';
  os << text << '\n' << pad << "^\n";
}

/// `text` with every byte a terminal cannot show (control, NUL, invalid
/// UTF-8) replaced by '?'; messages may quote user input.
std::string sanitize(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char c = text[i];
    size_t len = c >= 0x80 ? utf8SequenceLength(text, i) : 1;
    if (c == '\t' || (c >= 0x20 && c < 0x7F) || (c >= 0x80 && len != 0)) {
      out.append(text, i, len);
      i += len;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

const char *severityName(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

} // namespace

//===----------------------------------------------------------------------===//
// DiagnosticEngine
//===----------------------------------------------------------------------===//

void DiagnosticEngine::error(SourceLoc loc, const std::string &message) {
  ++errors;
  if (errorLimit != 0 && errors > errorLimit) {
    if (errors == errorLimit + 1)
      os << "error: too many errors emitted, stopping now\n";
    suppressNotes = true;
    return;
  }
  suppressNotes = false;
  emit(Severity::Error, loc, message);
  for (auto frame = callStack.rbegin(); frame != callStack.rend(); ++frame)
    emit(Severity::Note, frame->site,
         "in call to '" + frame->callee + "' from here");
}

void DiagnosticEngine::warning(SourceLoc loc, const std::string &message) {
  // Once the error limit is reached the output stops altogether.
  suppressNotes = errorLimit != 0 && errors > errorLimit;
  if (!suppressNotes)
    emit(Severity::Warning, loc, message);
}

void DiagnosticEngine::note(SourceLoc loc, const std::string &message) {
  if (!suppressNotes)
    emit(Severity::Note, loc, message);
}

void DiagnosticEngine::pushCall(const std::string &callee, SourceLoc callSite) {
  callStack.push_back({callee, callSite});
}

void DiagnosticEngine::popCall() {
  if (!callStack.empty())
    callStack.pop_back();
}

void DiagnosticEngine::emit(Severity severity, SourceLoc loc,
                            const std::string &message) {
  bool known = loc.isValid() && loc.file < sm.numFiles();
  if (known)
    os << sanitize(sm.format(loc)) << ": ";
  os << severityName(severity) << ": " << sanitize(message) << '\n';
  if (known && loc.line != 0)
    printSourceLine(os, sm.lineText(loc.file, loc.line), loc.col);
  os.flush();
}

} // namespace modelc
