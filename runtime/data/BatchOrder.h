// The order in which training visits samples (spec §7): a fresh permutation
// of the sample indices each epoch (or file order without shuffle), cut into
// batches, the last incomplete batch dropped. The permutation of epoch e is
// a Fisher–Yates shuffle driven by Rng(seed, kDataOrderStream + e), so any
// epoch's order can be recomputed on any platform, and a cursor (epoch,
// batch in epoch) is all a checkpoint needs to resume the same sequence.
#pragma once

#include <cstdint>
#include <vector>

namespace modelc::rt {

class BatchOrder {
public:
  /// `batch` is the number of samples per call of next(): with R ranks and
  /// accumulation k, the global batch (spec §7). With fewer than `batch`
  /// samples there is no batch at all and next() returns nullptr.
  BatchOrder(int64_t numSamples, int64_t batch, bool shuffle, uint64_t seed);

  /// floor(numSamples / batch): the last incomplete batch is dropped.
  int64_t batchesPerEpoch() const;
  int64_t batch() const { return batch_; }

  /// The sample indices of the next batch (`batch` of them), valid until the
  /// next call of next() or seek(); moves on to the next epoch as needed.
  const int64_t *next();

  /// The position of the batch the next call of next() returns.
  int64_t epoch() const { return epoch_; }
  int64_t batchInEpoch() const { return batchInEpoch_; }

  /// Moves the cursor; seeking to a saved (epoch(), batchInEpoch()) gives
  /// exactly the batches that followed it. A batchInEpoch past the end of
  /// an epoch carries into the following epochs; negative values count as 0.
  void seek(int64_t epoch, int64_t batchInEpoch);

  /// The whole visiting order of `epoch`: a permutation of [0, numSamples).
  static std::vector<int64_t> epochOrder(int64_t numSamples, bool shuffle,
                                         uint64_t seed, int64_t epoch);

private:
  int64_t numSamples_;
  int64_t batch_;
  bool shuffle_;
  uint64_t seed_;
  int64_t epoch_ = 0;
  int64_t batchInEpoch_ = 0;
  int64_t orderEpoch_ = -1; // the epoch `order_` holds; -1 for none yet
  std::vector<int64_t> order_;
};

} // namespace modelc::rt
