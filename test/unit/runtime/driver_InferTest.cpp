// The infer command: rows in batches of the entry's batch with the last one
// zero-padded and the padding dropped, .npy/.npz inputs and outputs, and
// every mismatch between the files and the entry as a usage error; outputs
// in their own dtype (bf16 as f32).
#include "driver_TestProgram.h"

#include "runtime/io/Npy.h"

namespace modelc::rt::test {
namespace {

class DriverInfer : public DriverTest {
protected:
  void SetUp() override {
    DriverTest::SetUp();
    writeWeights(path("w.safetensors"), 2.0f, -1.0f, 0.5f);
  }
  // Writes x f32[rows, 2] with x[i] = (i, i / 2).
  std::vector<float> writeX(const std::string &file, int64_t rows) {
    std::vector<float> x;
    for (int64_t i = 0; i < rows; ++i)
      x.insert(x.end(), {float(i), float(i) / 2});
    EXPECT_TRUE(writeNpy(path(file), DType::F32, {rows, 2}, x.data()).ok());
    return x;
  }
  RunResult infer(const std::string &entry, const std::string &input,
                  const std::string &output) {
    return run({"infer", entry, "--weights", path("w.safetensors"), "--input",
                input, "--output", path(output)});
  }
  static float expected(int64_t i) { return 2.0f * i - float(i) / 2 + 0.5f; }
};

TEST_F(DriverInfer, LastBatchIsPaddedAndThePaddingDropped) {
  for (int64_t rows : {10, 8, 3}) {
    writeX("x.npy", rows);
    RunResult r = infer("predict1", "x=" + path("x.npy"), "y.npy");
    ASSERT_EQ(r.code, 0) << r.err;
    Result<NpyArray> y = readNpy(path("y.npy"));
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(y->dtype, DType::F32);
    EXPECT_EQ(y->shape, (std::vector<int64_t>{rows}));
    const float *v = reinterpret_cast<const float *>(y->bytes.data());
    for (int64_t i = 0; i < rows; ++i)
      EXPECT_EQ(v[i], expected(i)) << "row " << i << " of " << rows;
  }
}

TEST_F(DriverInfer, SeveralOutputsGoToAnNpzByName) {
  std::vector<float> x = writeX("x.npy", 5);
  ASSERT_TRUE(
      writeNpz(path("in.npz"), {{"features", {DType::F32, {5, 2}, x.data()}}})
          .ok());
  RunResult r =
      infer("predict", "x=" + path("in.npz") + ":features", "out.npz");
  ASSERT_EQ(r.code, 0) << r.err;
  Result<NpyArray> y = readNpzMember(path("out.npz"), "y");
  Result<NpyArray> y2 = readNpzMember(path("out.npz"), "y2");
  ASSERT_TRUE(y.ok() && y2.ok());
  EXPECT_EQ(y2->shape, (std::vector<int64_t>{5}));
  const float *v = reinterpret_cast<const float *>(y2->bytes.data());
  EXPECT_EQ(v[4], 2 * expected(4));
  RunResult npy = infer("predict", "x=" + path("x.npy"), "out.npy");
  EXPECT_EQ(npy.code, 2);
  EXPECT_NE(npy.err.find("infer entry 'predict' has 2 outputs; write them to a "
                         ".npz"),
            std::string::npos)
      << npy.err;
}

TEST_F(DriverInfer, OutputsKeepTheirDtypeButBf16IsWrittenAsF32) {
  writeX("x.npy", 5); // y2 = 2 y = 3 i + 1: exact in every dtype below
  for (DType dtype : {DType::I32, DType::F64, DType::BF16}) {
    options.y2DType = dtype;
    RunResult r = infer("predict", "x=" + path("x.npy"), "out.npz");
    ASSERT_EQ(r.code, 0) << r.err;
    Result<NpyArray> y2 = readNpzMember(path("out.npz"), "y2");
    ASSERT_TRUE(y2.ok());
    ASSERT_EQ(y2->shape, (std::vector<int64_t>{5}));
    for (int64_t i = 0; i < 5; ++i) {
      double v = 0;
      if (dtype == DType::I32) {
        ASSERT_EQ(y2->dtype, DType::I32);
        v = reinterpret_cast<const int32_t *>(y2->bytes.data())[i];
      } else if (dtype == DType::F64) {
        ASSERT_EQ(y2->dtype, DType::F64);
        v = reinterpret_cast<const double *>(y2->bytes.data())[i];
      } else {
        ASSERT_EQ(y2->dtype, DType::F32);
        v = reinterpret_cast<const float *>(y2->bytes.data())[i];
      }
      EXPECT_EQ(v, 3.0 * double(i) + 1) << dtypeName(dtype) << " row " << i;
    }
  }
}

TEST_F(DriverInfer, InputsMustMatchTheEntry) {
  std::vector<double> wide(30);
  ASSERT_TRUE(writeNpy(path("f64.npy"), DType::F64, {15, 2}, wide.data()).ok());
  RunResult dtype = infer("", "x=" + path("f64.npy"), "y.npz");
  EXPECT_EQ(dtype.code, 2);
  EXPECT_NE(dtype.err.find("expected f32[rows, 2], found f64[15, 2]"),
            std::string::npos)
      << dtype.err;
  std::vector<float> three(30);
  ASSERT_TRUE(writeNpy(path("x3.npy"), DType::F32, {10, 3}, three.data()).ok());
  EXPECT_EQ(infer("", "x=" + path("x3.npy"), "y.npz").code, 2);
  RunResult unknown = infer("", "z=" + path("x3.npy"), "y.npz");
  EXPECT_NE(unknown.err.find("infer entry 'predict' has no input 'z'; its "
                             "inputs are: x"),
            std::string::npos)
      << unknown.err;
  writeX("x.npy", 2);
  RunResult twice = run({"infer", "--weights", path("w.safetensors"), "--input",
                         "x=" + path("x.npy"), "--input", "x=" + path("x.npy"),
                         "--output", path("y.npz")});
  EXPECT_NE(twice.err.find("given twice"), std::string::npos) << twice.err;
  RunResult ext = infer("", "x=" + path("x.txt"), "y.npz");
  EXPECT_NE(ext.err.find("expected a .npy file"), std::string::npos) << ext.err;
  RunResult out = infer("", "x=" + path("x.npy"), "y.csv");
  EXPECT_NE(out.err.find("expected a .npy or .npz path"), std::string::npos);
  for (const RunResult *r : {&unknown, &twice, &ext, &out})
    EXPECT_EQ(r->code, 2);
}

TEST_F(DriverInfer, WeightsMustHoldEveryParameter) {
  writeX("x.npy", 2);
  RunResult r = run({"infer", "--weights", path("none.safetensors"), "--input",
                     "x=" + path("x.npy"), "--output", path("y.npz")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("none.safetensors"), std::string::npos) << r.err;
}

} // namespace
} // namespace modelc::rt::test
