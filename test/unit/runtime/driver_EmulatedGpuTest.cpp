// The driver's GPU path without a GPU. An emulated device stands in for
// cuda::Device (through setGpuBackendForTesting): it has memory of its own,
// and its "kernels" are the program's CPU functions run on that memory. So
// training, eval, infer, checkpoints and resume through the device path
// (pushes, uploads, staged batches, downloads, pulls) must give exactly
// what the CPU path gives: a byte the driver forgets to send or to fetch
// makes them differ. Stream order is modelled by running each call at once,
// which is what a real stream's ordering guarantees for one stream.
// `--gpus N` joins its ranks over the fake libnccl (fake/FakeNccl.cpp),
// which reduces host memory as the emulated devices' memory is.
#include "cuda_TestProgram.h"
#include "TestPorts.h"
#include "driver_TestProgram.h"

#include "runtime/cuda/Device.h"
#include "runtime/driver/Devices.h"
#include "runtime/driver/Manifest.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace modelc::rt::test {
namespace {

/// What the devices were asked to do, in order: "up OFFSET BYTES",
/// "run SYMBOL", "down OFFSET BYTES" (GPU 0's only).
std::vector<std::string> deviceLog;
/// The fake libnccl's "current GPU" of the calling thread, which a device
/// sets when it makes its context current.
void (*setNcclDevice)(int) = nullptr;

class EmulatedDevice final : public cuda::Device {
public:
  EmulatedDevice(const Manifest &m, int ordinal)
      : memory_(std::max<uint64_t>(m.arenaBytes, 64), 0),
        functions_(m.functions), ordinal_(ordinal) {}

  std::string description() const override {
    return fmt::format("GPU {}: emulated", ordinal_);
  }
  uint64_t arenaBytes() const override { return memory_.size(); }
  size_t kernelCount() const override { return 0; }

  Status upload(uint64_t offset, const void *src, uint64_t bytes) override {
    MODELC_RETURN_IF_ERROR(check(offset, bytes));
    std::memcpy(memory_.data() + offset, src, bytes);
    log(fmt::format("up {} {}", offset, bytes));
    return Status();
  }
  Status download(uint64_t offset, void *dst, uint64_t bytes) override {
    MODELC_RETURN_IF_ERROR(check(offset, bytes));
    std::memcpy(dst, memory_.data() + offset, bytes);
    log(fmt::format("down {} {}", offset, bytes));
    return Status();
  }
  Status run(size_t index) override {
    if (index >= functions_.size())
      return Status::error("emulated device: no function " +
                               std::to_string(index),
                           kExitInternal);
    functions_[index].fn(memory_.data());
    log("run " + functions_[index].symbol);
    return Status();
  }
  Status runStep(size_t, size_t) override {
    return Status::error("emulated device: no steps", kExitInternal);
  }
  Status synchronize() override { return Status(); }
  // The program's all-reduces are its CPU functions' (RankContext).
  Status setReducer(cuda::BucketReducer *) override { return Status(); }
  int ordinal() const override { return ordinal_; }
  CUstream_st *stream() const override { return nullptr; }
  uint64_t arenaAddress() const override {
    return uint64_t(uintptr_t(memory_.data()));
  }
  Status makeCurrent() const override {
    if (setNcclDevice)
      setNcclDevice(ordinal_);
    return Status();
  }

private:
  void log(std::string what) {
    if (ordinal_ == 0)
      deviceLog.push_back(std::move(what));
  }

  Status check(uint64_t offset, uint64_t bytes) const {
    if (offset <= memory_.size() && bytes <= memory_.size() - offset)
      return Status();
    return Status::error(fmt::format("emulated device: {} bytes at {} lie "
                                     "outside the arena",
                                     bytes, offset),
                         kExitInternal);
  }

  std::vector<uint8_t> memory_;
  std::vector<FunctionInfo> functions_;
  int ordinal_;
};

const GpuBackend emulated{[] {
                            return cuda::Probe{2, ""};
                          },
                          [](int ordinal, const Manifest &m)
                              -> Result<std::unique_ptr<cuda::Device>> {
                            return std::unique_ptr<cuda::Device>(
                                std::make_unique<EmulatedDevice>(m, ordinal));
                          }};

/// Step and eval lines without their throughput, which differs run to run.
std::string withoutThroughput(const std::string &out) {
  return std::regex_replace(out, std::regex(" samples/s [0-9.e+]+"), "");
}

class EmulatedGpu : public DriverTest {
protected:
  void SetUp() override {
    DriverTest::SetUp();
    nccl_ = dlopen(MODELC_FAKE_NCCL, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(nccl_, nullptr) << dlerror();
    setNcclDevice =
        reinterpret_cast<void (*)(int)>(dlsym(nccl_, "fakeNcclSetDevice"));
    ASSERT_NE(setNcclDevice, nullptr);
    setGpuBackendForTesting(&emulated);
    options.targets = {"cuda", "cpu"};
    options.withGpu = true;
    deviceLog.clear();
  }
  void TearDown() override {
    setGpuBackendForTesting(nullptr);
    setNcclDevice = nullptr;
    if (nccl_)
      dlclose(nccl_);
    DriverTest::TearDown();
  }

  // `--gpus` joins NCCL (the fake), whose host communicator copies through
  // the (fake) driver.
  ScopedEnv libnccl_{"MODELC_LIBNCCL", MODELC_FAKE_NCCL};
  ScopedEnv libcuda_{"MODELC_LIBCUDA", MODELC_FAKE_CUDA};
  ScopedEnv timeout_{"FAKE_NCCL_TIMEOUT_MS", "20000"};
  void *nccl_ = nullptr;

  /// The offset of the test program's buffer `name` in the arena.
  uint64_t offsetOf(const std::string &name) {
    std::vector<uint8_t> bytes = buildManifest(options);
    Result<Manifest> m = Manifest::load(bytes.data(), bytes.size(),
                                        testFunctions(), numTestFunctions());
    EXPECT_TRUE(m.ok());
    for (const BufferInfo &b : m->buffers)
      if (b.name == name)
        return b.offset;
    ADD_FAILURE() << "no buffer " << name;
    return 0;
  }

  /// Trains on the CPU and on the emulated GPU with `args`: the same step
  /// and eval lines and bitwise the same parameters.
  void expectSameTraining(const std::vector<std::string> &args) {
    std::vector<std::string> cpu = args, gpu = args;
    cpu.insert(cpu.end(), {"--cpu", "--save", path("cpu.safetensors")});
    gpu.insert(gpu.end(), {"--gpus", "1", "--save", path("gpu.safetensors")});
    RunResult onCpu = run(cpu);
    ASSERT_EQ(onCpu.code, 0) << onCpu.err;
    deviceLog.clear();
    RunResult onGpu = run(gpu);
    ASSERT_EQ(onGpu.code, 0) << onGpu.err;
    EXPECT_NE(onGpu.err.find("GPU 0: emulated"), std::string::npos)
        << onGpu.err;
    EXPECT_EQ(withoutThroughput(onCpu.out), withoutThroughput(onGpu.out));
    EXPECT_EQ(readFile(path("cpu.safetensors")),
              readFile(path("gpu.safetensors")));
  }
};

TEST_F(EmulatedGpu, TrainsExactlyAsTheCpu) {
  options.logEvery = 1;
  expectSameTraining({});
  ASSERT_FALSE(HasFailure());
  // Parameters come back only for --save: one pull of the persistent region.
  EXPECT_FALSE(deviceLog.empty());
}

TEST_F(EmulatedGpu, AccumulationEvalEveryAndSparseLogsTrainExactlyAsTheCpu) {
  options.accumulate = 2;
  options.evalEvery = 3;
  options.logEvery = 4;
  expectSameTraining({"--epochs", "3"});
}

// While the device runs a step's fwd_bwd, the host sends the next batch:
// the upload of x comes between that run and the download of its loss.
// Update's outputs (lr, grad norm) come back only on logged steps.
TEST_F(EmulatedGpu, SendsTheNextBatchDuringTheStep) {
  options.withEval = false;
  options.logEvery = 5;
  options.epochs = 2; // 20 steps of batch 4
  ASSERT_EQ(run({"--gpus", "1"}).code, 0);
  std::string upX = fmt::format("up {} ", offsetOf("fit:in:x"));
  std::string downLoss = fmt::format("down {} ", offsetOf("fit:out:loss"));
  std::string downLr = fmt::format("down {} ", offsetOf("fit:out:lr"));
  int staged = 0, fetchedLr = 0, steps = 0;
  for (size_t i = 0; i < deviceLog.size(); ++i) {
    if (deviceLog[i].rfind(downLr, 0) == 0)
      ++fetchedLr;
    if (deviceLog[i].find("fwd_bwd") == std::string::npos)
      continue;
    ++steps;
    for (size_t j = i + 1; j < deviceLog.size(); ++j) {
      if (deviceLog[j].rfind(downLoss, 0) == 0)
        break;
      if (deviceLog[j].rfind(upX, 0) == 0)
        ++staged;
    }
  }
  EXPECT_EQ(steps, 20);
  EXPECT_EQ(staged, 19); // every step but the last
  EXPECT_EQ(fetchedLr, 4);
}

TEST_F(EmulatedGpu, CheckpointAndResumeAreBitwiseIdentical) {
  options.accumulate = 2;
  RunResult full =
      run({"--gpus", "1", "--epochs", "3", "--save", path("full.safetensors")});
  ASSERT_EQ(full.code, 0) << full.err;
  // SIGTERM during step 7 (its first micro-batch): step 7 ends, its
  // checkpoint is written, and the batch fetched ahead for step 8 is not
  // counted.
  raiseSignalAt(13, SIGTERM);
  RunResult stopped = run({"--gpus", "1", "--epochs", "3", "--checkpoint-dir",
                           path("ck"), "--checkpoint-every", "3"});
  raiseSignalAt(0, 0);
  ASSERT_EQ(stopped.code, 143) << stopped.err;
  // A checkpoint written on the device resumes on the CPU too.
  RunResult onCpu = run({"--cpu", "--epochs", "3", "--resume", path("ck"),
                         "--save", path("cpu.safetensors")});
  ASSERT_EQ(onCpu.code, 0) << onCpu.err;
  EXPECT_EQ(readFile(path("full.safetensors")),
            readFile(path("cpu.safetensors")));
  RunResult resumed = run({"--gpus", "1", "--epochs", "3", "--resume",
                           path("ck"), "--save", path("resumed.safetensors")});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(readFile(path("full.safetensors")),
            readFile(path("resumed.safetensors")));
}

TEST_F(EmulatedGpu, EvalAndInferGiveTheCpuResults) {
  writeWeights(path("w.safetensors"), 2.0f, -1.0f, 0.5f);
  for (const char *device : {"--cpu", "--gpus"}) {
    std::vector<std::string> flags{device};
    if (std::string(device) == "--gpus")
      flags.push_back("1");
    std::string tag = device + 2;
    std::vector<std::string> eval{"eval", "--weights", path("w.safetensors")};
    eval.insert(eval.end(), flags.begin(), flags.end());
    RunResult e = run(eval);
    ASSERT_EQ(e.code, 0) << e.err;
    std::ofstream(path("eval-" + tag + ".txt")) << e.out;
    std::vector<std::string> infer{"infer",     "predict1",
                                   "--weights", path("w.safetensors"),
                                   "--input",   "x=" + path("eval_x.npy"),
                                   "--output",  path("y-" + tag + ".npy")};
    infer.insert(infer.end(), flags.begin(), flags.end());
    RunResult i = run(infer);
    ASSERT_EQ(i.code, 0) << i.err;
  }
  EXPECT_EQ(readFile(path("eval-cpu.txt")), readFile(path("eval-gpus.txt")));
  EXPECT_FALSE(readFile(path("eval-cpu.txt")).empty());
  EXPECT_EQ(readFile(path("y-cpu.npy")), readFile(path("y-gpus.npy")));
}

// `--gpus 2`: a rank per GPU, as threads over NCCL, trains as two CPU
// ranks over Gloo: the same slices of each global batch, the same averaged
// losses and eval, rank 0's parameters and checkpoint.
TEST_F(EmulatedGpu, TwoGpusTrainAsTwoCpuRanks) {
  options.logEvery = 1;
  options.epochs = 2;
  RunResult cpu = run({"--cpu", "--ranks", "2", "--save", path("cpu.st")});
  ASSERT_EQ(cpu.code, 0) << cpu.err;
  RunResult gpu = run({"--gpus", "2", "--save", path("gpu.st"),
                       "--checkpoint-dir", path("ck")});
  ASSERT_EQ(gpu.code, 0) << gpu.err;
  EXPECT_NE(gpu.err.find("ranks 2"), std::string::npos) << gpu.err;
  EXPECT_NE(gpu.err.find("GPU ranks over NCCL 2."), std::string::npos)
      << gpu.err;
  EXPECT_EQ(withoutThroughput(cpu.out), withoutThroughput(gpu.out));
  EXPECT_EQ(readFile(path("cpu.st")), readFile(path("gpu.st")));
  // GPUs named by number train the same.
  RunResult named = run({"--gpus", "1,0", "--save", path("named.st")});
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_EQ(withoutThroughput(cpu.out), withoutThroughput(named.out));
}

// Two nodes of one GPU each (`--nnodes 2`; here two runs in threads of
// the test, as the fake libnccl's ranks must share a process) meet through
// the store, which carries the NCCL id, and train as two CPU ranks.
TEST_F(EmulatedGpu, TwoNodesOfOneGpuTrainAsTwoCpuRanks) {
  options.logEvery = 1;
  options.epochs = 2;
  RunResult cpu = run({"--cpu", "--ranks", "2", "--save", path("cpu.st")});
  ASSERT_EQ(cpu.code, 0) << cpu.err;
  std::string master = "127.0.0.1:" + std::to_string(freePort());
  std::vector<uint8_t> manifest = buildManifest(options);
  RunResult nodes[2];
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      std::vector<std::string> args{
          "--gpus",      i == 0 ? "0," : "1,", "--nnodes", "2",
          "--node-rank", std::to_string(i),    "--master", master};
      if (i == 0)
        args.insert(args.end(), {"--save", path("nodes.st")});
      nodes[i] = runBuilt(manifest, args);
    });
  for (std::thread &t : threads)
    t.join();
  ASSERT_EQ(nodes[0].code, 0) << nodes[0].err;
  ASSERT_EQ(nodes[1].code, 0) << nodes[1].err;
  EXPECT_EQ(withoutThroughput(cpu.out), withoutThroughput(nodes[0].out));
  EXPECT_EQ(readFile(path("cpu.st")), readFile(path("nodes.st")));
}

// A node that never comes: the other, its GPU open, waits in the store
// (not in NCCL's join, which has no timeout) and gives up after --timeout,
// naming it.
TEST_F(EmulatedGpu, ANodeMissingTimesOutBeforeNccl) {
  std::string master = "127.0.0.1:" + std::to_string(freePort());
  RunResult alone = run({"--gpus", "0,", "--nnodes", "2", "--node-rank", "0",
                         "--master", master, "--timeout", "2"});
  EXPECT_EQ(alone.code, 4) << alone.err;
  EXPECT_NE(alone.err.find("node 1 (its GPUs) did not join"), std::string::npos)
      << alone.err;
}

// One GPU where NCCL is missing trains alone, after a note; two cannot.
TEST_F(EmulatedGpu, WithoutNcclOneGpuTrainsAloneAndTwoAreRefused) {
  ScopedEnv missing("MODELC_LIBNCCL", "/nonexistent/libnccl.so.2");
  options.logEvery = 1;
  RunResult one = run({"--gpus", "1"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.err.find("note: GPU ranks use NCCL, which could not be "
                         "loaded (MODELC_LIBNCCL=/nonexistent/libnccl.so.2"),
            std::string::npos)
      << one.err;
  EXPECT_NE(one.err.find("; one GPU trains without it"), std::string::npos)
      << one.err;
  RunResult two = run({"--gpus", "2"});
  EXPECT_EQ(two.code, 2) << two.err;
  EXPECT_NE(two.err.find("GPU ranks use NCCL"), std::string::npos) << two.err;
}

// Only train runs on several GPUs; a GPU that is not there is named.
TEST_F(EmulatedGpu, SeveralGpusAreForTrainOnly) {
  writeWeights(path("w.safetensors"), 2.0f, -1.0f, 0.5f);
  RunResult e =
      run({"eval", "--weights", path("w.safetensors"), "--gpus", "2"});
  EXPECT_EQ(e.code, 2);
  EXPECT_NE(e.err.find("--gpus 2: 2 GPUs asked, but only train runs on "
                       "several GPUs"),
            std::string::npos)
      << e.err;
  RunResult missing = run({"--gpus", "0,3"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("--gpus 0,3: there is no GPU 3 (this machine "
                             "has 2)"),
            std::string::npos)
      << missing.err;
}

} // namespace
} // namespace modelc::rt::test
