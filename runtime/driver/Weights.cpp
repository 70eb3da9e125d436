// Saving and loading named arena buffers as safetensors, with errors that
// name every missing, unexpected or mismatched tensor.
#include "runtime/driver/Weights.h"

#include "runtime/io/Safetensors.h"
#include "runtime/io/Shape.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <set>

namespace modelc::rt {

namespace {

// "a, b, c" with at most 8 names, then "and N more".
std::string nameList(const std::vector<std::string> &names) {
  std::string out;
  size_t shown = std::min<size_t>(names.size(), 8);
  for (size_t i = 0; i < shown; ++i)
    out += (i ? ", " : "") + names[i];
  if (names.size() > shown)
    out += fmt::format(" and {} more", names.size() - shown);
  return out;
}

} // namespace

std::vector<NamedBuffer> parameterBuffers(const Manifest &manifest) {
  std::vector<NamedBuffer> out;
  for (const ParamInfo &p : manifest.params)
    out.push_back({p.name, &manifest.paramBuffer(p)});
  return out;
}

std::vector<NamedBuffer> stateBuffers(const Manifest &manifest,
                                      const std::string &entry) {
  std::vector<NamedBuffer> out;
  for (const BufferInfo *b :
       manifest.buffersOf(Role::State, Phase::Train, entry))
    out.push_back({b->key, b});
  return out;
}

bool allFinite(const std::vector<NamedBuffer> &buffers, const Arena &arena) {
  for (const NamedBuffer &nb : buffers) {
    const BufferInfo &b = *nb.buffer;
    const uint8_t *p = arena.at(b);
    // Non-finite: all exponent bits set.
    auto scan = [&](auto word, uint64_t exponent) {
      using Word = decltype(word);
      for (uint64_t i = 0; i + sizeof(Word) <= b.bytes; i += sizeof(Word)) {
        Word w;
        std::memcpy(&w, p + i, sizeof w);
        if ((uint64_t(w) & exponent) == exponent)
          return false;
      }
      return true;
    };
    bool finite = true;
    switch (b.dtype) {
    case DType::F32:
      finite = scan(uint32_t(), 0x7f800000u);
      break;
    case DType::F64:
      finite = scan(uint64_t(), 0x7ff0000000000000ull);
      break;
    case DType::F16:
      finite = scan(uint16_t(), 0x7c00u);
      break;
    case DType::BF16:
      finite = scan(uint16_t(), 0x7f80u);
      break;
    default:
      break;
    }
    if (!finite)
      return false;
  }
  return true;
}

Status saveTensors(const std::string &path,
                   const std::vector<NamedBuffer> &buffers,
                   const Arena &arena) {
  std::vector<TensorView> views;
  for (const NamedBuffer &nb : buffers)
    views.push_back({nb.name, nb.buffer->dtype, nb.buffer->shape,
                     arena.at(*nb.buffer), size_t(nb.buffer->bytes)});
  return writeSafetensors(path, views, {{"format", "pt"}});
}

Status loadTensors(const std::string &path,
                   const std::vector<NamedBuffer> &buffers, Arena &arena,
                   const std::string &what) {
  Result<std::vector<TensorData>> file = readSafetensors(path);
  if (!file)
    return Status::error(file.status().message(), kExitUsage);
  std::map<std::string, const TensorData *> byName;
  for (const TensorData &t : *file)
    byName[t.name] = &t;

  std::vector<std::string> missing, unexpected;
  std::set<std::string> wanted;
  for (const NamedBuffer &nb : buffers) {
    wanted.insert(nb.name);
    if (!byName.count(nb.name))
      missing.push_back(nb.name);
  }
  for (const TensorData &t : *file)
    if (!wanted.count(t.name))
      unexpected.push_back(t.name);
  if (!missing.empty() || !unexpected.empty()) {
    std::string msg = path + " does not hold this model's " + what + ":";
    if (!missing.empty())
      msg += " missing " + nameList(missing) + ";";
    if (!unexpected.empty())
      msg += " unexpected " + nameList(unexpected) + ";";
    msg.pop_back();
    return Status::error(msg);
  }
  for (const NamedBuffer &nb : buffers) {
    const TensorData &t = *byName[nb.name];
    if (t.dtype != nb.buffer->dtype || t.shape != nb.buffer->shape)
      return Status::error(fmt::format(
          "{}: {} is {}{}, this model's is {}{}{}", path, nb.name,
          dtypeName(t.dtype), formatShape(t.shape), dtypeName(nb.buffer->dtype),
          formatShape(nb.buffer->shape),
          t.dtype == nb.buffer->dtype
              ? ""
              : " (tensors are not converted between dtypes)"));
  }
  for (const NamedBuffer &nb : buffers)
    std::memcpy(arena.at(*nb.buffer), byName[nb.name]->bytes.data(),
                size_t(nb.buffer->bytes));
  return Status();
}

Status loadWeights(const std::string &path, const Manifest &manifest,
                   Arena &arena) {
  if (path.empty()) {
    if (manifest.params.empty())
      return Status();
    return Status::error(
        fmt::format("--weights is required: the program has {} parameters",
                    manifest.params.size()));
  }
  return loadTensors(path, parameterBuffers(manifest), arena, "parameters");
}

} // namespace modelc::rt
