// GPU ranks on NCCL (runtime/dist/Nccl.h) against the fake libnccl of
// fake/FakeNccl.cpp, whose ranks are threads of this process and whose
// "device" memory is host memory (MODELC_LIBNCCL and MODELC_LIBCUDA point
// at the fakes): the loader's messages for a missing or too old library,
// all-reduce over 1, 2 and 4 ranks giving exactly the sum of integer-valued
// f32 and f64 data, broadcast, barrier, 50 all-reduces in a row, a rank
// that aborts making the others fail instead of waiting, abort() from
// another thread freeing ranks stuck on a lost one, the misuses NCCL
// refuses (counts that differ between ranks, a rank out of range, the
// wrong GPU), the scaled all-reduce of gradient buckets (also captured in a
// CUDA graph of the fake libcuda and replayed) and the Communicator of host
// memory. DistNcclGpu runs real NCCL where there are GPUs and NCCL
// (skipped elsewhere): each GPU, up to 4, a rank in its own thread.
#include "cuda_TestProgram.h"

#include "runtime/cuda/CudaApi.h"
#include "runtime/cuda/Device.h"
#include "runtime/dist/Nccl.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <dlfcn.h>
#include <mutex>
#include <thread>

namespace modelc::rt::dist {
namespace {

using test::ScopedEnv;
using Clock = std::chrono::steady_clock;
using Comm = std::unique_ptr<NcclCommunicator>;

class DistNccl : public ::testing::Test {
protected:
  void SetUp() override {
    lib_ = dlopen(MODELC_FAKE_NCCL, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr) << dlerror();
    setDevice_ =
        reinterpret_cast<void (*)(int)>(dlsym(lib_, "fakeNcclSetDevice"));
    live_ = reinterpret_cast<int (*)()>(dlsym(lib_, "fakeNcclLive"));
    waiting_ = reinterpret_cast<int (*)()>(dlsym(lib_, "fakeNcclWaiting"));
    ASSERT_TRUE(setDevice_ && live_ && waiting_);
    // The fake libcuda the runtime loads (the same handle): its handles
    // alive must be as many after the test as before.
    cudaLib_ = dlopen(MODELC_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(cudaLib_, nullptr) << dlerror();
    cudaLive_ = reinterpret_cast<int (*)()>(dlsym(cudaLib_, "fakeCudaLive"));
    ASSERT_TRUE(cudaLive_);
    cudaLiveBefore_ = cudaLive_();
  }
  void TearDown() override {
    EXPECT_EQ(live_(), 0) << "communicators, reductions or memory left alive";
    EXPECT_EQ(cudaLive_(), cudaLiveBefore_) << "CUDA handles left alive";
    dlclose(lib_);
    dlclose(cudaLib_);
  }

  /// The fake libcuda's table (loaded by the runtime).
  const cuda::DriverApi &driver() {
    Result<const cuda::DriverApi *> d = cuda::loadDriver();
    EXPECT_TRUE(d.ok()) << d.status().message();
    return **d;
  }

  /// A stream of the fake libcuda per rank, made on the test's thread (the
  /// fake libcuda's bookkeeping is not thread-safe).
  std::vector<CUstream> createStreams(int count) {
    std::vector<CUstream> streams(static_cast<size_t>(count));
    for (CUstream &s : streams)
      EXPECT_EQ(driver().streamCreate(&s, CU_STREAM_NON_BLOCKING),
                CUDA_SUCCESS);
    return streams;
  }
  void destroyStreams(const std::vector<CUstream> &streams) {
    for (CUstream s : streams)
      EXPECT_EQ(driver().streamDestroy(s), CUDA_SUCCESS);
  }

  /// Connects `joining` ranks of `size` (all by default), each in a thread
  /// whose current GPU is its rank; the communicators of those that joined
  /// and the errors of the others ("" when joined).
  std::pair<std::vector<Comm>, std::vector<std::string>>
  connectRanks(int size, int joining = -1,
               const std::vector<CUstream> &streams = {}) {
    if (joining < 0)
      joining = size;
    Result<NcclId> id = createNcclId();
    EXPECT_TRUE(id.ok()) << id.status().message();
    std::vector<Comm> comms(static_cast<size_t>(joining));
    std::vector<std::string> errors(static_cast<size_t>(joining));
    std::vector<std::thread> threads;
    for (int rank = 0; rank < joining; ++rank)
      threads.emplace_back([&, rank] {
        setDevice_(rank);
        Result<Comm> c = NcclCommunicator::connect(
            *id, rank, size, rank,
            streams.empty() ? nullptr : streams[size_t(rank)]);
        if (c)
          comms[size_t(rank)] = c.take();
        else
          errors[size_t(rank)] = c.status().message();
      });
    for (std::thread &t : threads)
      t.join();
    return {std::move(comms), std::move(errors)};
  }

  /// Runs `body(rank's communicator)` on every rank, each in its own thread
  /// (NCCL's calls wait for the other ranks).
  template <typename Body> void onRanks(std::vector<Comm> &comms, Body body) {
    std::vector<std::thread> threads;
    for (Comm &c : comms)
      threads.emplace_back([&body, &c] { body(*c); });
    for (std::thread &t : threads)
      t.join();
  }

  std::vector<Comm> connectAll(int size,
                               const std::vector<CUstream> &streams = {}) {
    auto [comms, errors] = connectRanks(size, -1, streams);
    for (const std::string &e : errors)
      EXPECT_EQ(e, "");
    return std::move(comms);
  }

  ScopedEnv nccl_{"MODELC_LIBNCCL", MODELC_FAKE_NCCL};
  ScopedEnv cuda_{"MODELC_LIBCUDA", MODELC_FAKE_CUDA};
  ScopedEnv timeout_{"FAKE_NCCL_TIMEOUT_MS", "20000"};
  void *lib_ = nullptr;
  void (*setDevice_)(int) = nullptr;
  int (*live_)() = nullptr;
  int (*waiting_)() = nullptr;
  void *cudaLib_ = nullptr;
  int (*cudaLive_)() = nullptr;
  int cudaLiveBefore_ = 0;
};

TEST_F(DistNccl, AMissingLibraryIsOneLineNamingThePackage) {
  ScopedEnv env("MODELC_LIBNCCL", "/nonexistent/libnccl.so.2");
  for (const Status &s : {loadNccl().status(), createNcclId().status()}) {
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.exitCode(), kExitUsage);
    EXPECT_EQ(s.message().rfind("GPU ranks use NCCL, which could not be "
                                "loaded (MODELC_LIBNCCL=/nonexistent/"
                                "libnccl.so.2; /nonexistent/libnccl.so.2: ",
                                0),
              0u)
        << s.message();
    EXPECT_NE(s.message().find("apt install libnccl2"), std::string::npos);
    EXPECT_EQ(s.message().find('\n'), std::string::npos);
  }
}

TEST_F(DistNccl, AnOldLibraryIsRefusedWithItsVersion) {
  // A new spelling of the fake's path each time (extra leading slashes):
  // loads are cached per value of MODELC_LIBNCCL, and this one must be
  // checked afresh, also under --gtest_repeat.
  static size_t runs = 0;
  std::string path = std::string(++runs, '/') + MODELC_FAKE_NCCL;
  ScopedEnv env("MODELC_LIBNCCL", path.c_str());
  for (auto [version, text] :
       {std::pair{"21805", "2.18.5"}, {"2804", "2.8.4"}}) {
    ScopedEnv old("FAKE_NCCL_VERSION", version);
    Result<const NcclApi *> api = loadNccl();
    ASSERT_FALSE(api.ok());
    EXPECT_NE(api.status().message().find(path + " is NCCL " + text +
                                          ", older than 2.19.0"),
              std::string::npos)
        << api.status().message();
  }
  Result<const NcclApi *> api = loadNccl();
  ASSERT_TRUE(api.ok()) << api.status().message();
  EXPECT_EQ((*api)->version, NCCL_VERSION_CODE);
}

TEST_F(DistNccl, TheInstalledLibraryLoadsWhereThereIsOne) {
  ScopedEnv env("MODELC_LIBNCCL", nullptr);
  Result<const NcclApi *> api = loadNccl();
  if (!api)
    GTEST_SKIP() << api.status().message();
  EXPECT_GE((*api)->version, kMinNcclVersion) << (*api)->path;
}

TEST_F(DistNccl, IdsAreUnique) {
  Result<NcclId> a = createNcclId(), b = createNcclId();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
}

TEST_F(DistNccl, AllReduceSumsOverRanks) {
  for (int size : {1, 2, 4}) {
    std::vector<Comm> comms = connectAll(size);
    std::vector<std::vector<float>> f32(static_cast<size_t>(size));
    std::vector<std::vector<double>> f64(static_cast<size_t>(size));
    onRanks(comms, [&](NcclCommunicator &c) {
      // Integers (exact in any order): rank r holds r + 1 + i % 1000.
      std::vector<float> x(10000);
      std::vector<double> y(3);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = float(c.rank() + 1) + float(i % 1000);
      for (size_t i = 0; i < y.size(); ++i)
        y[i] = (c.rank() + 1) * 0.5 + double(i);
      Status s = c.allReduceSum(x.data(), x.size());
      ASSERT_TRUE(s.ok()) << s.message();
      s = c.allReduceSum(y.data(), y.size());
      ASSERT_TRUE(s.ok()) << s.message();
      f32[size_t(c.rank())] = x;
      f64[size_t(c.rank())] = y;
    });
    double rankSum = size * (size + 1) / 2.0;
    for (int r = 0; r < size; ++r) {
      ASSERT_EQ(f32[size_t(r)].size(), 10000u);
      for (size_t i = 0; i < f32[size_t(r)].size(); ++i)
        ASSERT_EQ(f32[size_t(r)][i], float(rankSum + size * double(i % 1000)))
            << "size " << size << " rank " << r << " element " << i;
      for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ(f64[size_t(r)][i], rankSum * 0.5 + size * double(i));
    }
  }
}

TEST_F(DistNccl, BroadcastBarrierAndFiftyAllReducesInARow) {
  std::vector<Comm> comms = connectAll(3);
  std::vector<std::vector<uint8_t>> got(3);
  std::vector<float> last(3);
  onRanks(comms, [&](NcclCommunicator &c) {
    std::vector<uint8_t> bytes(13, uint8_t(c.rank() * 10));
    ASSERT_TRUE(c.broadcast(bytes.data(), bytes.size(), 1).ok());
    got[size_t(c.rank())] = bytes;
    Status s = c.barrier();
    ASSERT_TRUE(s.ok()) << s.message();
    float x = 1;
    for (int i = 0; i < 50; ++i)
      ASSERT_TRUE(c.allReduceSum(&x, 1).ok()); // 3^50, about 7e23
    last[size_t(c.rank())] = x;
    ASSERT_TRUE(c.barrier().ok());
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(got[size_t(r)], std::vector<uint8_t>(13, 10)) << r;
    EXPECT_EQ(last[size_t(r)], last[0]);
  }
  EXPECT_FLOAT_EQ(last[0], std::pow(3.0f, 50.0f));
}

TEST_F(DistNccl, ARankThatAbortsMakesTheOthersFailNotWait) {
  std::vector<Comm> comms = connectAll(3);
  std::vector<std::string> errors(3);
  Clock::time_point start = Clock::now();
  onRanks(comms, [&](NcclCommunicator &c) {
    float x = 1;
    if (c.rank() == 2)
      c.abort(); // as a rank that learnt something is wrong
    Status s = c.allReduceSum(&x, 1);
    errors[size_t(c.rank())] = s.ok() ? "" : s.message();
    EXPECT_EQ(x, 1.0f) << "a failed all-reduce leaves the data";
  });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  for (int r = 0; r < 2; ++r)
    EXPECT_NE(errors[size_t(r)].find("ncclRemoteError (remote process exited "
                                     "or there was a network error): fake "
                                     "NCCL: rank 2 aborted"),
              std::string::npos)
        << errors[size_t(r)];
  EXPECT_EQ(errors[2], "rank 2 of 3 (GPU 2): NCCL all-reduce after the "
                       "communicator was aborted");
  // The error sticks.
  float x = 1;
  Status again = comms[0]->allReduceSum(&x, 1);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.message(), errors[0]);
}

TEST_F(DistNccl, AbortFromAnotherThreadFreesRanksWaitingForALostOne) {
  std::vector<Comm> comms = connectAll(3);
  // Ranks 0 and 1 all-reduce; rank 2 is lost and never does. A watchdog of
  // rank 0 (here the test's thread) aborts its communicator: rank 0's call
  // returns, and so does rank 1's.
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      float x = 1;
      Status s = comms[size_t(r)]->allReduceSum(&x, 1);
      errors[size_t(r)] = s.ok() ? "" : s.message();
    });
  for (int i = 0; i < 500 && waiting_() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(waiting_(), 2) << "ranks 0 and 1 are not waiting in their call";
  Clock::time_point start = Clock::now();
  comms[0]->abort();
  for (std::thread &t : threads)
    t.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(errors[0], "rank 0 of 3 (GPU 0): NCCL all-reduce failed: the "
                       "communicator was aborted");
  EXPECT_EQ(errors[1], "rank 1 of 3 (GPU 1): NCCL reported an error during "
                       "the all-reduce: ncclRemoteError (remote process "
                       "exited or there was a network error): fake NCCL: "
                       "rank 0 aborted");
}

TEST_F(DistNccl, CountsThatDifferBetweenRanksAreAnError) {
  std::vector<Comm> comms = connectAll(2);
  std::vector<std::string> errors(2);
  onRanks(comms, [&](NcclCommunicator &c) {
    std::vector<float> x(size_t(3 + c.rank()), 1.0f);
    Status s = c.allReduceSum(x.data(), x.size());
    errors[size_t(c.rank())] = s.ok() ? "" : s.message();
  });
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(errors[size_t(r)],
              fmt::format("rank {0} of 2 (GPU {0}): NCCL all-reduce failed "
                          "with ncclInvalidUsage (invalid usage (run with "
                          "NCCL_DEBUG=WARN for details)): collective #0: rank "
                          "0 called all-reduce of 3 f32, rank 1 all-reduce "
                          "of 4 f32",
                          r));
}

TEST_F(DistNccl, ARankOutOfRangeIsAnInvalidArgument) {
  Result<NcclId> id = createNcclId();
  ASSERT_TRUE(id.ok());
  for (int rank : {-1, 2}) {
    Result<Comm> c = NcclCommunicator::connect(*id, rank, 2, 0, nullptr);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().message(),
              fmt::format("rank {0} of 2 (GPU 0): NCCL error: ncclCommInitRank "
                          "failed with ncclInvalidArgument (invalid argument "
                          "(run with NCCL_DEBUG=WARN for details)): fake NCCL: "
                          "invalid rank {0}/2",
                          rank));
  }
}

TEST_F(DistNccl, ARankMissingAtConnectTimesOutNamingIt) {
  ScopedEnv timeout("FAKE_NCCL_TIMEOUT_MS", "300");
  auto [comms, errors] = connectRanks(3, 2);
  for (const std::string &e : errors)
    EXPECT_NE(e.find("ncclCommInitRank failed with ncclRemoteError"),
              std::string::npos)
        << e;
  EXPECT_NE(errors[0].find("timed out waiting for rank(s) 2"),
            std::string::npos)
      << errors[0];
}

TEST_F(DistNccl, AConnectOnTheWrongGpuNamesBoth) {
  Result<NcclId> id = createNcclId();
  ASSERT_TRUE(id.ok());
  Result<Comm> c = NcclCommunicator::connect(*id, 0, 1, 3, nullptr);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "rank 0 of 1 (GPU 3): NCCL joined on GPU 0: the thread must make "
            "GPU 3's context current before connecting");
}

/// A rank's gradient bucket for the scaled all-reduce: two f32 buffers and
/// one f64, filled with integer-valued data that depends on the rank and on
/// `round` (so that each reduction's result is new).
struct Bucket {
  std::vector<float> a = std::vector<float>(1000), b = std::vector<float>(7);
  std::vector<double> c = std::vector<double>(5);

  void fill(int rank, int round) {
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = float(rank + 1 + round) + float(i % 100);
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = float(10 * (rank + round) + int(i));
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = (rank + 1) * 3.0 + round + double(i);
  }
  std::vector<NcclBuffer> buffers() {
    return {{a.data(), a.size(), false},
            {c.data(), c.size(), true},
            {b.data(), b.size(), false}};
  }
};

/// Expects every rank's bucket to hold `scale` times the sum over ranks of
/// what fill(rank, round) wrote, computed as NCCL's PreMulSum does (each
/// rank's data times the scale in the element type, summed in rank order):
/// exact where the products and sums are (integers times 0.5 or 1), else
/// within 4 units in the last place (EXPECT_FLOAT_EQ), so that a compiler
/// that fuses the multiply and add cannot fail it.
void expectScaledSums(const std::vector<Bucket> &got, double scale, int round,
                      bool exact) {
  int size = int(got.size());
  std::vector<Bucket> inputs(got.size());
  for (int r = 0; r < size; ++r)
    inputs[size_t(r)].fill(r, round);
  auto sumF32 = [&](std::vector<float> Bucket::*member, size_t i) {
    float sum = 0;
    for (const Bucket &in : inputs)
      sum += float(scale) * (in.*member)[i];
    return sum;
  };
  for (int r = 0; r < size; ++r) {
    const Bucket &g = got[size_t(r)];
    std::string where = fmt::format("{} ranks, scale {}, round {}, rank {}",
                                    size, scale, round, r);
    for (size_t i = 0; i < g.a.size(); ++i) {
      float want = sumF32(&Bucket::a, i);
      if (exact)
        ASSERT_EQ(g.a[i], want) << where << ", a[" << i << "]";
      else
        ASSERT_FLOAT_EQ(g.a[i], want) << where << ", a[" << i << "]";
    }
    for (size_t i = 0; i < g.b.size(); ++i) {
      float want = sumF32(&Bucket::b, i);
      if (exact)
        EXPECT_EQ(g.b[i], want) << where << ", b[" << i << "]";
      else
        EXPECT_FLOAT_EQ(g.b[i], want) << where << ", b[" << i << "]";
    }
    for (size_t i = 0; i < g.c.size(); ++i) {
      double want = 0;
      for (const Bucket &in : inputs)
        want += scale * in.c[i];
      if (exact)
        EXPECT_EQ(g.c[i], want) << where << ", c[" << i << "]";
      else
        EXPECT_DOUBLE_EQ(g.c[i], want) << where << ", c[" << i << "]";
    }
  }
}

TEST_F(DistNccl, AllReduceScaledScalesEachBuffersSumOverRanks) {
  const std::vector<std::pair<double, bool>> scales = {
      {0.5, true}, {1.0 / 3.0, false}, {1.0, true}}; // (scale, exact)
  for (int size : {1, 2, 4}) {
    std::vector<Comm> comms = connectAll(size);
    for (auto [scale, exact] : scales) {
      std::vector<Bucket> got(static_cast<size_t>(size));
      onRanks(comms, [&](NcclCommunicator &c) {
        Bucket &bucket = got[size_t(c.rank())];
        bucket.fill(c.rank(), 0);
        Status s = c.allReduceScaled(bucket.buffers(), scale, nullptr);
        ASSERT_TRUE(s.ok()) << s.message();
      });
      expectScaledSums(got, scale, 0, exact);
    }
    // A PreMulSum per element type and scale (1 is ncclSum), made once:
    // another call with a known scale makes none.
    int live = live_();
    onRanks(comms, [&](NcclCommunicator &c) {
      Bucket bucket;
      bucket.fill(c.rank(), 0);
      ASSERT_TRUE(c.allReduceScaled(bucket.buffers(), 0.5, nullptr).ok());
    });
    EXPECT_EQ(live_(), live);
  }
}

TEST_F(DistNccl, AllReduceScaledOnACapturedStreamRunsAtEachGraphLaunch) {
  constexpr int size = 2;
  const cuda::DriverApi &d = driver();
  std::vector<CUstream> streams = createStreams(size);
  std::vector<Comm> comms = connectAll(size);
  std::vector<Bucket> buckets(size);
  std::vector<CUgraph> graphs(size);
  std::vector<CUgraphExec> execs(size);
  // Captured on the test's thread, one rank after the other: nothing waits
  // at capture, and nothing is reduced.
  for (int r = 0; r < size; ++r) {
    CUstream stream = streams[size_t(r)];
    buckets[size_t(r)].fill(r, 0);
    ASSERT_EQ(d.streamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
              CUDA_SUCCESS);
    Status s = comms[size_t(r)]->allReduceScaled(buckets[size_t(r)].buffers(),
                                                 0.25, stream);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(d.streamEndCapture(stream, &graphs[size_t(r)]), CUDA_SUCCESS);
    ASSERT_EQ(d.graphInstantiate(&execs[size_t(r)], graphs[size_t(r)], 0),
              CUDA_SUCCESS);
  }
  EXPECT_EQ(waiting_(), 0);
  for (int r = 0; r < size; ++r) {
    Bucket unchanged;
    unchanged.fill(r, 0);
    EXPECT_EQ(buckets[size_t(r)].a, unchanged.a) << "reduced at capture";
    EXPECT_EQ(buckets[size_t(r)].c, unchanged.c) << "reduced at capture";
  }
  // Each launch reduces the buckets' current data again. The launches
  // start one rank after the other (each once the ranks before it wait in
  // the replay's first all-reduce), as the fake libcuda's call log is not
  // thread-safe; each replay blocks until the other rank's reaches it.
  for (int round = 1; round <= 2; ++round) {
    for (int r = 0; r < size; ++r)
      buckets[size_t(r)].fill(r, round);
    std::vector<CUresult> launched(size, CUDA_ERROR_UNKNOWN);
    std::vector<std::thread> threads;
    for (int r = 0; r < size; ++r)
      threads.emplace_back([&, r] {
        for (int i = 0; i < 5000 && waiting_() < r; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        launched[size_t(r)] =
            d.graphLaunch(execs[size_t(r)], streams[size_t(r)]);
      });
    for (std::thread &t : threads)
      t.join();
    for (int r = 0; r < size; ++r)
      EXPECT_EQ(launched[size_t(r)], CUDA_SUCCESS) << "rank " << r;
    expectScaledSums(buckets, 0.25, round, true);
    onRanks(comms, [](NcclCommunicator &c) {
      float x = 1;
      Status s = c.allReduceSum(&x, 1); // no asynchronous error either
      EXPECT_TRUE(s.ok()) << s.message();
    });
  }
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(d.graphExecDestroy(execs[size_t(r)]), CUDA_SUCCESS);
    EXPECT_EQ(d.graphDestroy(graphs[size_t(r)]), CUDA_SUCCESS);
  }
  comms.clear();
  destroyStreams(streams);
}

TEST_F(DistNccl, AnErrorFoundAtAGraphLaunchIsTheNextCallsError) {
  constexpr int size = 2;
  const cuda::DriverApi &d = driver();
  std::vector<CUstream> streams = createStreams(size);
  std::vector<Comm> comms = connectAll(size);
  // Rank 1's captured bucket has one element more than rank 0's: the ranks
  // only disagree when the graphs are replayed.
  std::vector<std::vector<float>> data = {std::vector<float>(3, 1.0f),
                                          std::vector<float>(4, 1.0f)};
  std::vector<CUgraph> graphs(size);
  std::vector<CUgraphExec> execs(size);
  for (int r = 0; r < size; ++r) {
    CUstream stream = streams[size_t(r)];
    ASSERT_EQ(d.streamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
              CUDA_SUCCESS);
    std::vector<float> &x = data[size_t(r)];
    ASSERT_TRUE(comms[size_t(r)]
                    ->allReduceScaled({{x.data(), x.size()}}, 0.5, stream)
                    .ok());
    ASSERT_EQ(d.streamEndCapture(stream, &graphs[size_t(r)]), CUDA_SUCCESS);
    ASSERT_EQ(d.graphInstantiate(&execs[size_t(r)], graphs[size_t(r)], 0),
              CUDA_SUCCESS);
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      for (int i = 0; i < 5000 && waiting_() < r; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      EXPECT_EQ(d.graphLaunch(execs[size_t(r)], streams[size_t(r)]),
                CUDA_SUCCESS);
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < size; ++r) {
    float x = 1;
    Status s = comms[size_t(r)]->allReduceSum(&x, 1);
    EXPECT_EQ(s.message(),
              fmt::format("rank {0} of 2 (GPU {0}): NCCL reported an error "
                          "before the all-reduce: ncclInvalidUsage (invalid "
                          "usage (run with NCCL_DEBUG=WARN for details)): "
                          "collective #0: rank 0 called all-reduce of 3 f32 "
                          "(PreMulSum), rank 1 all-reduce of 4 f32 "
                          "(PreMulSum)",
                          r));
  }
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(d.graphExecDestroy(execs[size_t(r)]), CUDA_SUCCESS);
    EXPECT_EQ(d.graphDestroy(graphs[size_t(r)]), CUDA_SUCCESS);
  }
  comms.clear(); // aborted: a failed communicator's reductions go with it
  destroyStreams(streams);
}

TEST_F(DistNccl, HostCommunicatorReducesAndBroadcastsHostMemory) {
  constexpr int size = 2;
  std::vector<CUstream> streams = createStreams(size);
  std::vector<Comm> comms = connectAll(size, streams);
  std::vector<std::vector<double>> f64(size), again(size);
  std::vector<std::vector<float>> f32(size);
  std::vector<std::vector<uint8_t>> bytes(size);
  onRanks(comms, [&](NcclCommunicator &device) {
    NcclHostCommunicator host(device);
    int r = host.rank();
    EXPECT_EQ(host.size(), size);
    // Host memory the fake's "device" memory cannot be told from: the
    // results must come through the scratch, which grows from 40 bytes to
    // 4000 and is reused.
    std::vector<double> x = {r + 0.5, 2.0 * r, -1.0, 1e10, 0};
    std::vector<float> y(1000);
    for (size_t i = 0; i < y.size(); ++i)
      y[i] = float(r + 1) * float(i);
    std::vector<uint8_t> b(13, uint8_t(r * 10 + 1));
    std::vector<double> z = {double(r)};
    Status s = host.allReduceSum(x.data(), x.size());
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(host.allReduceSum(y.data(), y.size()).ok());
    ASSERT_TRUE(host.broadcast(b.data(), b.size(), 1).ok());
    ASSERT_TRUE(host.barrier().ok());
    ASSERT_TRUE(host.allReduceSum(z.data(), z.size()).ok());
    f64[size_t(r)] = x;
    f32[size_t(r)] = y;
    bytes[size_t(r)] = b;
    again[size_t(r)] = z;
  });
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(f64[size_t(r)], (std::vector<double>{2.0, 2.0, -2.0, 2e10, 0}));
    for (size_t i = 0; i < 1000; ++i)
      ASSERT_EQ(f32[size_t(r)][i], 3.0f * float(i)) << r << " " << i;
    EXPECT_EQ(bytes[size_t(r)], std::vector<uint8_t>(13, 11)) << r;
    EXPECT_EQ(again[size_t(r)], std::vector<double>{1.0}) << r;
  }
  comms.clear();
  destroyStreams(streams);
}

/// Waits until `count` threads have arrived (C++17 has no std::latch).
class Latch {
public:
  explicit Latch(int count) : count_(count) {}
  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--count_ == 0)
      done_.notify_all();
    done_.wait(lock, [&] { return count_ <= 0; });
  }

private:
  std::mutex mutex_;
  std::condition_variable done_;
  int count_;
};

/// Rank `rank` of `size` on GPU `rank` with real NCCL, in the calling
/// thread: element 0 broadcast from the last rank, then all 1000 elements
/// all-reduced, a barrier, and, once every rank is done (`done`), a call
/// after abort(); the data downloaded into `out`. The first error, "" when
/// none.
std::string runRankOnGpu(const cuda::DriverApi &d, const NcclId &id, int rank,
                         int size, Latch &done, std::vector<float> &out) {
  constexpr size_t n = 1000;
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i)
    host[i] = float(rank + 1) + float(i);
  std::string error;
  auto cu = [&](CUresult r, const char *call) {
    if (r != CUDA_SUCCESS && error.empty())
      error = d.check(r, call).message();
    return error.empty();
  };
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CUdeviceptr buffer = 0;
  bool arrived = false;
  if (cu(d.deviceGet(&device, rank), "cuDeviceGet") &&
      cu(d.primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain") &&
      cu(d.ctxSetCurrent(context), "cuCtxSetCurrent") &&
      cu(d.streamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate") &&
      cu(d.memAlloc(&buffer, n * sizeof(float)), "cuMemAlloc") &&
      cu(d.memcpyHtoDAsync(buffer, host.data(), n * sizeof(float), stream),
         "cuMemcpyHtoDAsync")) {
    Result<std::unique_ptr<NcclCommunicator>> c =
        NcclCommunicator::connect(id, rank, size, rank, stream);
    float *data = reinterpret_cast<float *>(uintptr_t(buffer));
    Status s =
        c.ok() ? (*c)->broadcast(data, sizeof(float), size - 1) : c.status();
    if (s.ok())
      s = (*c)->allReduceSum(data, n);
    if (s.ok())
      s = (*c)->barrier();
    if (s.ok()) {
      out.resize(n);
      cu(d.memcpyDtoHAsync(out.data(), buffer, n * sizeof(float), stream),
         "cuMemcpyDtoHAsync");
      cu(d.streamSynchronize(stream), "cuStreamSynchronize");
      arrived = true;
      done.arriveAndWait();
      (*c)->abort();
      if ((*c)->allReduceSum(data, n).ok() && error.empty())
        error = "an all-reduce after abort() succeeded";
    }
    if (!s.ok() && error.empty())
      error = s.message();
  }
  if (!arrived)
    done.arriveAndWait();
  if (buffer)
    d.memFree(buffer);
  if (stream)
    d.streamDestroy(stream);
  if (context)
    d.primaryCtxRelease(device);
  return error;
}

TEST(DistNcclGpu, RanksOnTheMachinesGpus) {
  if (std::getenv("MODELC_LIBCUDA") || std::getenv("MODELC_LIBNCCL"))
    GTEST_SKIP() << "MODELC_LIBCUDA or MODELC_LIBNCCL is set";
  cuda::Probe probe = cuda::probe();
  if (probe.devices == 0)
    GTEST_SKIP() << "no GPU: " << probe.problem;
  Result<const NcclApi *> nccl = loadNccl();
  if (!nccl)
    GTEST_SKIP() << nccl.status().message();
  Result<const cuda::DriverApi *> driver = cuda::loadDriver();
  ASSERT_TRUE(driver.ok()) << driver.status().message();
  int size = std::min(probe.devices, 4);
  Result<NcclId> id = createNcclId();
  ASSERT_TRUE(id.ok()) << id.status().message();
  std::vector<std::string> errors(static_cast<size_t>(size));
  std::vector<std::vector<float>> results(static_cast<size_t>(size));
  Latch done(size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank)
    threads.emplace_back([&, rank] {
      errors[size_t(rank)] =
          runRankOnGpu(**driver, *id, rank, size, done, results[size_t(rank)]);
    });
  for (std::thread &t : threads)
    t.join();
  // Element 0: the last rank's (size) on every rank, summed; element i: the
  // sum over ranks of r + 1 + i. Integers, exact in any order.
  double rankSum = size * (size + 1) / 2.0;
  for (int r = 0; r < size; ++r) {
    ASSERT_EQ(errors[size_t(r)], "") << "rank " << r;
    ASSERT_EQ(results[size_t(r)].size(), 1000u);
    EXPECT_EQ(results[size_t(r)][0], float(size * size)) << "rank " << r;
    for (size_t i = 1; i < 1000; ++i)
      ASSERT_EQ(results[size_t(r)][i], float(rankSum + size * double(i)))
          << "rank " << r << " element " << i;
  }
}

} // namespace
} // namespace modelc::rt::dist
