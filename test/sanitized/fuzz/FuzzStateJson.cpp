// libFuzzer target: the text of a checkpoint's state.json through
// parseCheckpointState, as --resume reads it.
#include "runtime/driver/Checkpoint.h"

#include "FuzzSupport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  modelc::rt::fuzz::expectUsageError(
      modelc::rt::parseCheckpointState(text, "ck/step_1/state.json"));
  return 0;
}
