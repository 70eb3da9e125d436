// libFuzzer target: a .npy file's bytes through the data loader (mapped,
// header checked) and through parseNpy (infer inputs).
#include "runtime/data/Loaders.h"
#include "runtime/io/Npy.h"

#include "FuzzSupport.h"

using namespace modelc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Result<NpyArray> array = parseNpy(data, size, "fuzz.npy");
  fuzz::expectUsageError(array);
  // The loader's field takes the file's dtype, so that the checks after the
  // dtype's are reached too.
  FieldSpec spec{
      "x", array ? array->dtype : DType::F32, {}, FieldSpec::Kind::Npy};
  spec.path = "fuzz.npy";
  Result<LoadedArray> loaded = loadNpy(spec, fuzz::blobOf(data, size));
  fuzz::expectUsageError(loaded);
  if (loaded)
    fuzz::touch(*loaded, dtypeSize(spec.dtype));
  return 0;
}
