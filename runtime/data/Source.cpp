// openFieldSource: loads a field's file with the loader of its kind, checks
// the per-sample shape (or, for windows, the stream length) and serves
// samples as strided copies out of the loaded bytes.
#include "runtime/data/Source.h"

#include "runtime/data/Loaders.h"
#include "runtime/io/Shape.h"

#include <cstring>
#include <fmt/format.h>

namespace modelc::rt {

namespace {

/// Sample i is the `sampleBytes` bytes at offset + i * stride: consecutive
/// samples for arrays, overlapping windows for token streams.
class StridedSource final : public FieldSource {
public:
  StridedSource(std::shared_ptr<const Blob> blob, size_t offset, size_t stride,
                size_t sampleBytes, int64_t count)
      : FieldSource(sampleBytes), blob_(std::move(blob)), offset_(offset),
        stride_(stride), count_(count) {}

  int64_t numSamples() const override { return count_; }

  void readSample(int64_t index, uint8_t *dst) const override {
    if (sampleBytes() == 0)
      return;
    if (index < 0 || index >= count_) {
      std::memset(dst, 0, sampleBytes());
      return;
    }
    std::memcpy(dst, blob_->data() + offset_ + size_t(index) * stride_,
                sampleBytes());
  }

private:
  std::shared_ptr<const Blob> blob_;
  size_t offset_;
  size_t stride_;
  int64_t count_;
};

/// The one place sources are made: checks, whatever the loader, that the
/// last sample ends inside the loaded bytes.
Result<std::unique_ptr<FieldSource>>
makeSource(const FieldSpec &spec, std::shared_ptr<const Blob> blob,
           size_t offset, size_t stride, size_t sampleBytes, int64_t count) {
  uint64_t end =
      count > 0 ? offset + uint64_t(count - 1) * stride + sampleBytes : offset;
  if (end > blob->size())
    return Status::error(
        fmt::format("{}: internal error: field '{}' would read {} bytes of {}",
                    spec.path, spec.name, end, blob->size()),
        kExitInternal);
  return std::unique_ptr<FieldSource>(std::make_unique<StridedSource>(
      std::move(blob), offset, stride, sampleBytes, count));
}

Result<LoadedArray> load(const FieldSpec &spec, FieldSpec::Kind kind) {
  switch (kind) {
  case FieldSpec::Kind::Idx:
    return loadIdx(spec);
  case FieldSpec::Kind::Npy:
    return loadNpy(spec);
  case FieldSpec::Kind::Npz:
    return loadNpz(spec);
  case FieldSpec::Kind::File:
    return loadRawFile(spec);
  case FieldSpec::Kind::Windows:
    break;
  }
  return Status::error(fmt::format(
      "{}: field '{}': windows() needs a token stream source, not windows()",
      spec.path, spec.name));
}

/// Windows of L tokens over a 1-D stream, window i starting at token
/// i * stride: by default stride L - 1, consecutive windows sharing one
/// token (llm.c's loader); stride 1 gives every offset (nanoGPT's get_batch
/// draws from those, with shuffle). There are (tokens - L) / stride + 1.
Result<std::unique_ptr<FieldSource>> openWindows(const FieldSpec &spec,
                                                 LoadedArray stream) {
  if (spec.shape.size() != 1 || spec.shape[0] < 2)
    return Status::error(fmt::format(
        "{}: field '{}': windows() needs a field of shape [L] with L >= 2, "
        "the field has shape {}",
        spec.path, spec.name, formatShape(spec.shape)));
  if (stream.shape.size() != 1)
    return Status::error(fmt::format(
        "{}: windows() needs a 1-D token stream for field '{}', found shape {}",
        spec.path, spec.name, formatShape(stream.shape)));
  int64_t length = spec.shape[0], tokens = stream.shape[0];
  if (tokens < length)
    return Status::error(fmt::format(
        "{}: the token stream has {} tokens, shorter than the window length "
        "{} of field '{}'",
        spec.path, tokens, length, spec.name));
  size_t elementSize = dtypeSize(spec.dtype);
  int64_t stride = spec.windowStep();
  return makeSource(spec, std::move(stream.blob), stream.offset,
                    size_t(stride) * elementSize, size_t(length) * elementSize,
                    (tokens - length) / stride + 1);
}

} // namespace

FieldSource::~FieldSource() = default;

const char *sourceKindName(FieldSpec::Kind kind) {
  switch (kind) {
#define MODELC_DATA_SOURCE(KIND, NAME, ARGS)                                   \
  case FieldSpec::Kind::KIND:                                                  \
    return #NAME;
#include "schema/DataSources.def"
  }
  return "?";
}

Result<std::unique_ptr<FieldSource>> openFieldSource(const FieldSpec &spec) {
  std::optional<uint64_t> sampleBytes = checkedByteSize(spec.shape, spec.dtype);
  if (!sampleBytes)
    return Status::error(fmt::format("{}: field '{}' has an invalid shape {}",
                                     spec.path, spec.name,
                                     formatShape(spec.shape)));
  bool windows = spec.kind == FieldSpec::Kind::Windows;
  Result<LoadedArray> loaded = load(spec, windows ? spec.inner : spec.kind);
  if (!loaded)
    return loaded.status();
  LoadedArray array = loaded.take();
  if (windows)
    return openWindows(spec, std::move(array));

  if (spec.kind == FieldSpec::Kind::File) {
    // A raw stream of elements: samples are consecutive runs of them.
    uint64_t bytes = uint64_t(array.shape[0]) * dtypeSize(spec.dtype);
    if (*sampleBytes == 0 || bytes % *sampleBytes != 0)
      return Status::error(fmt::format(
          "{}: {} bytes of data is not a multiple of the sample size {} "
          "(shape {} of {}) of field '{}'",
          spec.path, bytes, *sampleBytes, formatShape(spec.shape),
          dtypeName(spec.dtype), spec.name));
    return makeSource(spec, std::move(array.blob), array.offset, *sampleBytes,
                      *sampleBytes, int64_t(bytes / *sampleBytes));
  }

  if (array.shape.empty())
    return Status::error(
        fmt::format("{}: a 0-d array has no sample axis (field '{}')",
                    spec.path, spec.name));
  std::vector<int64_t> sampleShape(array.shape.begin() + 1, array.shape.end());
  if (sampleShape != spec.shape)
    return Status::error(fmt::format(
        "{}: expected per-sample shape {} for field '{}', found {} (the "
        "array's shape is {})",
        spec.path, formatShape(spec.shape), spec.name, formatShape(sampleShape),
        formatShape(array.shape)));
  return makeSource(spec, std::move(array.blob), array.offset, *sampleBytes,
                    *sampleBytes, array.shape[0]);
}

} // namespace modelc::rt
