// CPU ranks on Gloo (runtime/dist/Gloo.h), as threads of this process over
// TCP on loopback with the in-memory rendezvous store: the embedded shim
// loads, all-reduce sums f32 and f64 exactly as the ranks' values add up,
// broadcast and barrier, many collectives in a row, one rank alone, and a
// rendezvous with a rank missing fails after its timeout naming that rank.
#include "runtime/dist/Gloo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

namespace modelc::rt::dist {
namespace {

using std::chrono::milliseconds;

/// Runs `body(communicator)` on `size` ranks, each in its own thread;
/// returns each rank's connect error ("" when it joined).
template <typename Body>
std::vector<std::string> onRanks(int size, Body body, int joining = -1,
                                 milliseconds timeout = milliseconds(20000)) {
  LocalStore store;
  if (joining < 0)
    joining = size;
  std::vector<std::string> errors(static_cast<size_t>(joining));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < joining; ++rank)
    threads.emplace_back([&, rank] {
      Result<std::unique_ptr<GlooCommunicator>> c = GlooCommunicator::connect(
          store.callbacks(), rank, size, "127.0.0.1", timeout);
      if (!c) {
        errors[size_t(rank)] = c.status().message();
        return;
      }
      body(**c);
    });
  for (std::thread &t : threads)
    t.join();
  return errors;
}

TEST(DistGloo, TheShimLoads) {
  Result<const modelc_gloo_api *> api = loadGloo();
  ASSERT_TRUE(api.ok()) << api.status().message();
  EXPECT_EQ((*api)->abi_version, MODELC_GLOO_ABI_VERSION);
}

TEST(DistGloo, AllReduceSumsOverRanks) {
  for (int size : {1, 2, 4}) {
    std::vector<std::vector<float>> f32(static_cast<size_t>(size));
    std::vector<std::vector<double>> f64(static_cast<size_t>(size));
    std::vector<std::string> errors = onRanks(size, [&](Communicator &c) {
      // Integers (exact in any order): rank r holds r + 1 + i/1000.
      std::vector<float> x(10000);
      std::vector<double> y(3);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = float(c.rank() + 1) + float(i % 1000);
      for (size_t i = 0; i < y.size(); ++i)
        y[i] = (c.rank() + 1) * 0.5 + double(i);
      ASSERT_TRUE(c.allReduceSum(x.data(), x.size()).ok());
      ASSERT_TRUE(c.allReduceSum(y.data(), y.size()).ok());
      f32[size_t(c.rank())] = x;
      f64[size_t(c.rank())] = y;
    });
    for (const std::string &e : errors)
      ASSERT_EQ(e, "");
    double rankSum = size * (size + 1) / 2.0;
    for (int r = 0; r < size; ++r) {
      for (size_t i = 0; i < f32[size_t(r)].size(); ++i)
        ASSERT_EQ(f32[size_t(r)][i], float(rankSum + size * double(i % 1000)))
            << "size " << size << " rank " << r << " element " << i;
      for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ(f64[size_t(r)][i], rankSum * 0.5 + size * double(i));
    }
  }
}

TEST(DistGloo, BroadcastBarrierAndManyCollectivesInARow) {
  std::vector<std::vector<uint8_t>> got(3);
  std::vector<float> last(3);
  std::vector<std::string> errors = onRanks(3, [&](Communicator &c) {
    std::vector<uint8_t> bytes(13, uint8_t(c.rank() * 10));
    ASSERT_TRUE(c.broadcast(bytes.data(), bytes.size(), 1).ok());
    got[size_t(c.rank())] = bytes;
    ASSERT_TRUE(c.barrier().ok());
    float x = 1;
    for (int i = 0; i < 50; ++i)
      ASSERT_TRUE(c.allReduceSum(&x, 1).ok()); // 3^50, about 7e23
    last[size_t(c.rank())] = x;
  });
  for (const std::string &e : errors)
    ASSERT_EQ(e, "");
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(got[size_t(r)], std::vector<uint8_t>(13, 10)) << r;
    EXPECT_EQ(last[size_t(r)], last[0]);
  }
  EXPECT_FLOAT_EQ(last[0], std::pow(3.0f, 50.0f));
}

TEST(DistGloo, AMissingRankTimesOutNamingIt) {
  // Ranks 0 and 1 of 3 join; rank 2 never does.
  std::vector<std::string> errors =
      onRanks(3, [](Communicator &) {}, 2, milliseconds(500));
  ASSERT_EQ(errors.size(), 2u);
  for (const std::string &e : errors) {
    EXPECT_NE(e.find("rank 2"), std::string::npos) << e;
    EXPECT_NE(e.find("did not join"), std::string::npos) << e;
  }
}

} // namespace
} // namespace modelc::rt::dist
