// A `data` declaration at run time: its fields' sources, opened and checked
// together, and the gather that copies a batch of samples into the arena.
#pragma once

#include "runtime/data/Source.h"

namespace modelc::rt {

class DataSet {
public:
  /// Opens every field; all must have the same number of samples, and at
  /// least one, and every sample must pass the field's value checks.
  /// Errors name the data set, the fields, files and counts, or the file and
  /// element of the first bad value.
  static Result<DataSet> open(const std::string &name,
                              std::vector<FieldSpec> fields);

  const std::string &name() const { return name_; }
  int64_t numSamples() const { return numSamples_; }
  size_t numFields() const { return fields_.size(); }
  const FieldSpec &field(size_t f) const { return fields_[f]; }
  /// Bytes of one sample of field `f`.
  size_t sampleBytes(size_t f) const { return sources_[f]->sampleBytes(); }

  /// Copies samples `indices[0..n)` of field `f` into `dst`, which holds
  /// n * sampleBytes(f) bytes; sample k goes to dst + k * sampleBytes(f).
  void gather(size_t f, const int64_t *indices, int64_t n, uint8_t *dst) const;

private:
  DataSet(std::string name, std::vector<FieldSpec> fields,
          std::vector<std::unique_ptr<FieldSource>> sources,
          int64_t numSamples);

  std::string name_;
  std::vector<FieldSpec> fields_;
  std::vector<std::unique_ptr<FieldSource>> sources_;
  int64_t numSamples_;
};

} // namespace modelc::rt
