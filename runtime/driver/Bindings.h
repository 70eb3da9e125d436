// What ties the arena to the outside: data sets bound to the Input buffers
// of an entry, and the scalar Output and Hyper buffers the driver reads and
// writes, each checked against the manifest once at start-up.
#pragma once

#include "runtime/data/DataSet.h"
#include "runtime/driver/Arena.h"
#include "runtime/driver/CommandLine.h"
#include "runtime/driver/Settings.h"

namespace modelc::rt {

/// A data set whose fields feed the Input buffers of (phase, entry).
class BoundData {
public:
  /// Opens data set `name` with `overrides` (from `flag`) applied to its
  /// fields' sources, and binds it to the Input buffers of one batch.
  static Result<BoundData> open(const Manifest &manifest,
                                const std::string &name,
                                const std::vector<FieldPath> &overrides,
                                const std::string &flag, Phase phase,
                                const std::string &entry, int64_t batch);

  const std::string &name() const { return set_.name(); }
  int64_t numSamples() const { return set_.numSamples(); }
  /// Tokens a sample contributes to throughput (window length - 1), or 0
  /// when no field is a windows source.
  int64_t tokensPerSample() const { return tokensPerSample_; }
  /// Gathers samples `indices[0..batch)` into the Input buffers.
  void load(const int64_t *indices, Arena &arena) const;

private:
  BoundData(DataSet set, int64_t batch) : set_(std::move(set)), batch_(batch) {}
  DataSet set_;
  int64_t batch_;
  std::vector<std::pair<size_t, const BufferInfo *>> inputs_; // field, buffer
  int64_t tokensPerSample_ = 0;
};

/// The field specs of a data set with `--data FIELD=PATH` overrides applied
/// (docs/runtime/cli.md says how the source kind follows the path).
Result<std::vector<FieldSpec>>
overrideSources(const DataSetInfo &set, const std::vector<FieldPath> &overrides,
                const std::string &flag);

/// The f32/f64 Output buffers `keys` of (phase, entry), in order.
Result<std::vector<const BufferInfo *>>
scalarOutputs(const Manifest &manifest, Phase phase, const std::string &entry,
              const std::vector<std::string> &keys);

/// The Hyper buffers of a train entry; each must be an f64 scalar with a key
/// this runtime knows.
class Hypers {
public:
  static Result<Hypers> bind(const Manifest &manifest, const std::string &entry,
                             const RunSettings &settings);
  /// Writes every hyper for the given counters.
  void write(const StepCounters &counters, Arena &arena) const;
  /// Writes only rng_counter (before each fwd_bwd).
  void writeRngCounter(uint64_t counter, Arena &arena) const;

private:
  RunSettings settings_;
  std::vector<const BufferInfo *> buffers_;
  const BufferInfo *rngCounter_ = nullptr;
};

} // namespace modelc::rt
