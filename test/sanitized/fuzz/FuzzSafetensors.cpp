// libFuzzer target: a safetensors file's bytes through parseSafetensors, the
// reader behind --weights, --init and checkpoints.
#include "runtime/io/Safetensors.h"

#include "FuzzSupport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::map<std::string, std::string> metadata;
  modelc::rt::Result<std::vector<modelc::rt::TensorData>> tensors =
      modelc::rt::parseSafetensors(data, size, "fuzz.safetensors", &metadata);
  modelc::rt::fuzz::expectUsageError(tensors);
  return 0;
}
