// Tests of BatchOrder (spec §7): each epoch a permutation, deterministic
// from the seed, resumable from its cursor, the last incomplete batch
// dropped, file order without shuffle.
#include "runtime/data/BatchOrder.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <numeric>
#include <set>
#include <utility>

namespace modelc::rt {
namespace {

/// The next `batches` batches, each as a vector of indices.
std::vector<std::vector<int64_t>> take(BatchOrder &order, int batches) {
  std::vector<std::vector<int64_t>> out;
  for (int b = 0; b < batches; ++b) {
    const int64_t *indices = order.next();
    out.emplace_back(indices, indices + order.batch());
  }
  return out;
}

TEST(BatchOrderTest, EachEpochIsAPermutation) {
  for (int64_t n : {1, 2, 7, 100, 1000}) {
    for (int64_t epoch : {0, 1, 5}) {
      std::vector<int64_t> order = BatchOrder::epochOrder(n, true, 42, epoch);
      std::sort(order.begin(), order.end());
      std::vector<int64_t> expected(static_cast<size_t>(n));
      std::iota(expected.begin(), expected.end(), int64_t(0));
      EXPECT_EQ(order, expected) << n << " " << epoch;
    }
  }
}

TEST(BatchOrderTest, BatchesOfAnEpochCoverEverySampleOnce) {
  BatchOrder order(120, 8, true, 7);
  ASSERT_EQ(order.batchesPerEpoch(), 15);
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::set<int64_t> seen;
    for (const std::vector<int64_t> &batch : take(order, 15))
      for (int64_t index : batch) {
        EXPECT_GE(index, 0);
        EXPECT_LT(index, 120);
        EXPECT_TRUE(seen.insert(index).second) << "repeated " << index;
      }
    EXPECT_EQ(seen.size(), 120u);
  }
}

TEST(BatchOrderTest, SameSeedSameOrderOtherSeedOtherOrder) {
  BatchOrder a(1000, 10, true, 1234), b(1000, 10, true, 1234),
      c(1000, 10, true, 1235);
  std::vector<std::vector<int64_t>> fromA = take(a, 250);
  EXPECT_EQ(fromA, take(b, 250));
  EXPECT_NE(fromA, take(c, 250));
}

TEST(BatchOrderTest, EveryEpochHasAFreshPermutation) {
  EXPECT_NE(BatchOrder::epochOrder(100, true, 9, 0),
            BatchOrder::epochOrder(100, true, 9, 1));
  EXPECT_EQ(BatchOrder::epochOrder(100, true, 9, 3),
            BatchOrder::epochOrder(100, true, 9, 3));
}

// Pinned so that a change to the shuffle, which would change every run's
// data order, is noticed: Fisher–Yates over PCG64(seed 1234, stream 2^63),
// checked against an independent Python implementation of both.
TEST(BatchOrderTest, KnownPermutation) {
  EXPECT_EQ(BatchOrder::epochOrder(10, true, 1234, 0),
            (std::vector<int64_t>{1, 6, 3, 7, 0, 4, 2, 8, 9, 5}));
}

TEST(BatchOrderTest, SeekingToASavedCursorRepeatsTheFollowingBatches) {
  BatchOrder order(50, 4, true, 99);
  std::vector<std::pair<int64_t, int64_t>> cursors;
  std::vector<std::vector<int64_t>> batches;
  for (int b = 0; b < 60; ++b) {
    cursors.emplace_back(order.epoch(), order.batchInEpoch());
    batches.push_back(take(order, 1)[0]);
  }
  for (size_t b = 0; b < cursors.size(); b += 7) {
    BatchOrder resumed(50, 4, true, 99);
    resumed.seek(cursors[b].first, cursors[b].second);
    std::vector<std::vector<int64_t>> rest = take(resumed, int(60 - b));
    EXPECT_TRUE(std::equal(rest.begin(), rest.end(), batches.begin() + b))
        << "resumed at batch " << b;
  }
}

TEST(BatchOrderTest, LastIncompleteBatchIsDropped) {
  BatchOrder order(10, 3, false, 0);
  EXPECT_EQ(order.batchesPerEpoch(), 3);
  std::vector<std::vector<int64_t>> batches = take(order, 4);
  EXPECT_EQ(batches[2], (std::vector<int64_t>{6, 7, 8}));
  EXPECT_EQ(batches[3], (std::vector<int64_t>{0, 1, 2})); // sample 9 skipped
  EXPECT_EQ(order.epoch(), 1);
  EXPECT_EQ(order.batchInEpoch(), 1);
}

TEST(BatchOrderTest, WithoutShuffleEveryEpochIsFileOrder) {
  BatchOrder order(6, 2, false, 123);
  std::vector<std::vector<int64_t>> batches = take(order, 6);
  for (int b = 0; b < 6; ++b)
    EXPECT_EQ(batches[size_t(b)],
              (std::vector<int64_t>{(b % 3) * 2, (b % 3) * 2 + 1}));
}

TEST(BatchOrderTest, CursorAdvancesAcrossEpochs) {
  BatchOrder order(8, 4, true, 5);
  EXPECT_EQ(order.epoch(), 0);
  EXPECT_EQ(order.batchInEpoch(), 0);
  order.next();
  EXPECT_EQ(order.batchInEpoch(), 1);
  order.next();
  EXPECT_EQ(order.epoch(), 1);
  EXPECT_EQ(order.batchInEpoch(), 0);
}

TEST(BatchOrderTest, SeekCarriesPastTheEndOfAnEpoch) {
  BatchOrder order(12, 3, true, 5);
  order.seek(1, 9); // 4 batches per epoch: epoch 3, batch 1
  EXPECT_EQ(order.epoch(), 3);
  EXPECT_EQ(order.batchInEpoch(), 1);
  order.seek(-1, -5);
  EXPECT_EQ(order.epoch(), 0);
  EXPECT_EQ(order.batchInEpoch(), 0);
}

TEST(BatchOrderTest, FewerSamplesThanOneBatchGiveNoBatch) {
  BatchOrder order(5, 8, true, 1);
  EXPECT_EQ(order.batchesPerEpoch(), 0);
  EXPECT_EQ(order.next(), nullptr);
  BatchOrder zero(5, 0, true, 1);
  EXPECT_EQ(zero.next(), nullptr);
}

} // namespace
} // namespace modelc::rt
