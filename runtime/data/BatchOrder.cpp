// Epoch permutations and the batch cursor.
#include "runtime/data/BatchOrder.h"

#include "runtime/io/Random.h"

#include <algorithm>
#include <numeric>

namespace modelc::rt {

BatchOrder::BatchOrder(int64_t numSamples, int64_t batch, bool shuffle,
                       uint64_t seed)
    : numSamples_(std::max<int64_t>(numSamples, 0)), batch_(batch),
      shuffle_(shuffle), seed_(seed) {}

int64_t BatchOrder::batchesPerEpoch() const {
  return batch_ > 0 ? numSamples_ / batch_ : 0;
}

std::vector<int64_t> BatchOrder::epochOrder(int64_t numSamples, bool shuffle,
                                            uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(size_t(std::max<int64_t>(numSamples, 0)));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (!shuffle)
    return order;
  // Fisher–Yates: position i takes a uniformly chosen one of the i + 1
  // elements not yet placed.
  Rng rng(seed, kDataOrderStream + uint64_t(epoch));
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

const int64_t *BatchOrder::next() {
  int64_t perEpoch = batchesPerEpoch();
  if (perEpoch == 0)
    return nullptr;
  if (orderEpoch_ != epoch_) {
    order_ = epochOrder(numSamples_, shuffle_, seed_, epoch_);
    orderEpoch_ = epoch_;
  }
  const int64_t *indices = order_.data() + batchInEpoch_ * batch_;
  if (++batchInEpoch_ == perEpoch) {
    ++epoch_;
    batchInEpoch_ = 0;
  }
  return indices;
}

void BatchOrder::seek(int64_t epoch, int64_t batchInEpoch) {
  int64_t perEpoch = batchesPerEpoch();
  epoch = std::max<int64_t>(epoch, 0);
  batchInEpoch = std::max<int64_t>(batchInEpoch, 0);
  if (perEpoch > 0) {
    epoch += batchInEpoch / perEpoch;
    batchInEpoch %= perEpoch;
  }
  epoch_ = epoch;
  batchInEpoch_ = batchInEpoch;
}

} // namespace modelc::rt
