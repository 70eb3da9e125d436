// GPU ranks end to end without a GPU (runtime/dist/GpuRank.h over the fake
// libcuda and libnccl of fake/): each rank a thread with a cuda::Device of
// a program whose fwd_bwd has an AllReduce step (an f32 and an f64 buffer)
// between two launches, its NCCL communicators, and the bucket reducer
// that the trainer gives the device. Checked: a reducing run makes every
// rank's bucket the mean over the ranks (times what a changed accumulation
// asks), run eagerly, captured as a CUDA graph and replayed, with the
// communication stream forked from the device's stream and joined at the
// function's end; a non-reducing run communicates nothing and keeps its own
// graph; the host communicator's all-reduce; the group of ranks aborting
// a rank that waits for one that failed; and every handle released.
#include "cuda_TestProgram.h"

#include "runtime/dist/GpuRank.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <thread>

namespace modelc::rt::test {
namespace {

namespace fb = modelc::manifest;

// The bucket: 8 f32 at offset 0 and 4 f64 at offset 64.
constexpr uint64_t kF32Offset = 0, kF64Offset = 64;
constexpr size_t kF32Count = 8, kF64Count = 4;

/// Rank r's values for run `run`: distinct per rank, element and run.
float f32Value(int rank, int run, size_t i) {
  return float(rank + 1) * float(i + 1) + 10.0f * float(run);
}
double f64Value(int rank, int run, size_t i) {
  return double(rank + 1) * 0.25 * double(i + 1) - double(run);
}

/// One rank's part: opens GPU `rank` (telling the fake libnccl, when
/// `setDevice` is given), joins `size` ranks, and for each
/// entry of `reducing` uploads fresh values, runs fwd_bwd and checks the
/// bucket: the mean over the ranks times `size / divisor`, or the values
/// as uploaded on a non-reducing run. Returns the failures' text.
std::string runRank(const Manifest &m, const dist::NcclId &id, int rank,
                    int size, double divisor, const std::vector<bool> &reducing,
                    void (*setDevice)(int)) {
  if (setDevice)
    setDevice(rank);
  Result<std::unique_ptr<cuda::Device>> device = cuda::Device::open(rank, m);
  if (!device)
    return device.status().message();
  Result<dist::GpuRankComms> comms =
      dist::connectGpuRank(id, rank, size, **device);
  if (!comms)
    return comms.status().message();
  dist::RankContext context(comms->host.get());
  context.setDivisor(divisor);
  dist::NcclBucketReducer reducer(*comms->device, context);
  std::string failures;
  auto expect = [&](bool ok, const std::string &what) {
    if (!ok)
      failures += "rank " + std::to_string(rank) + ": " + what + "\n";
  };
  Status set = (*device)->setReducer(&reducer);
  expect(set.ok(), set.message());
  for (size_t run = 0; run < reducing.size() && failures.empty(); ++run) {
    std::vector<float> f32(kF32Count);
    std::vector<double> f64(kF64Count);
    for (size_t i = 0; i < kF32Count; ++i)
      f32[i] = f32Value(rank, int(run), i);
    for (size_t i = 0; i < kF64Count; ++i)
      f64[i] = f64Value(rank, int(run), i);
    expect((*device)->upload(kF32Offset, f32.data(), kF32Count * 4).ok() &&
               (*device)->upload(kF64Offset, f64.data(), kF64Count * 8).ok(),
           "upload");
    context.setReducing(reducing[run]);
    Status ran = (*device)->run(0);
    expect(ran.ok(), "run " + std::to_string(run) + ": " + ran.message());
    expect((*device)->download(kF32Offset, f32.data(), kF32Count * 4).ok() &&
               (*device)->download(kF64Offset, f64.data(), kF64Count * 8).ok(),
           "download");
    for (size_t i = 0; i < kF32Count; ++i) {
      float want = f32Value(rank, int(run), i);
      if (reducing[run]) {
        // NCCL's PreMulSum: each rank's value times 1/divisor, summed.
        float scale = float(1.0 / divisor), sum = 0;
        for (int r = 0; r < size; ++r)
          sum += scale * f32Value(r, int(run), i);
        want = sum;
      }
      expect(f32[i] == want, "run " + std::to_string(run) + " f32[" +
                                 std::to_string(i) +
                                 "] = " + std::to_string(f32[i]) +
                                 ", expected " + std::to_string(want));
    }
    for (size_t i = 0; i < kF64Count; ++i) {
      double want = f64Value(rank, int(run), i);
      if (reducing[run]) {
        double sum = 0;
        for (int r = 0; r < size; ++r)
          sum += (1.0 / divisor) * f64Value(r, int(run), i);
        want = sum;
      }
      expect(f64[i] == want, "run " + std::to_string(run) + " f64[" +
                                 std::to_string(i) +
                                 "] = " + std::to_string(f64[i]) +
                                 ", expected " + std::to_string(want));
    }
  }
  // The host communicator: the loop's losses and flags.
  std::vector<double> host = {double(rank), 1.0};
  Status reduced = comms->host->allReduceSum(host.data(), host.size());
  expect(reduced.ok() && host[0] == size * (size - 1) / 2.0 && host[1] == size,
         "host all-reduce: " + reduced.message());
  device->reset();
  return failures;
}

class DistGpuRank : public ::testing::Test {
protected:
  void SetUp() override {
    nccl_ = dlopen(MODELC_FAKE_NCCL, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(nccl_, nullptr) << dlerror();
    setDevice_ =
        reinterpret_cast<void (*)(int)>(dlsym(nccl_, "fakeNcclSetDevice"));
    ncclLive_ = reinterpret_cast<int (*)()>(dlsym(nccl_, "fakeNcclLive"));
    cuda_ = dlopen(MODELC_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(cuda_, nullptr) << dlerror();
    cudaLive_ = reinterpret_cast<int (*)()>(dlsym(cuda_, "fakeCudaLive"));
    cudaLog_ = reinterpret_cast<const char *(*)()>(dlsym(cuda_, "fakeCudaLog"));
    ASSERT_TRUE(setDevice_ && ncclLive_ && cudaLive_ && cudaLog_);
    cudaLiveBefore_ = cudaLive_();
    spec.functions = {
        {"fwd_bwd",
         {TestStep::launch(0),
          TestStep::allReduce(3, {{kF32Offset, kF32Count * 4, fb::DType::F32},
                                  {kF64Offset, kF64Count * 8, fb::DType::F64}}),
          TestStep::launch(1)}},
        {"update", {TestStep::launch(0)}}};
    manifest_ = loadGpuManifest(spec);
  }
  void TearDown() override {
    EXPECT_EQ(ncclLive_(), 0) << "NCCL communicators, ops or memory alive";
    EXPECT_EQ(cudaLive_(), cudaLiveBefore_) << "CUDA handles left alive";
    dlclose(nccl_);
    dlclose(cuda_);
  }

  /// Runs `size` ranks as threads; every rank's failures, joined.
  std::string runRanks(int size, double divisor,
                       const std::vector<bool> &reducing) {
    Result<dist::NcclId> id = dist::createNcclId();
    if (!id)
      return id.status().message();
    std::vector<std::string> failures(static_cast<size_t>(size));
    std::vector<std::thread> threads;
    for (int r = 0; r < size; ++r)
      threads.emplace_back([&, r] {
        failures[size_t(r)] =
            runRank(manifest_, *id, r, size, divisor, reducing, setDevice_);
      });
    for (std::thread &t : threads)
      t.join();
    std::string all;
    for (const std::string &f : failures)
      all += f;
    return all;
  }

  ScopedEnv libcuda_{"MODELC_LIBCUDA", MODELC_FAKE_CUDA};
  ScopedEnv libcublasLt_{"MODELC_CUBLASLT", MODELC_FAKE_CUDA};
  ScopedEnv libnccl_{"MODELC_LIBNCCL", MODELC_FAKE_NCCL};
  ScopedEnv devices_{"FAKE_CUDA_DEVICES", "4"};
  ScopedEnv timeout_{"FAKE_NCCL_TIMEOUT_MS", "20000"};
  GpuProgramSpec spec;
  Manifest manifest_;
  void *nccl_ = nullptr, *cuda_ = nullptr;
  void (*setDevice_)(int) = nullptr;
  int (*ncclLive_)() = nullptr, (*cudaLive_)() = nullptr;
  const char *(*cudaLog_)() = nullptr;
  int cudaLiveBefore_ = 0;
};

// Eager, captured, replayed: a reducing run's bucket is the ranks' mean
// every time, also from the graph (the fake NCCL's collective recorded in
// the capture runs at each replay).
TEST_F(DistGpuRank, ReducingRunsAverageTheBucketEagerlyAndFromTheGraph) {
  for (int size : {1, 2, 4}) {
    SCOPED_TRACE("ranks " + std::to_string(size));
    EXPECT_EQ(runRanks(size, double(size), {true, true, true, true}), "");
  }
  std::string log = cudaLog_();
  EXPECT_NE(log.find("stream-wait"), std::string::npos) << log;
  EXPECT_NE(log.find("capture"), std::string::npos) << log;
  EXPECT_NE(log.find("graph"), std::string::npos) << log;
}

// The micro-batches before a step's last accumulate without communicating,
// with their own graph, interleaved with reducing runs.
TEST_F(DistGpuRank, NonReducingRunsLeaveTheBucket) {
  EXPECT_EQ(runRanks(2, 2, {false, true, false, true, false, false, true}), "");
}

// A run that changed its accumulation scales the sum by its own divisor,
// also with one GPU (the `--gpus 1` path).
TEST_F(DistGpuRank, DivisorScalesTheSum) {
  EXPECT_EQ(runRanks(2, 4, {true, true, true}), "");
  EXPECT_EQ(runRanks(1, 2, {true, true, true}), "");
}

// A rank that fails after joining: the group aborts every communicator, so
// the rank waiting for it in a collective fails instead of hanging.
TEST_F(DistGpuRank, GroupAbortFreesARankWaitingForAFailedOne) {
  Result<dist::NcclId> id = dist::createNcclId();
  ASSERT_TRUE(id.ok()) << id.status().message();
  dist::GpuRankGroup group(2);
  std::vector<Status> results(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      setDevice_(r);
      Result<std::unique_ptr<cuda::Device>> device =
          cuda::Device::open(r, manifest_);
      if (!group.opened(device.ok())) {
        results[size_t(r)] = device.status();
        return;
      }
      Result<dist::GpuRankComms> comms =
          dist::connectGpuRank(*id, r, 2, **device);
      if (!comms) {
        results[size_t(r)] = comms.status();
        return;
      }
      group.add(comms->device);
      if (r == 1) {
        // Rank 1 "fails" before its collective.
        group.abortAll();
      } else {
        std::vector<double> host = {1.0};
        results[0] = comms->host->allReduceSum(host.data(), host.size());
      }
      group.remove(comms->device.get());
      device->reset();
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_FALSE(results[0].ok());
  EXPECT_NE(results[0].message().find("rank 0 of 2 (GPU 0)"), std::string::npos)
      << results[0].message();
  EXPECT_TRUE(results[1].ok()) << results[1].message();
}

// A rank whose GPU does not open: the others learn it before joining NCCL
// (which would wait for it forever).
TEST_F(DistGpuRank, GroupTellsTheOthersWhenAGpuDoesNotOpen) {
  dist::GpuRankGroup group(3);
  std::vector<int> opened(3, -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back(
        [&, r] { opened[size_t(r)] = group.opened(r != 2) ? 1 : 0; });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(opened, std::vector<int>({0, 0, 0}));
  dist::GpuRankGroup fine(2);
  std::vector<std::thread> two;
  for (int r = 0; r < 2; ++r)
    two.emplace_back([&, r] { opened[size_t(r)] = fine.opened(true); });
  for (std::thread &t : two)
    t.join();
  EXPECT_EQ(opened[0], 1);
  EXPECT_EQ(opened[1], 1);
}

// The same on the machine's GPUs (up to 4) with real NCCL, where there are
// both (skipped elsewhere, and where MODELC_LIBCUDA or MODELC_LIBNCCL is
// set): a program without kernels whose fwd_bwd is the AllReduce step
// alone, reducing eagerly, captured with NCCL inside the graph, and
// replayed, then a non-reducing run, and a divisor of twice the ranks.
TEST(DistGpuRankGpu, BucketsOnTheMachinesGpus) {
  if (std::getenv("MODELC_LIBCUDA") || std::getenv("MODELC_LIBNCCL"))
    GTEST_SKIP() << "MODELC_LIBCUDA or MODELC_LIBNCCL is set";
  cuda::Probe probe = cuda::probe();
  if (probe.devices == 0)
    GTEST_SKIP() << "no GPU: " << probe.problem;
  Result<const dist::NcclApi *> nccl = dist::loadNccl();
  if (!nccl)
    GTEST_SKIP() << nccl.status().message();
  GpuProgramSpec spec;
  spec.kernels.clear();
  spec.functions = {
      {"fwd_bwd",
       {TestStep::allReduce(0, {{kF32Offset, kF32Count * 4, fb::DType::F32},
                                {kF64Offset, kF64Count * 8, fb::DType::F64}})}},
      {"update", {}}};
  Manifest m = loadGpuManifest(spec);
  for (int size = 1; size <= std::min(probe.devices, 4); size *= 2)
    for (double divisor : {double(size), 2.0 * size}) {
      SCOPED_TRACE(fmt::format("{} GPU(s), divisor {}", size, divisor));
      Result<dist::NcclId> id = dist::createNcclId();
      ASSERT_TRUE(id.ok()) << id.status().message();
      std::vector<std::string> failures(static_cast<size_t>(size));
      std::vector<std::thread> threads;
      for (int r = 0; r < size; ++r)
        threads.emplace_back([&, r] {
          failures[size_t(r)] =
              runRank(m, *id, r, size, divisor, {true, true, true, false, true},
                      nullptr);
        });
      for (std::thread &t : threads)
        t.join();
      for (const std::string &f : failures)
        EXPECT_EQ(f, "");
    }
}

} // namespace
} // namespace modelc::rt::test
