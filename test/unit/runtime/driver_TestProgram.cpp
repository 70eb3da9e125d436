// The test program of driver_TestProgram.h: its manifest, its "generated"
// functions (written by hand; they read the buffer offsets the manifest
// builder chose), and the fixture that writes its data and runs it.
#include "driver_TestProgram.h"

#include "manifest_generated.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Random.h"
#include "runtime/io/Safetensors.h"

#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <sstream>

namespace modelc::rt::test {

namespace fb = modelc::manifest;

namespace {

const char *const kHypers[] = {
    "step",   "total_steps", "lr",    "weight_decay", "momentum",
    "beta1",  "beta2",       "eps",   "grad_clip",    "warmup",
    "min_lr", "every",       "gamma", "seed",         "rng_counter"};

// Where the builder put each buffer; the functions below read it.
struct Layout {
  std::map<std::string, uint64_t> at; // buffer name -> offset
  int64_t batch = 4, accumulate = 1, inferBatch = 4;
  bool f64 = false, wrongBiasGradient = false;
  DType y2 = DType::F32; // the dtype of predict's output y2
  uint64_t actAt = 0;
  std::function<void()> action;
} layout;

template <typename T> T *at(uint8_t *arena, const std::string &name) {
  return reinterpret_cast<T *>(arena + layout.at.at(name));
}
double hyper(uint8_t *arena, const std::string &key) {
  return *at<double>(arena, "fit:hyper:" + key);
}

// Keeps feature j of sample i unless a hash of (seed, counter, i, j) says to
// drop it (one in eight), scaling kept ones by 8/7 like dropout.
double mask(double seed, double counter, int64_t i, int j) {
  uint64_t h = uint64_t(seed) * 0x9e3779b97f4a7c15ull ^
               uint64_t(counter) * 0xbf58476d1ce4e5b9ull ^
               uint64_t(i * 2 + j) * 0x94d049bb133111ebull;
  h ^= h >> 31;
  h *= 0xd6e9f9b3e8e4a5c1ull;
  h ^= h >> 29;
  return (h & 7) == 0 ? 0.0 : 8.0 / 7.0;
}

// Inputs are f32 in both variants (modelc --widen-f64 keeps the data's dtype).
template <typename T> void fwdBwd(uint8_t *arena) {
  double counter = hyper(arena, "rng_counter"), seed = hyper(arena, "seed");
  if (layout.actAt && counter == double(layout.actAt) && layout.action)
    layout.action();
  const T *w = at<T>(arena, "fc.weight"), *b = at<T>(arena, "fc.bias");
  const float *x = at<float>(arena, "fit:in:x"),
              *y = at<float>(arena, "fit:in:y");
  int64_t n = layout.batch;
  double loss = 0, mae = 0, dw[2] = {0, 0}, db = 0;
  for (int64_t i = 0; i < n; ++i) {
    double m0 = mask(seed, counter, i, 0), m1 = mask(seed, counter, i, 1);
    double x0 = x[2 * i] * m0, x1 = x[2 * i + 1] * m1;
    double err = w[0] * x0 + w[1] * x1 + b[0] - y[i];
    loss += err * err;
    mae += std::fabs(err);
    dw[0] += 2 * err * x0 / double(n);
    dw[1] += 2 * err * x1 / double(n);
    db += (layout.wrongBiasGradient ? 1 : 2) * err / double(n);
  }
  double scale = 1.0 / double(layout.accumulate);
  T *gw = at<T>(arena, "grad:fc.weight"), *gb = at<T>(arena, "grad:fc.bias");
  gw[0] += T(scale * dw[0]);
  gw[1] += T(scale * dw[1]);
  gb[0] += T(scale * db);
  *at<T>(arena, "fit:out:loss") = T(loss / double(n));
  *at<T>(arena, "fit:out:mae") = T(mae / double(n));
}

// torch.optim.SGD with momentum and weight decay, after clip_grad_norm_.
template <typename T> void update(uint8_t *arena) {
  double lr = hyper(arena, "lr"), momentum = hyper(arena, "momentum");
  double wd = hyper(arena, "weight_decay"), clip = hyper(arena, "grad_clip");
  bool first = hyper(arena, "step") == 1;
  T *p[3] = {at<T>(arena, "fc.weight"), at<T>(arena, "fc.weight") + 1,
             at<T>(arena, "fc.bias")};
  T *g[3] = {at<T>(arena, "grad:fc.weight"), at<T>(arena, "grad:fc.weight") + 1,
             at<T>(arena, "grad:fc.bias")};
  T *buf[3] = {at<T>(arena, "fit:state:momentum.fc.weight"),
               at<T>(arena, "fit:state:momentum.fc.weight") + 1,
               at<T>(arena, "fit:state:momentum.fc.bias")};
  double norm = std::sqrt(double(*g[0]) * *g[0] + double(*g[1]) * *g[1] +
                          double(*g[2]) * *g[2]);
  double factor = clip > 0 && norm > clip ? clip / (norm + 1e-6) : 1.0;
  for (int k = 0; k < 3; ++k) {
    T d = T(*g[k] * factor + wd * *p[k]);
    *buf[k] = first ? d : T(momentum * *buf[k] + d);
    *p[k] = T(*p[k] - lr * *buf[k]);
    *g[k] = 0;
  }
  *at<T>(arena, "fit:out:lr") = T(lr);
  *at<T>(arena, "fit:out:grad_norm") = T(norm);
}

template <typename T> void evalFn(uint8_t *arena) {
  const T *w = at<T>(arena, "fc.weight"), *b = at<T>(arena, "fc.bias");
  const float *x = at<float>(arena, "fit:eval_in:x"),
              *y = at<float>(arena, "fit:eval_in:y");
  double loss = 0, mae = 0;
  for (int64_t i = 0; i < layout.batch; ++i) {
    double err = w[0] * x[2 * i] + w[1] * x[2 * i + 1] + b[0] - y[i];
    loss += err * err;
    mae += std::fabs(err);
  }
  *at<T>(arena, "fit:eval_out:loss") = T(loss / double(layout.batch));
  *at<T>(arena, "fit:eval_out:mae") = T(mae / double(layout.batch));
}

// Stores element i of predict's y2 in its dtype (bf16 rounded to nearest
// even, i32 rounded to nearest).
void storeY2(uint8_t *arena, int64_t i, double v) {
  uint8_t *y2 = arena + layout.at.at("predict:out:y2");
  if (layout.y2 == DType::F64) {
    reinterpret_cast<double *>(y2)[i] = v;
  } else if (layout.y2 == DType::I32) {
    reinterpret_cast<int32_t *>(y2)[i] = int32_t(std::lround(v));
  } else if (layout.y2 == DType::BF16) {
    float f = float(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits += 0x7fff + ((bits >> 16) & 1);
    reinterpret_cast<uint16_t *>(y2)[i] = uint16_t(bits >> 16);
  } else {
    reinterpret_cast<float *>(y2)[i] = float(v);
  }
}

template <typename T>
void inferInto(uint8_t *arena, const std::string &entry, bool both) {
  const T *w = at<T>(arena, "fc.weight"), *b = at<T>(arena, "fc.bias");
  const float *x = at<float>(arena, entry + ":in:x");
  for (int64_t i = 0; i < layout.inferBatch; ++i) {
    T y = w[0] * x[2 * i] + w[1] * x[2 * i + 1] + b[0];
    at<T>(arena, entry + ":out:y")[i] = y;
    if (both)
      storeY2(arena, i, 2 * double(y));
  }
}
template <typename T> void predict(uint8_t *arena) {
  inferInto<T>(arena, "predict", true);
}
template <typename T> void predictOne(uint8_t *arena) {
  inferInto<T>(arena, "predict1", false);
}

// The variant the manifest was built for: f64 when widened.
template <void (*F32)(uint8_t *), void (*F64)(uint8_t *)>
void byDType(uint8_t *arena) {
  layout.f64 ? F64(arena) : F32(arena);
}

const modelc_fn kFunctions[] = {byDType<fwdBwd<float>, fwdBwd<double>>,
                                byDType<update<float>, update<double>>,
                                byDType<evalFn<float>, evalFn<double>>,
                                byDType<predict<float>, predict<double>>,
                                byDType<predictOne<float>, predictOne<double>>};

} // namespace

const modelc_fn *testFunctions() { return kFunctions; }
size_t numTestFunctions() { return std::size(kFunctions); }

void raiseSignalAt(uint64_t rngCounter, int signal) {
  runAt(rngCounter, [signal] { std::raise(signal); });
}

void runAt(uint64_t rngCounter, std::function<void()> action) {
  layout.actAt = rngCounter;
  layout.action = rngCounter ? std::move(action) : nullptr;
}

std::vector<uint8_t> buildManifest(const ProgramOptions &o) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  uint64_t offset = 0;
  layout.at.clear();
  layout.batch = o.batch;
  layout.accumulate = o.accumulate;
  layout.f64 = o.f64;
  layout.wrongBiasGradient = o.wrongBiasGradient;
  layout.y2 = o.y2DType.value_or(o.f64 ? DType::F64 : DType::F32);
  auto add = [&](const std::string &name, fb::Role role, fb::Phase phase,
                 const std::string &entry, const std::string &key,
                 fb::DType dtype, std::vector<int64_t> shape) {
    uint64_t count = 1;
    for (int64_t d : shape)
      count *= uint64_t(d);
    uint64_t bytes = count * dtypeSize(DType(int(dtype)));
    layout.at[name] = offset;
    buffers.push_back(fb::CreateBufferDirect(fbb, name.c_str(), role, phase,
                                             entry.c_str(), key.c_str(), dtype,
                                             &shape, offset, bytes));
    offset += (bytes + 63) / 64 * 64;
    return uint32_t(buffers.size() - 1);
  };
  using R = fb::Role;
  using P = fb::Phase;
  // F: parameters, gradients, state and outputs; inputs are always f32.
  const auto F = o.f64 ? fb::DType::F64 : fb::DType::F32;
  const auto F32 = fb::DType::F32;
  int64_t B = o.batch;
  uint32_t w =
      add("fc.weight", R::Param, P::Shared, "", "fc.weight", F, {1, 2});
  uint32_t b = add("fc.bias", R::Param, P::Shared, "", "fc.bias", F, {1});
  add("grad:fc.weight", R::Grad, P::Shared, "", "fc.weight", F, {1, 2});
  add("grad:fc.bias", R::Grad, P::Shared, "", "fc.bias", F, {1});
  add("fit:in:x", R::Input, P::Train, "fit", "x", F32, {B, 2});
  add("fit:in:y", R::Input, P::Train, "fit", "y", F32, {B});
  for (const char *k : {"loss", "mae", "lr", "grad_norm"})
    add(std::string("fit:out:") + k, R::Output, P::Train, "fit", k, F, {});
  for (const char *p : {"fc.weight", "fc.bias"})
    add(std::string("fit:state:momentum.") + p, R::State, P::Train, "fit",
        std::string("momentum.") + p, F,
        p[3] == 'w' ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1});
  for (const char *k : kHypers)
    add(std::string("fit:hyper:") + k, R::Hyper, P::Train, "fit", k,
        fb::DType::F64, {});
  if (o.withEval) {
    add("fit:eval_in:x", R::Input, P::Eval, "fit", "x", F32, {B, 2});
    add("fit:eval_in:y", R::Input, P::Eval, "fit", "y", F32, {B});
    add("fit:eval_out:loss", R::Output, P::Eval, "fit", "loss", F, {});
    add("fit:eval_out:mae", R::Output, P::Eval, "fit", "mae", F, {});
  }
  const int64_t IB = layout.inferBatch;
  add("predict:in:x", R::Input, P::Infer, "predict", "x", F32, {IB, 2});
  add("predict:out:y", R::Output, P::Infer, "predict", "y", F, {IB});
  add("predict:out:y2", R::Output, P::Infer, "predict", "y2",
      fb::DType(int(layout.y2)), {IB});
  add("predict1:in:x", R::Input, P::Infer, "predict1", "x", F32, {IB, 2});
  add("predict1:out:y", R::Output, P::Infer, "predict1", "y", F, {IB});
  uint64_t persistent = offset;

  std::vector<int64_t> wShape{1, 2}, bShape{1};
  std::vector<double> wArgs{2.0}, noArgs;
  std::vector<flatbuffers::Offset<fb::Param>> params{
      fb::CreateParamDirect(fbb, "fc.weight", F, &wShape,
                            fb::InitKind::KaimingUniform, &wArgs, w, 2),
      fb::CreateParamDirect(fbb, "fc.bias", F, &bShape, fb::InitKind::Zeros,
                            &noArgs, b, 3)};
  std::vector<int64_t> xShape{2}, yShape{};
  auto dataset = [&](const char *name, const std::string &x,
                     const std::string &y) {
    std::vector<flatbuffers::Offset<fb::Field>> fields{
        fb::CreateFieldDirect(fbb, "x", F32, &xShape, fb::SourceKind::Npy,
                              fb::SourceKind::File, x.c_str(), ""),
        fb::CreateFieldDirect(fbb, "y", F32, &yShape, fb::SourceKind::Npy,
                              fb::SourceKind::File, y.c_str(), "")};
    return fb::CreateDataSetDirect(fbb, name, &fields);
  };
  std::vector<flatbuffers::Offset<fb::DataSet>> datasets{
      dataset("points", o.trainX, o.trainY),
      dataset("points_eval", o.evalX, o.evalY)};
  std::vector<flatbuffers::Offset<fb::Function>> functions{
      fb::CreateFunctionDirect(fbb, "fit.fwd_bwd", fb::FunctionKind::FwdBwd,
                               "fit", 0),
      fb::CreateFunctionDirect(fbb, "fit.update", fb::FunctionKind::Update,
                               "fit", 1),
      fb::CreateFunctionDirect(fbb, "predict.infer", fb::FunctionKind::Infer,
                               "predict", 3),
      fb::CreateFunctionDirect(fbb, "predict1.infer", fb::FunctionKind::Infer,
                               "predict1", 4)};
  if (o.withEval)
    functions.push_back(fb::CreateFunctionDirect(
        fbb, "fit.eval", fb::FunctionKind::Eval, "fit", 2));
  auto optimizer = fb::CreateOptimizerDirect(fbb, "sgd", 0.05, 0.9, 0.0, false,
                                             0.9, 0.999, 1e-8);
  auto schedule = fb::CreateScheduleDirect(fbb, "constant", 0, 0.0, 1, 0.1);
  std::vector<flatbuffers::Offset<flatbuffers::String>> outputs{
      fbb.CreateString("loss"), fbb.CreateString("mae")};
  std::vector<flatbuffers::Offset<fb::TrainEntry>> train{
      fb::CreateTrainEntryDirect(
          fbb, "fit", "points", o.batch, o.accumulate, o.epochs, o.steps,
          o.seed, o.shuffle, "f32", optimizer, schedule, 0.0, false,
          o.withEval ? "points_eval" : "", o.evalEvery, o.evalSteps,
          o.checkpointEvery, o.checkpointDir.c_str(), o.checkpointKeep,
          o.logEvery, &outputs)};
  std::vector<flatbuffers::Offset<flatbuffers::String>> ins{
      fbb.CreateString("x")},
      outs2{fbb.CreateString("y"), fbb.CreateString("y2")},
      outs1{fbb.CreateString("y")};
  std::vector<flatbuffers::Offset<fb::InferEntry>> infer{
      fb::CreateInferEntryDirect(fbb, "predict", IB, &ins, &outs2),
      fb::CreateInferEntryDirect(fbb, "predict1", IB, &ins, &outs1)};
  std::vector<flatbuffers::Offset<flatbuffers::String>> targets;
  for (const std::string &t : o.targets)
    targets.push_back(fbb.CreateString(t));
  // A GPU section as modelc writes one for the cuda target: one step-less
  // function per function, a PTX image without kernels.
  flatbuffers::Offset<fb::GpuProgram> gpu = 0;
  if (o.withGpu) {
    std::vector<flatbuffers::Offset<fb::GpuFunction>> gpuFunctions;
    std::vector<const char *> symbols = {"fit.fwd_bwd", "fit.update",
                                         "predict.infer", "predict1.infer"};
    if (o.withEval)
      symbols.push_back("fit.eval");
    // fit.fwd_bwd launches k0 twice (on other buffers) and k1 once;
    // fit.update launches k1: what describe counts.
    auto launch = [&](uint32_t kernel, std::vector<uint64_t> args) {
      return fb::CreateGpuStepDirect(fbb, fb::GpuStepKind::Launch, kernel, 0,
                                     nullptr, 0, &args);
    };
    for (const char *symbol : symbols) {
      std::vector<flatbuffers::Offset<fb::GpuStep>> steps;
      if (std::string(symbol) == "fit.fwd_bwd")
        steps = {launch(0, {0}), launch(0, {64}), launch(1, {0, 7})};
      else if (std::string(symbol) == "fit.update")
        steps = {launch(1, {64, 9})};
      gpuFunctions.push_back(fb::CreateGpuFunctionDirect(fbb, symbol, &steps));
    }
    std::string ptx = ".version 7.0\n.target sm_80\n.address_size 64\n";
    std::vector<uint8_t> ptxBytes(ptx.begin(), ptx.end());
    std::vector<flatbuffers::Offset<fb::GpuImage>> images{
        fb::CreateGpuImageDirect(fbb, "sm_80", fb::GpuImageKind::Ptx,
                                 &ptxBytes)};
    std::vector<fb::GpuParamKind> one = {fb::GpuParamKind::Buffer},
                                  two = {fb::GpuParamKind::Buffer,
                                         fb::GpuParamKind::U64};
    std::vector<uint64_t> oneBytes = {16}, twoBytes = {16, 8};
    std::vector<flatbuffers::Offset<fb::GpuKernel>> kernels{
        fb::CreateGpuKernelDirect(fbb, "k0", 1, 32, 0, 0, &one, 0, &oneBytes),
        fb::CreateGpuKernelDirect(fbb, "k1", 1, 32, 0, 0, &two, 0, &twoBytes)};
    uint64_t workspace = (offset + 256 + 255) / 256 * 256;
    gpu = fb::CreateGpuProgramDirect(fbb, workspace + 1024, workspace, 1024,
                                     &images, &kernels, &gpuFunctions);
  }
  fbb.Finish(fb::CreateProgramDirect(
      fbb, 1, "linear.mdl", o.sourceHash.c_str(), &targets, offset + 256,
      persistent, &train, &infer, &params, &datasets, &buffers, &functions,
      gpu));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

void DriverTest::SetUp() {
  std::string pattern = testing::TempDir() + "modelc-driver-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  dir_ = pattern;
  Rng rng(7);
  auto write = [&](const std::string &stem, int64_t n, std::vector<float> *xs,
                   std::vector<float> *ys) {
    std::vector<float> x, y;
    for (int64_t i = 0; i < n; ++i) {
      float x0 = float(rng.uniform() * 2 - 1),
            x1 = float(rng.uniform() * 2 - 1);
      x.insert(x.end(), {x0, x1});
      y.push_back(float(3 * x0 - 2 * x1 + 0.5 + 0.01 * rng.normal()));
    }
    ASSERT_TRUE(
        writeNpy(path(stem + "x.npy"), DType::F32, {n, 2}, x.data()).ok());
    ASSERT_TRUE(writeNpy(path(stem + "y.npy"), DType::F32, {n}, y.data()).ok());
    if (xs)
      *xs = x, *ys = y;
  };
  write("", 40, nullptr, nullptr);
  write("eval_", 10, &evalX, &evalY);
  options.trainX = path("x.npy");
  options.trainY = path("y.npy");
  options.evalX = path("eval_x.npy");
  options.evalY = path("eval_y.npy");
  raiseSignalAt(0, 0);
}

void DriverTest::TearDown() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
  raiseSignalAt(0, 0);
}

RunResult DriverTest::run(const std::vector<std::string> &args) {
  return run(options, args);
}

RunResult DriverTest::run(const ProgramOptions &opts,
                          const std::vector<std::string> &args) {
  return runBuilt(buildManifest(opts), args);
}

RunResult DriverTest::runBuilt(const std::vector<uint8_t> &manifest,
                               const std::vector<std::string> &args) {
  std::vector<const char *> argv{"linear"};
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  std::ostringstream out, err;
  ProgramIO io{out, err, terminal};
  RunResult r;
  r.code = runProgram(
      int(argv.size()), argv.data(),
      {manifest.data(), manifest.size(), testFunctions(), numTestFunctions()},
      io);
  r.out = out.str();
  r.err = err.str();
  return r;
}

void DriverTest::writeWeights(const std::string &file, float w0, float w1,
                              float b) {
  float w[2] = {w0, w1};
  ASSERT_TRUE(writeSafetensors(file, {{"fc.weight", DType::F32, {1, 2}, w, 8},
                                      {"fc.bias", DType::F32, {1}, &b, 4}})
                  .ok());
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> linesStartingWith(const std::string &text,
                                           const std::string &prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0)
      out.push_back(line);
  return out;
}

} // namespace modelc::rt::test
