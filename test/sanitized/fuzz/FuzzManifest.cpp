// libFuzzer target: a program's manifest (the flatbuffer modelc embeds)
// through Manifest::load, which verifies it before trusting an offset.
// modelc wrote it, so a bad one is an internal error (exit 1), never a
// crash.
#include "runtime/driver/Manifest.h"

namespace {

void noFunction(uint8_t *) {}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A function table as long as any seed's: every index names a function.
  static const std::vector<modelc_fn> table(256, &noFunction);
  modelc::rt::Result<modelc::rt::Manifest> manifest =
      modelc::rt::Manifest::load(data, size, table.data(), table.size());
  if (manifest) {
    for (const modelc::rt::ParamInfo &param : manifest->params)
      (void)manifest->paramBuffer(param).bytes;
    (void)manifest->gpuProgram();
    (void)manifest->parameterCount();
  }
  return 0;
}
