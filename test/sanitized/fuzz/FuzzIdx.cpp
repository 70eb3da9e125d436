// libFuzzer target: an idx file's bytes, plain or gzip-compressed, through
// the data loader; and the same bytes as a raw file or llm.c token shard.
#include "runtime/data/Loaders.h"

#include "FuzzSupport.h"

using namespace modelc::rt;

namespace {

void load(DType dtype, FieldSpec::Kind kind,
          const std::shared_ptr<const Blob> &file) {
  FieldSpec spec{"x", dtype, {}, kind};
  spec.path = "fuzz.idx";
  Result<LoadedArray> loaded = kind == FieldSpec::Kind::Idx
                                   ? loadIdx(spec, file)
                                   : loadRawFile(spec, file);
  fuzz::expectUsageError(loaded);
  if (loaded)
    fuzz::touch(*loaded, dtypeSize(spec.dtype));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::shared_ptr<const Blob> file = fuzz::blobOf(data, size);
  // Every dtype an idx file can have: the field's must equal the file's,
  // which a compressed file does not show before it is inflated.
  for (DType dtype : {DType::U8, DType::I32, DType::F32, DType::F64})
    load(dtype, FieldSpec::Kind::Idx, file);
  load(DType::U16, FieldSpec::Kind::File, file);
  return 0;
}
