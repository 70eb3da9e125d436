// Opening a data set's fields together and gathering batches from them.
#include "runtime/data/DataSet.h"

#include <fmt/format.h>

namespace modelc::rt {

namespace {

/// Runs the value checks of `spec` on every sample of `source`.
Status checkValues(const FieldSpec &spec, const FieldSource &source) {
  if (spec.checks.empty())
    return Status();
  int64_t sampleElements = 1;
  for (int64_t d : spec.shape)
    sampleElements *= d;
  // Where sample i starts in the file's array, in elements.
  int64_t stride = spec.kind == FieldSpec::Kind::Windows ? spec.windowStep()
                                                         : sampleElements;
  std::vector<uint8_t> sample(source.sampleBytes());
  for (int64_t i = 0; i < source.numSamples(); ++i) {
    source.readSample(i, sample.data());
    for (const ValueCheck &check : spec.checks) {
      std::optional<BadValue> bad =
          findBadValue(check, spec.dtype, spec.shape, sample.data());
      if (!bad)
        continue;
      return Status::error(
          spec.path + ": " +
          badValueText(check, *bad, spec.shape, i * stride,
                       fmt::format("sample {}", i),
                       fmt::format(" of field '{}'", spec.name)));
    }
  }
  return Status();
}

} // namespace

DataSet::DataSet(std::string name, std::vector<FieldSpec> fields,
                 std::vector<std::unique_ptr<FieldSource>> sources,
                 int64_t numSamples)
    : name_(std::move(name)), fields_(std::move(fields)),
      sources_(std::move(sources)), numSamples_(numSamples) {}

Result<DataSet> DataSet::open(const std::string &name,
                              std::vector<FieldSpec> fields) {
  if (fields.empty())
    return Status::error(fmt::format("data set '{}' has no fields", name));
  std::vector<std::unique_ptr<FieldSource>> sources;
  for (const FieldSpec &spec : fields) {
    Result<std::unique_ptr<FieldSource>> source = openFieldSource(spec);
    if (!source)
      return source.status();
    sources.push_back(source.take());
  }
  int64_t numSamples = sources[0]->numSamples();
  for (size_t f = 1; f < fields.size(); ++f)
    if (sources[f]->numSamples() != numSamples)
      return Status::error(fmt::format(
          "data set '{}': field '{}' ({}) has {} samples but field '{}' ({}) "
          "has {}",
          name, fields[0].name, fields[0].path, numSamples, fields[f].name,
          fields[f].path, sources[f]->numSamples()));
  if (numSamples == 0)
    return Status::error(fmt::format(
        "data set '{}' has no samples ({} is empty)", name, fields[0].path));
  for (size_t f = 0; f < fields.size(); ++f)
    if (Status status = checkValues(fields[f], *sources[f]); !status)
      return status;
  return DataSet(name, std::move(fields), std::move(sources), numSamples);
}

void DataSet::gather(size_t f, const int64_t *indices, int64_t n,
                     uint8_t *dst) const {
  const FieldSource &source = *sources_[f];
  size_t bytes = source.sampleBytes();
  for (int64_t k = 0; k < n; ++k)
    source.readSample(indices[k], dst + size_t(k) * bytes);
}

} // namespace modelc::rt
