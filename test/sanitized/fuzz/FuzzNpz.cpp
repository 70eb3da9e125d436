// libFuzzer target: an .npz archive's bytes: its directory, then every
// member (at most 8) as the data loader reads it (stored members in place,
// deflated ones inflated once) and as infer inputs read it.
#include "runtime/io/Npy.h"

#include "FuzzSupport.h"

using namespace modelc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Result<std::vector<std::string>> keys = listNpzKeys(data, size, "fuzz.npz");
  fuzz::expectUsageError(keys);
  if (!keys)
    return 0;
  std::shared_ptr<const Blob> archive = fuzz::blobOf(data, size);
  for (size_t i = 0; i < keys->size() && i < 8; ++i) {
    Result<NpzArray> member = readNpzArray(archive, "fuzz.npz", (*keys)[i]);
    fuzz::expectUsageError(member);
    if (member)
      fuzz::touch(*member->blob, member->offset, member->header.dataBytes);
  }
  return 0;
}
