// Reading and writing safetensors files, validated as the reference
// implementation does (huggingface/safetensors, safetensors/src/tensor.rs).
#include "runtime/io/Safetensors.h"

#include "runtime/io/Files.h"
#include "runtime/io/Shape.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

namespace modelc::rt {

namespace {

/// A header entry before its bytes are copied out.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin;
  uint64_t end;
};

uint64_t readLittleEndian64(const uint8_t *bytes) {
  uint64_t value;
  std::memcpy(&value, bytes, 8);
  return value;
}

/// Reads a JSON array of non-negative integers; false if it is anything else.
bool readUnsignedList(const nlohmann::json &value, std::vector<uint64_t> &out) {
  if (!value.is_array())
    return false;
  for (const nlohmann::json &item : value) {
    if (!item.is_number_unsigned())
      return false;
    out.push_back(item.get<uint64_t>());
  }
  return true;
}

Result<Entry> parseEntry(const std::string &path, const std::string &name,
                         const nlohmann::json &value, uint64_t dataSize) {
  auto fail = [&](const std::string &problem) {
    return Status::error(
        fmt::format("{}: tensor '{}': {}", path, name, problem));
  };
  if (!value.is_object())
    return fail("header entry is not a JSON object");
  for (const char *key : {"dtype", "shape", "data_offsets"})
    if (!value.contains(key))
      return fail(fmt::format("missing '{}'", key));
  const nlohmann::json &dtypeJson = value["dtype"];
  if (!dtypeJson.is_string())
    return fail("'dtype' is not a string");
  std::string dtypeName = dtypeJson.get<std::string>();
  std::optional<DType> dtype = parseSafetensorsDType(dtypeName);
  if (!dtype)
    return fail(fmt::format("unsupported dtype '{}'", dtypeName));
  std::vector<uint64_t> dims;
  if (!readUnsignedList(value["shape"], dims))
    return fail("'shape' is not a list of non-negative integers");
  std::vector<uint64_t> offsets;
  if (!readUnsignedList(value["data_offsets"], offsets) || offsets.size() != 2)
    return fail("'data_offsets' is not a list of two non-negative integers");
  Entry entry{name, *dtype, {}, offsets[0], offsets[1]};
  for (uint64_t dim : dims) {
    if (dim > uint64_t(INT64_MAX))
      return fail("'shape' has a dimension out of range");
    entry.shape.push_back(int64_t(dim));
  }
  if (entry.begin > entry.end)
    return fail(fmt::format("data_offsets [{}, {}] are reversed", entry.begin,
                            entry.end));
  if (entry.end > dataSize)
    return fail(fmt::format(
        "data_offsets [{}, {}] are past the end of the data ({} bytes)",
        entry.begin, entry.end, dataSize));
  std::optional<uint64_t> bytes = checkedByteSize(entry.shape, entry.dtype);
  if (!bytes || *bytes != entry.end - entry.begin)
    return fail(fmt::format(
        "shape {} of {} does not match data_offsets [{}, {}] ({} bytes)",
        formatShape(entry.shape), dtypeName, entry.begin, entry.end,
        entry.end - entry.begin));
  return entry;
}

Status readMetadata(const std::string &path, const nlohmann::json &value,
                    std::map<std::string, std::string> *metadata) {
  // The reference reads it as an Option: null is no metadata.
  if (value.is_null())
    return Status();
  if (!value.is_object())
    return Status::error(
        fmt::format("{}: '__metadata__' is not a JSON object", path));
  for (const auto &item : value.items()) {
    if (!item.value().is_string())
      return Status::error(
          fmt::format("{}: '__metadata__' value for '{}' is not a string", path,
                      item.key()));
    if (metadata)
      (*metadata)[item.key()] = item.value().get<std::string>();
  }
  return Status();
}

/// The entries must tile [0, dataSize) exactly, in order of their offsets,
/// as the reference's Metadata::validate requires. Messages give the file
/// offsets too (the data starts at `dataStart`).
Status checkTiling(const std::string &path, std::vector<Entry> &entries,
                   uint64_t dataStart, uint64_t dataSize) {
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t cursor = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry &entry = entries[i];
    if (entry.begin < cursor)
      return Status::error(fmt::format(
          "{}: tensors '{}' and '{}' have overlapping data_offsets (both "
          "hold data offset {}, byte {} of the file)",
          path, entries[i - 1].name, entry.name, entry.begin,
          dataStart + entry.begin));
    if (entry.begin > cursor)
      return Status::error(fmt::format(
          "{}: {} bytes of data before tensor '{}' (bytes {}-{} of the file) "
          "belong to no tensor",
          path, entry.begin - cursor, entry.name, dataStart + cursor,
          dataStart + entry.begin - 1));
    cursor = entry.end;
  }
  if (cursor != dataSize)
    return Status::error(fmt::format(
        "{}: {} bytes of data after the last tensor (from byte {} of the "
        "file) belong to no tensor",
        path, dataSize - cursor, dataStart + cursor));
  return Status();
}

/// The header as the format specifies it: one JSON object from the first
/// byte, then nothing but spaces (0x20, the writer's padding), each key once
/// per object. nlohmann's parser treats a NUL as the end of its input, so
/// NULs are refused first, and the text handed to it ends at the object's
/// closing brace.
Result<nlohmann::json> parseHeader(const std::string &path, const char *header,
                                   uint64_t size) {
  auto fail = [&](uint64_t at, const std::string &problem) {
    return Status::error(fmt::format(
        "{}: invalid JSON header: {} at byte {} (the header is bytes 8-{}: "
        "one JSON object, padded with spaces)",
        path, problem, 8 + at, 8 + size - 1));
  };
  if (size == 0)
    return Status::error(
        fmt::format("{}: invalid JSON header: the header is empty", path));
  if (header[0] != '{')
    return fail(0, "not a JSON object");
  if (const void *nul = std::memchr(header, '\0', size))
    return fail(uint64_t(static_cast<const char *>(nul) - header),
                "a NUL byte");
  uint64_t end = size;
  while (end > 0 && header[end - 1] == ' ')
    --end;
  if (header[end - 1] != '}')
    return fail(end - 1,
                fmt::format("byte 0x{:02x} after the JSON object (only spaces "
                            "may follow it)",
                            uint8_t(header[end - 1])));
  std::vector<std::set<std::string>> keys; // of each open object
  std::string duplicate;
  auto noDuplicateKeys = [&](int, nlohmann::json::parse_event_t event,
                             nlohmann::json &parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start)
      keys.emplace_back();
    else if (event == Event::object_end && !keys.empty())
      keys.pop_back();
    else if (event == Event::key && !keys.empty() &&
             !keys.back().insert(parsed.get<std::string>()).second &&
             duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(header, header + end, noDuplicateKeys);
  } catch (const nlohmann::json::parse_error &error) {
    return fail(error.byte > 0 ? error.byte - 1 : 0, error.what());
  } catch (const nlohmann::json::exception &error) {
    return fail(0, error.what());
  }
  if (!duplicate.empty())
    return Status::error(fmt::format(
        "{}: invalid JSON header: the key '{}' appears twice in one object "
        "(readers would disagree on which one holds)",
        path, duplicate));
  if (!json.is_object())
    return fail(0, "not a JSON object");
  return json;
}

} // namespace

Result<std::vector<TensorData>>
parseSafetensors(const uint8_t *file, size_t fileSize, const std::string &path,
                 std::map<std::string, std::string> *metadata) {
  if (fileSize < 8)
    return Status::error(fmt::format(
        "{}: truncated: {} bytes, too short for the 8-byte header length", path,
        fileSize));
  uint64_t headerSize = readLittleEndian64(file);
  if (headerSize > kMaxSafetensorsHeaderBytes)
    return Status::error(fmt::format(
        "{}: header length {} (bytes 0-7) exceeds the limit of {} bytes (not "
        "a safetensors file?)",
        path, headerSize, kMaxSafetensorsHeaderBytes));
  if (headerSize > fileSize - 8)
    return Status::error(fmt::format(
        "{}: truncated: header length {} exceeds the file size ({} bytes)",
        path, headerSize, fileSize));
  Result<nlohmann::json> json =
      parseHeader(path, reinterpret_cast<const char *>(file + 8), headerSize);
  if (!json)
    return json.status();

  uint64_t dataStart = 8 + headerSize;
  uint64_t dataSize = fileSize - dataStart;
  std::vector<Entry> entries;
  for (const auto &item : json->items()) {
    if (item.key() == "__metadata__") {
      MODELC_RETURN_IF_ERROR(readMetadata(path, item.value(), metadata));
      continue;
    }
    Result<Entry> entry = parseEntry(path, item.key(), item.value(), dataSize);
    if (!entry)
      return entry.status();
    entries.push_back(entry.take());
  }
  MODELC_RETURN_IF_ERROR(checkTiling(path, entries, dataStart, dataSize));

  std::vector<TensorData> tensors;
  tensors.reserve(entries.size());
  for (Entry &entry : entries) {
    const uint8_t *begin = file + dataStart + entry.begin;
    tensors.push_back(
        {std::move(entry.name), entry.dtype, std::move(entry.shape),
         std::vector<uint8_t>(begin, begin + (entry.end - entry.begin))});
  }
  return tensors;
}

Result<std::vector<TensorData>>
readSafetensors(const std::string &path,
                std::map<std::string, std::string> *metadata) {
  Result<std::shared_ptr<const Blob>> blob = mapFile(path);
  if (!blob)
    return blob.status();
  return parseSafetensors((*blob)->data(), (*blob)->size(), path, metadata);
}

Status writeSafetensors(const std::string &path,
                        const std::vector<TensorView> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const TensorView &tensor : tensors) {
    if (tensor.name == "__metadata__" || !names.insert(tensor.name).second)
      return Status::error(
          fmt::format("{}: duplicate or reserved tensor name '{}'", path,
                      tensor.name),
          kExitInternal);
    std::optional<uint64_t> bytes = checkedByteSize(tensor.shape, tensor.dtype);
    if (!bytes || *bytes != tensor.bytes)
      return Status::error(
          fmt::format("{}: tensor '{}': shape {} of {} does not match its {} "
                      "bytes",
                      path, tensor.name, formatShape(tensor.shape),
                      dtypeName(tensor.dtype), tensor.bytes),
          kExitInternal);
    header[tensor.name] = {{"dtype", safetensorsDTypeName(tensor.dtype)},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + tensor.bytes}}};
    offset += tensor.bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception &error) {
    return Status::error(
        fmt::format("{}: cannot encode the header: {}", path, error.what()),
        kExitInternal);
  }
  // Pad with spaces so that the data starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  uint64_t headerSize = text.size();

  Result<AtomicFile> file = AtomicFile::create(path);
  if (!file)
    return file.status();
  MODELC_RETURN_IF_ERROR(file->write(&headerSize, 8));
  MODELC_RETURN_IF_ERROR(file->write(text.data(), text.size()));
  for (const TensorView &tensor : tensors)
    MODELC_RETURN_IF_ERROR(file->write(tensor.data, tensor.bytes));
  return file->commit();
}

} // namespace modelc::rt
