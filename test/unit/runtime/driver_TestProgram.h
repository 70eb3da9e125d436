// A hand-written stand-in for a compiled program, for the driver's tests:
// linear regression y = w·x + b (params fc.weight f32[1, 2], fc.bias f32[1],
// or f64 as modelc --widen-f64 makes them) with fwd_bwd (with a
// dropout-like mask from seed and rng_counter), SGD with momentum as update,
// eval, and two infer entries, plus its manifest built with
// FlatBufferBuilder and its data as .npy files.
#pragma once

#include "runtime/driver/Driver.h"
#include "runtime/io/DType.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace modelc::rt::test {

/// The settings of the test program's train entry "fit" and its manifest.
struct ProgramOptions {
  int64_t batch = 4, accumulate = 1, epochs = 2, steps = 0, seed = 0;
  bool shuffle = true;
  bool withEval = true;
  int64_t evalEvery = 0, evalSteps = 0;
  int64_t checkpointEvery = 0, checkpointKeep = 0;
  std::string checkpointDir;
  int64_t logEvery = 5;
  std::string trainX, trainY, evalX, evalY; // .npy paths
  std::string sourceHash = "5e1f00d5a3c1b2e4f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b";
  std::vector<std::string> targets = {"cpu"};
  /// Adds a GPU section (GpuProgram) like the cuda target's; put "cuda" in
  /// `targets` too.
  bool withGpu = false;
  /// As `modelc --widen-f64` compiles it: parameters, gradients, optimizer
  /// state and outputs are f64; inputs stay f32.
  bool f64 = false;
  /// fwd_bwd's bias gradient lacks the factor 2 of d(err²)/d(err).
  bool wrongBiasGradient = false;
  /// The dtype of predict's second output y2 = 2y (default: the
  /// parameters').
  std::optional<DType> y2DType;
};

/// The manifest bytes of the test program.
std::vector<uint8_t> buildManifest(const ProgramOptions &options);

/// The function table the manifest's indices refer to.
const modelc_fn *testFunctions();
size_t numTestFunctions();

/// When non-zero, fwd_bwd raises `signal` when rng_counter reaches it.
void raiseSignalAt(uint64_t rngCounter, int signal);

/// When non-zero, fwd_bwd calls `action` when rng_counter reaches it.
void runAt(uint64_t rngCounter, std::function<void()> action);

struct RunResult {
  int code = 0;
  std::string out, err;
};

/// A scratch directory with the test data: x.npy f32[40, 2], y.npy f32[40]
/// (y = 3 x0 - 2 x1 + 0.5 + noise), eval_x.npy f32[10, 2], eval_y.npy f32[10].
class DriverTest : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  /// Runs the program built from `options` with `args` after the name.
  RunResult run(const std::vector<std::string> &args);
  RunResult run(const ProgramOptions &opts,
                const std::vector<std::string> &args);
  /// Runs an already built manifest. buildManifest sets the test
  /// program's layout, which its functions read: runs at once in threads
  /// share one manifest built before them.
  RunResult runBuilt(const std::vector<uint8_t> &manifest,
                     const std::vector<std::string> &args);
  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  /// Writes a safetensors file of the two parameters.
  void writeWeights(const std::string &file, float w0, float w1, float b);

  ProgramOptions options;
  bool terminal = false;           // what the program is told about its stdout
  std::vector<float> evalX, evalY; // as written to eval_x/eval_y.npy

private:
  std::string dir_;
};

std::string readFile(const std::string &path);

/// Lines of `text` that start with `prefix`.
std::vector<std::string> linesStartingWith(const std::string &text,
                                           const std::string &prefix);

} // namespace modelc::rt::test
