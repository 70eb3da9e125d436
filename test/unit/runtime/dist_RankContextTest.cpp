// What the generated code's all-reduces do (runtime/dist/RankContext.h,
// modelc_all_reduce_* of ProgramABI.h): nothing without a context, with one
// rank or on a micro-batch that is not the step's last; otherwise one
// collective per bucket over its buffers packed together, divided by the
// rank count; a failed collective is kept for the trainer and skips the
// later buckets.
#include "runtime/dist/RankContext.h"

#include "modelc/ProgramABI.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace modelc::rt::dist {
namespace {

/// Rank 0 of `ranks`, whose other ranks each hold 1.0 in every element:
/// a sum adds ranks - 1. Counts the collectives and their sizes.
class FakeComm : public Communicator {
public:
  explicit FakeComm(int ranks) : ranks_(ranks) {}
  int rank() const override { return 0; }
  int size() const override { return ranks_; }
  Status allReduceSum(float *data, size_t count) override {
    return sum(data, count);
  }
  Status allReduceSum(double *data, size_t count) override {
    return sum(data, count);
  }
  Status broadcast(void *, size_t, int) override { return Status(); }
  Status barrier() override { return Status(); }

  std::vector<size_t> counts;
  bool fail = false;

private:
  template <typename T> Status sum(T *data, size_t count) {
    if (fail)
      return Status::error("rank 1 is gone");
    counts.push_back(count);
    for (size_t i = 0; i < count; ++i)
      data[i] += T(ranks_ - 1);
    return Status();
  }
  int ranks_;
};

TEST(DistRankContext, WithoutAContextNothingChanges) {
  ASSERT_EQ(RankContext::current(), nullptr);
  std::vector<float> g = {1, 2};
  modelc_all_reduce_add_f32(g.data(), 2);
  modelc_all_reduce_bucket(0);
  EXPECT_EQ(g, (std::vector<float>{1, 2}));
}

TEST(DistRankContext, OnlyTheLastMicroBatchReduces) {
  FakeComm comm(4);
  RankContext context(&comm);
  std::vector<float> a = {1, 5, 9}, b = {3, 7};
  modelc_all_reduce_add_f32(a.data(), 3);
  modelc_all_reduce_add_f32(b.data(), 2);
  modelc_all_reduce_bucket(0);
  EXPECT_TRUE(comm.counts.empty());
  EXPECT_EQ(a, (std::vector<float>{1, 5, 9}));

  context.setReducing(true);
  modelc_all_reduce_add_f32(a.data(), 3);
  modelc_all_reduce_add_f32(b.data(), 2);
  modelc_all_reduce_bucket(0);
  // One collective for the bucket; the mean over 4 ranks.
  EXPECT_EQ(comm.counts, (std::vector<size_t>{5}));
  EXPECT_EQ(a, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(b, (std::vector<float>{1.5f, 2.5f}));
  EXPECT_TRUE(context.takeError().ok());

  // The next bucket holds only what was added after the last one.
  std::vector<double> d = {5};
  modelc_all_reduce_add_f64(d.data(), 1);
  modelc_all_reduce_bucket(1);
  EXPECT_EQ(comm.counts, (std::vector<size_t>{5, 1}));
  EXPECT_EQ(d[0], 2.0);
}

TEST(DistRankContext, OneRankOrNoCommunicatorIsTheIdentity) {
  FakeComm one(1);
  for (Communicator *comm : {static_cast<Communicator *>(&one),
                             static_cast<Communicator *>(nullptr)}) {
    RankContext context(comm);
    context.setReducing(true);
    std::vector<float> g = {4, 8};
    modelc_all_reduce_add_f32(g.data(), 2);
    modelc_all_reduce_bucket(0);
    EXPECT_EQ(g, (std::vector<float>{4, 8}));
  }
  EXPECT_TRUE(one.counts.empty());
}

// A run resumed on fewer ranks with more micro-batches: fwd_bwd still
// scales each by 1/(its entry's accumulate), so the divisor is the rank
// count that run had; with one rank the bucket is divided alone.
TEST(DistRankContext, TheDivisorOfARescaledRun) {
  RankContext context(nullptr);
  context.setDivisor(4);
  std::vector<float> g = {4, 8};
  modelc_all_reduce_add_f32(g.data(), 2);
  modelc_all_reduce_bucket(0);
  EXPECT_EQ(g, (std::vector<float>{4, 8})); // not the last micro-batch
  context.setReducing(true);
  modelc_all_reduce_add_f32(g.data(), 2);
  modelc_all_reduce_bucket(0);
  EXPECT_EQ(g, (std::vector<float>{1, 2}));

  FakeComm two(2);
  RankContext onTwo(&two);
  onTwo.setReducing(true);
  onTwo.setDivisor(4);
  std::vector<double> d = {7};
  modelc_all_reduce_add_f64(d.data(), 1);
  modelc_all_reduce_bucket(0);
  EXPECT_EQ(d[0], 2.0); // (7 + 1) / 4
}

TEST(DistRankContext, AFailedCollectiveIsKeptAndSkipsLaterBuckets) {
  FakeComm comm(2);
  RankContext context(&comm);
  context.setReducing(true);
  comm.fail = true;
  std::vector<float> g = {4, 8};
  modelc_all_reduce_add_f32(g.data(), 2);
  modelc_all_reduce_bucket(3);
  comm.fail = false;
  modelc_all_reduce_add_f32(g.data(), 2);
  modelc_all_reduce_bucket(4);
  EXPECT_TRUE(comm.counts.empty());
  EXPECT_EQ(g, (std::vector<float>{4, 8}));
  Status error = context.takeError();
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.message(),
            "the all-reduce of gradient bucket 3 failed: rank 1 is gone");
  EXPECT_TRUE(context.takeError().ok());
}

TEST(DistRankContext, ContextsNestAndRestore) {
  FakeComm outer(2), inner(2);
  RankContext a(&outer);
  {
    RankContext b(&inner);
    EXPECT_EQ(RankContext::current(), &b);
  }
  EXPECT_EQ(RankContext::current(), &a);
}

} // namespace
} // namespace modelc::rt::dist
