// The .npy, .npz and raw-file loaders, and the dtype check all loaders
// share. Raw files may be llm.c token shards: a 256-entry int32 header
// (magic 20240520, version 1, token count) then the uint16 tokens.
#include "runtime/data/Loaders.h"

#include "runtime/io/Npy.h"
#include "runtime/io/Shape.h"

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

Result<LoadedArray> loadNpy(const FieldSpec &spec,
                            std::shared_ptr<const Blob> file) {
  Result<NpyHeader> header =
      parseNpyHeader(file->data(), file->size(), spec.path);
  if (!header)
    return header.status();
  MODELC_RETURN_IF_ERROR(checkFieldDType(spec, header->dtype, header->descr));
  return LoadedArray{std::move(file), header->dataOffset, header->shape};
}

Result<LoadedArray> loadNpz(const FieldSpec &spec,
                            std::shared_ptr<const Blob> file) {
  // The member's header is checked against the field before anything is
  // inflated: a member of another dtype or sample shape (a zip bomb, say)
  // allocates nothing. Source.cpp checks the sample shape of every format
  // again; this check only comes first, and names the member.
  auto matchesField = [&](const NpyHeader &header, const std::string &member) {
    if (header.dtype != spec.dtype)
      return checkFieldDType(
          {spec.name, spec.dtype, {}, spec.kind, spec.inner, member},
          header.dtype, header.descr);
    if (header.shape.empty())
      return Status::error(
          fmt::format("{}: a 0-d array has no sample axis (field '{}')", member,
                      spec.name));
    std::vector<int64_t> sampleShape(header.shape.begin() + 1,
                                     header.shape.end());
    if (sampleShape != spec.shape)
      return Status::error(fmt::format(
          "{}: expected per-sample shape {} for field '{}', found {} (the "
          "array's shape is {}; nothing was inflated)",
          member, formatShape(spec.shape), spec.name, formatShape(sampleShape),
          formatShape(header.shape)));
    return Status();
  };
  Result<NpzArray> array =
      readNpzArray(std::move(file), spec.path, spec.key, matchesField);
  if (!array)
    return array.status();
  return LoadedArray{std::move(array->blob), array->offset,
                     std::move(array->header.shape)};
}

Result<LoadedArray> loadRawFile(const FieldSpec &spec,
                                std::shared_ptr<const Blob> file) {
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

namespace {

using Loader = Result<LoadedArray> (*)(const FieldSpec &,
                                       std::shared_ptr<const Blob>);

Result<LoadedArray> mapAndLoad(const FieldSpec &spec, Loader load) {
  Result<std::shared_ptr<const Blob>> file = mapFile(spec.path);
  if (!file)
    return file.status();
  return load(spec, file.take());
}

} // namespace

Result<LoadedArray> loadNpy(const FieldSpec &spec) {
  return mapAndLoad(spec, loadNpy);
}
Result<LoadedArray> loadNpz(const FieldSpec &spec) {
  return mapAndLoad(spec, loadNpz);
}
Result<LoadedArray> loadRawFile(const FieldSpec &spec) {
  return mapAndLoad(spec, loadRawFile);
}
Result<LoadedArray> loadIdx(const FieldSpec &spec) {
  return mapAndLoad(spec, loadIdx);
}

} // namespace modelc::rt
