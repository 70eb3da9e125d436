// libFuzzer target: .mdl source text through the frontend as `modelc
// --emit=manifest` runs it: parse, import the stdlib, check and elaborate
// every entry, then write the manifest and the parameter table. Nothing a
// user writes may crash it.
#include "frontend/Frontend.h"
#include "frontend/Manifest.h"

#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  modelc::SourceManager sm;
  std::ostringstream diagnostics;
  modelc::DiagnosticEngine diag(sm, diagnostics);
  sm.addBuffer("fuzz.mdl",
               std::string(reinterpret_cast<const char *>(data), size));
  modelc::FrontendOptions options;
  options.stdlibDir = MODELC_STDLIB_DIR;
  modelc::Program program;
  if (modelc::buildProgram("fuzz.mdl", options, sm, diag, program) &&
      !diag.hasErrors()) {
    (void)modelc::manifestJSON(program);
    (void)modelc::parameterTable(program);
  }
  return 0;
}
