// The .npy, .npz and raw-file loaders, and the dtype check all loaders
// share. Raw files may be llm.c token shards: a 256-entry int32 header
// (magic 20240520, version 1, token count) then the uint16 tokens.
#include "runtime/data/Loaders.h"

#include "runtime/io/Npy.h"

#include <cstring>
#include <fmt/format.h>

namespace modelc::rt {

namespace {

constexpr int32_t kShardMagic = 20240520;
/// llm.c's later shards of uint32 tokens (LLaMA 3); we have no u32 dtype.
constexpr int32_t kShardMagicU32 = 20240801;
constexpr size_t kShardHeaderBytes = 256 * sizeof(int32_t);

int32_t loadInt32(const uint8_t *bytes) {
  int32_t value;
  std::memcpy(&value, bytes, sizeof(value));
  return value;
}

Result<LoadedArray> loadShard(const FieldSpec &spec,
                              std::shared_ptr<const Blob> file) {
  const std::string &path = spec.path;
  if (file->size() < kShardHeaderBytes)
    return Status::error(fmt::format(
        "{}: truncated: an llm.c token shard needs a {}-byte header, file "
        "has {} bytes",
        path, kShardHeaderBytes, file->size()));
  int32_t version = loadInt32(file->data() + 4);
  int32_t tokens = loadInt32(file->data() + 8);
  if (version != 1)
    return Status::error(fmt::format(
        "{}: llm.c token shard version {} is not supported (only version 1, "
        "uint16 tokens)",
        path, version));
  MODELC_RETURN_IF_ERROR(
      checkFieldDType(spec, DType::U16, "u16 (llm.c token shard)"));
  uint64_t tokenBytes = file->size() - kShardHeaderBytes;
  if (tokens < 0 || uint64_t(tokens) * 2 != tokenBytes)
    return Status::error(fmt::format(
        "{}: llm.c token shard header says {} tokens ({} bytes), file has {} "
        "bytes of tokens",
        path, tokens, int64_t(tokens) * 2, tokenBytes));
  return LoadedArray{std::move(file), kShardHeaderBytes, {tokens}};
}

} // namespace

Status checkFieldDType(const FieldSpec &spec, std::optional<DType> found,
                       const std::string &foundName) {
  if (found == spec.dtype)
    return Status();
  return Status::error(
      fmt::format("{}: expected dtype {} for field '{}', found {}", spec.path,
                  dtypeName(spec.dtype), spec.name, foundName));
}

Result<LoadedArray> loadNpy(const FieldSpec &spec) {
  Result<std::shared_ptr<const Blob>> file = mapFile(spec.path);
  if (!file)
    return file.status();
  Result<NpyHeader> header =
      parseNpyHeader((*file)->data(), (*file)->size(), spec.path);
  if (!header)
    return header.status();
  MODELC_RETURN_IF_ERROR(checkFieldDType(spec, header->dtype, header->descr));
  return LoadedArray{file.take(), header->dataOffset, header->shape};
}

Result<LoadedArray> loadNpz(const FieldSpec &spec) {
  Result<NpyArray> array = readNpzMember(spec.path, spec.key);
  if (!array)
    return array.status();
  Result<std::string> descr = npyDescr(array->dtype);
  MODELC_RETURN_IF_ERROR(
      checkFieldDType(spec, array->dtype, descr ? *descr : "?"));
  return LoadedArray{makeBlob(std::move(array->bytes)), 0,
                     std::move(array->shape)};
}

Result<LoadedArray> loadRawFile(const FieldSpec &spec) {
  Result<std::shared_ptr<const Blob>> mapped = mapFile(spec.path);
  if (!mapped)
    return mapped.status();
  std::shared_ptr<const Blob> file = mapped.take();
  if (file->size() >= 4) {
    int32_t magic = loadInt32(file->data());
    if (magic == kShardMagic)
      return loadShard(spec, std::move(file));
    if (magic == kShardMagicU32)
      return Status::error(fmt::format(
          "{}: llm.c token shards of uint32 tokens (magic {}) are not "
          "supported",
          spec.path, kShardMagicU32));
  }
  size_t elementSize = dtypeSize(spec.dtype);
  if (file->size() % elementSize != 0)
    return Status::error(fmt::format(
        "{}: file size {} is not a multiple of the {}-byte {} element",
        spec.path, file->size(), elementSize, dtypeName(spec.dtype)));
  int64_t elements = int64_t(file->size() / elementSize);
  return LoadedArray{std::move(file), 0, {elements}};
}

} // namespace modelc::rt
