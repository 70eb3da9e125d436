// Interoperability with numpy and the safetensors package themselves, when
// python3 can import them: files they write (np.save, np.savez,
// np.savez_compressed, safetensors.numpy.save_file) read here, and files
// written here read by them. Skipped where they are missing.
#include "runtime/io/Npy.h"
#include "runtime/io/Safetensors.h"

#include "io_TestSupport.h"

#include <cstring>

namespace modelc::rt {
namespace {

using test::ScratchDir;

/// The first of python3 on PATH and Debian's /usr/bin/python3 (which
/// python3-numpy serves) that can import `module`, or "" when none can.
std::string pythonWith(const char *module) {
  for (const char *python : {"python3", "/usr/bin/python3"})
    if (std::system((std::string(python) + " -c 'import " + module +
                     "' >/dev/null 2>&1")
                        .c_str()) == 0)
      return python;
  return "";
}

bool canImport(const char *module) { return !pythonWith(module).empty(); }

class NumpyInteropTest : public testing::Test {
protected:
  void SetUp() override {
    static const bool available = canImport("numpy");
    if (!available)
      GTEST_SKIP() << "python3 with numpy is not available";
  }
  /// Runs a Python script with the scratch directory as sys.argv[1].
  int runPython(const std::string &script) {
    std::string path = dir_.path("script.py");
    test::writeBytes(path,
                     "import sys, numpy as np\nd = sys.argv[1]\n" + script);
    static const std::string python = pythonWith("numpy");
    return std::system((python + " " + path + " " + dir_.path("")).c_str());
  }
  ScratchDir dir_;
};

template <typename T> std::vector<T> values(const NpyArray &array) {
  std::vector<T> out(array.bytes.size() / sizeof(T));
  std::memcpy(out.data(), array.bytes.data(), array.bytes.size());
  return out;
}

TEST_F(NumpyInteropTest, ArraysNumpyWritesAreRead) {
  ASSERT_EQ(runPython(R"(
np.save(d + 'a.npy', np.arange(12, dtype='<f4').reshape(3, 4))
np.save(d + 'b.npy', np.array([True, False, True]))
np.save(d + 'h.npy', np.float16(1.5))
np.save(d + 'f.npy', np.asfortranarray(np.ones((2, 3), np.float32)))
np.savez(d + 'c.npz', x=np.arange(6, dtype=np.int64).reshape(2, 3),
         y=np.array([7, 9], dtype=np.uint16))
np.savez_compressed(d + 'z.npz', x=np.arange(1000, dtype=np.float64))
)"),
            0);
  Result<NpyArray> a = readNpy(dir_.path("a.npy"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values<float>(*a)[11], 11.0f);
  Result<NpyArray> b = readNpy(dir_.path("b.npy"));
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->dtype, DType::Bool);
  EXPECT_EQ(b->bytes, (std::vector<uint8_t>{1, 0, 1}));
  Result<NpyArray> h = readNpy(dir_.path("h.npy"));
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->dtype, DType::F16);
  EXPECT_TRUE(h->shape.empty());
  EXPECT_EQ(values<uint16_t>(*h)[0], 0x3e00); // 1.5 in binary16
  EXPECT_TRUE(
      test::failsWith(readNpy(dir_.path("f.npy")), "f.npy", "fortran_order"));

  Result<NpyArray> x = readNpzMember(dir_.path("c.npz"), "x");
  ASSERT_TRUE(x.ok()) << x.status().message();
  EXPECT_EQ(values<int64_t>(*x), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  Result<NpyArray> y = readNpzMember(dir_.path("c.npz"), "y");
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(values<uint16_t>(*y), (std::vector<uint16_t>{7, 9}));
  Result<NpyArray> z = readNpzMember(dir_.path("z.npz"), "x");
  ASSERT_TRUE(z.ok()) << z.status().message();
  EXPECT_EQ(values<double>(*z)[999], 999.0);
}

TEST_F(NumpyInteropTest, FilesWrittenHereAreReadByNumpy) {
  std::vector<float> matrix = {1.5f, -2.0f, 0.25f, 4.0f, 5.0f, 6.0f};
  std::vector<int32_t> labels = {3, 1, 4};
  std::vector<uint8_t> mask = {1, 0};
  ASSERT_TRUE(
      writeNpy(dir_.path("m.npy"), DType::F32, {2, 3}, matrix.data()).ok());
  ASSERT_TRUE(
      writeNpz(dir_.path("o.npz"), {{"label", {DType::I32, {3}, labels.data()}},
                                    {"mask", {DType::Bool, {2}, mask.data()}}})
          .ok());
  EXPECT_EQ(runPython(R"(
m = np.load(d + 'm.npy')
assert m.dtype == np.float32 and m.shape == (2, 3), m
assert (m == np.array([[1.5, -2, 0.25], [4, 5, 6]], np.float32)).all()
with np.load(d + 'o.npz') as o:
    assert sorted(o.files) == ['label', 'mask'], o.files
    assert o['label'].dtype == np.int32 and list(o['label']) == [3, 1, 4]
    assert o['mask'].dtype == np.bool_ and list(o['mask']) == [True, False]
)"),
            0);
}

class SafetensorsInteropTest : public NumpyInteropTest {
protected:
  void SetUp() override {
    NumpyInteropTest::SetUp();
    if (IsSkipped())
      return;
    static const bool available = canImport("safetensors.numpy");
    if (!available)
      GTEST_SKIP() << "python3 with safetensors is not available";
  }
};

TEST_F(SafetensorsInteropTest, RoundTripThroughTheReferenceImplementation) {
  std::vector<float> weight = {1, 2, 3, 4, 5, 6};
  int64_t step = 42;
  ASSERT_TRUE(
      writeSafetensors(dir_.path("ours.safetensors"),
                       {{"fc1.weight", DType::F32, {2, 3}, weight.data(), 24},
                        {"step", DType::I64, {}, &step, 8}},
                       {{"format", "pt"}})
          .ok());
  ASSERT_EQ(runPython(R"(
from safetensors.numpy import load_file, save_file
from safetensors import safe_open
t = load_file(d + 'ours.safetensors')
assert t['fc1.weight'].dtype == np.float32 and t['fc1.weight'].shape == (2, 3)
assert list(t['fc1.weight'].ravel()) == [1, 2, 3, 4, 5, 6]
assert t['step'].shape == () and t['step'] == 42
with safe_open(d + 'ours.safetensors', 'np') as f:
    assert f.metadata() == {'format': 'pt'}, f.metadata()
save_file({'b': np.arange(3, dtype=np.uint8),
           'a': np.ones((2, 2), np.float16)}, d + 'theirs.safetensors')
)"),
            0);
  Result<std::vector<TensorData>> theirs =
      readSafetensors(dir_.path("theirs.safetensors"));
  ASSERT_TRUE(theirs.ok()) << theirs.status().message();
  ASSERT_EQ(theirs->size(), 2u);
  for (const TensorData &tensor : *theirs) {
    if (tensor.name == "a") {
      EXPECT_EQ(tensor.dtype, DType::F16);
      EXPECT_EQ(tensor.shape, (std::vector<int64_t>{2, 2}));
    } else {
      EXPECT_EQ(tensor.name, "b");
      EXPECT_EQ(tensor.bytes, (std::vector<uint8_t>{0, 1, 2}));
    }
  }
}

} // namespace
} // namespace modelc::rt
