// Programs compiled with `modelc --widen-f64`: f64 parameters, gradients,
// optimizer state and outputs (inputs stay f32) through initialisers,
// training, --save/--init, checkpoints and resume, eval and infer.
#include "driver_TestProgram.h"

#include "runtime/io/Npy.h"
#include "runtime/io/Safetensors.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>

namespace modelc::rt::test {
namespace {

template <typename T> std::vector<T> values(const std::vector<uint8_t> &b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

class DriverF64 : public DriverTest {
protected:
  void SetUp() override {
    DriverTest::SetUp();
    options.f64 = true;
  }
  void writeWeights64(const std::string &file, double w0, double w1, double b) {
    double w[2] = {w0, w1};
    ASSERT_TRUE(
        writeSafetensors(file, {{"fc.weight", DType::F64, {1, 2}, w, 16},
                                {"fc.bias", DType::F64, {1}, &b, 8}})
            .ok());
  }
};

TEST_F(DriverF64, TrainsAndSavesF64Parameters) {
  RunResult r = run({"--save", path("w.safetensors")});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> steps = linesStartingWith(r.out, "step ");
  ASSERT_EQ(steps.size(), 4u) << r.out;
  auto loss = [](const std::string &l) {
    return std::stod(l.substr(l.find(" loss ") + 6));
  };
  EXPECT_LT(loss(steps.back()), loss(steps.front()));
  EXPECT_EQ(linesStartingWith(r.out, "eval step ").size(), 2u) << r.out;
  Result<std::vector<TensorData>> saved =
      readSafetensors(path("w.safetensors"));
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  ASSERT_EQ(saved->size(), 2u);
  EXPECT_EQ((*saved)[0].dtype, DType::F64);
  EXPECT_EQ((*saved)[0].shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ((*saved)[1].dtype, DType::F64);
  EXPECT_EQ((*saved)[1].bytes.size(), 8u);
}

TEST_F(DriverF64, InitialisersDrawTheSameValuesInDouble) {
  // lr 0: the saved parameters are the initial ones.
  std::vector<std::string> args{"--steps", "1", "--set", "lr=0", "--save"};
  args.push_back(path("wide.safetensors"));
  ASSERT_EQ(run(args).code, 0);
  options.f64 = false;
  args.back() = path("narrow.safetensors");
  ASSERT_EQ(run(args).code, 0);
  Result<std::vector<TensorData>> wide =
      readSafetensors(path("wide.safetensors"));
  Result<std::vector<TensorData>> narrow =
      readSafetensors(path("narrow.safetensors"));
  ASSERT_TRUE(wide.ok() && narrow.ok());
  std::vector<double> w64 = values<double>((*wide)[0].bytes);
  std::vector<float> w32 = values<float>((*narrow)[0].bytes);
  ASSERT_EQ(w64.size(), 2u);
  for (size_t i = 0; i < w64.size(); ++i) {
    EXPECT_EQ(float(w64[i]), w32[i]) << i;
    EXPECT_NE(w64[i], double(w32[i])) << "element " << i << " was rounded";
  }
}

TEST_F(DriverF64, InitTakesF64AndRefusesF32) {
  writeWeights64(path("init.safetensors"), 0.1, -0.2, 0.3);
  ASSERT_EQ(run({"--init", path("init.safetensors"), "--steps", "2", "--set",
                 "lr=0", "--save", path("out.safetensors")})
                .code,
            0);
  Result<std::vector<TensorData>> out =
      readSafetensors(path("out.safetensors"));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(values<double>((*out)[0].bytes), (std::vector<double>{0.1, -0.2}));
  EXPECT_EQ(values<double>((*out)[1].bytes), (std::vector<double>{0.3}));
  writeWeights(path("f32.safetensors"), 0.1f, -0.2f, 0.3f);
  RunResult r = run({"--init", path("f32.safetensors")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(path("f32.safetensors") +
                       ": fc.weight is f32[1, 2], this model's is f64[1, 2] "
                       "(tensors are not converted between dtypes)"),
            std::string::npos)
      << r.err;
}

TEST_F(DriverF64, CheckpointsHoldF64AndResumeBitwise) {
  options.checkpointEvery = 5;
  options.checkpointDir = path("ck");
  ASSERT_EQ(run({"--save", path("full.safetensors")}).code, 0);
  for (const char *file : {"model", "optimizer"}) {
    Result<std::vector<TensorData>> t = readSafetensors(
        path("ck/step_10/") + file + std::string(".safetensors"));
    ASSERT_TRUE(t.ok()) << t.status().message();
    for (const TensorData &d : *t)
      EXPECT_EQ(d.dtype, DType::F64) << file << " " << d.name;
  }
  std::filesystem::remove_all(path("ck/step_15"));
  std::filesystem::remove_all(path("ck/step_20"));
  RunResult resumed = run({"--resume", "--save", path("resumed.safetensors")});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(readFile(path("full.safetensors")),
            readFile(path("resumed.safetensors")));
}

TEST_F(DriverF64, EvalReadsF64Outputs) {
  writeWeights64(path("w.safetensors"), 1.5, -0.5, 0.25);
  RunResult r = run({"eval", "--weights", path("w.safetensors"), "--log",
                     path("eval.jsonl")});
  ASSERT_EQ(r.code, 0) << r.err;
  // Reference: the f64 sums over the two full batches of the eval set.
  double loss = 0;
  for (size_t i = 0; i < 8; ++i) {
    double err = 1.5 * evalX[2 * i] - 0.5 * evalX[2 * i + 1] + 0.25 - evalY[i];
    loss += err * err / 8;
  }
  nlohmann::json log = nlohmann::json::parse(readFile(path("eval.jsonl")));
  EXPECT_NEAR(log["loss"].get<double>(), loss, 1e-14 * loss);
}

TEST_F(DriverF64, InferWritesF64Outputs) {
  writeWeights64(path("w.safetensors"), 2.0, -1.0, 0.1);
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(writeNpy(path("in.npy"), DType::F32, {3, 2}, x.data()).ok());
  RunResult r =
      run({"infer", "predict1", "--weights", path("w.safetensors"), "--input",
           "x=" + path("in.npy"), "--output", path("y.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  Result<NpyArray> y = readNpy(path("y.npy"));
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->dtype, DType::F64);
  EXPECT_EQ(y->shape, (std::vector<int64_t>{3}));
  std::vector<double> v = values<double>(y->bytes);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(v[i], 2.0 * x[2 * i] - 1.0 * x[2 * i + 1] + 0.1) << i;
}

} // namespace
} // namespace modelc::rt::test
