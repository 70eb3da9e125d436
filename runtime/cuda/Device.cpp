// probe() and the CUDA device of Device.h: the primary context, the loaded
// image, the zeroed arena, one non-blocking stream, pinned staging, the
// cuBLASLt plans, and each function's step list run eagerly once, then
// captured as a CUDA graph and replayed (docs/runtime/cuda.md).
#include "runtime/cuda/Device.h"

#include "runtime/cuda/CudaApi.h"
#include "runtime/cuda/GemmPlan.h"
#include "runtime/cuda/GpuProgram.h"
#include "runtime/cuda/Staging.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <map>

namespace modelc::rt::cuda {

namespace {

/// The JIT's error log kept when a module does not load.
constexpr size_t kJitLogBytes = 16 * 1024;

/// MODELC_CUDA_GRAPHS=0 runs every step eagerly, for debugging.
bool graphsEnabled() {
  const char *value = std::getenv("MODELC_CUDA_GRAPHS");
  return !value || std::strcmp(value, "0") != 0;
}

class CudaDevice final : public Device {
public:
  CudaDevice(const DriverApi &api, GpuProgramInfo program)
      : api_(api), program_(std::move(program)),
        staging_(std::make_unique<Staging>(api)) {}
  ~CudaDevice() override;

  Status init(int ordinal);

  std::string description() const override {
    return fmt::format("GPU {}: {} (sm_{}, {:.1f} GiB)", ordinal_, name_, sm_,
                       double(totalBytes_) / double(uint64_t(1) << 30));
  }
  uint64_t arenaBytes() const override { return program_.arenaBytes; }
  size_t kernelCount() const override { return program_.kernels.size(); }
  Status upload(uint64_t offset, const void *src, uint64_t bytes) override;
  Status download(uint64_t offset, void *dst, uint64_t bytes) override;
  Status run(size_t functionIndex) override;
  Status runStep(size_t functionIndex, size_t stepIndex) override;
  Status synchronize() override;
  Status setReducer(BucketReducer *reducer) override;
  int ordinal() const override { return ordinal_; }
  CUstream_st *stream() const override { return stream_; }
  uint64_t arenaAddress() const override { return arena_; }
  Status makeCurrent() const override {
    return api_.check(api_.ctxSetCurrent(context_), "cuCtxSetCurrent");
  }

private:
  /// A function's runs, and its CUDA graph, for one value of reducing().
  struct FunctionState {
    uint64_t runs = 0;
    CUgraphExec graph = nullptr;
  };
  /// Runs of a function that reduce its buckets (reducer_->reducing())
  /// have their own state and graph.
  bool reducing() const { return reducer_ && reducer_->reducing(); }
  FunctionState &state(size_t functionIndex) {
    return functions_[2 * functionIndex + (reducing() ? 1 : 0)];
  }

  Status openDevice(int ordinal);
  Status loadModule();
  std::string imageName(const GpuImageInfo &image) const;
  /// Fills launchValues_ and launchParams_.
  void prepareLaunches();
  Status planGemms();
  Status checkRange(const char *what, uint64_t offset, uint64_t bytes) const;
  Status enqueueStep(size_t functionIndex, size_t stepIndex);
  /// An AllReduce step of a reducing run: the communication stream waits
  /// for the work queued so far, then reduces the bucket.
  Status enqueueReduce(const GpuStepInfo &step);
  /// At a reducing run's end: the stream waits for the buckets.
  Status joinReduces(const GpuFunctionInfo &function);
  Status enqueueSteps(size_t functionIndex);
  Status capture(size_t functionIndex);

  const DriverApi &api_;
  GpuProgramInfo program_;
  int ordinal_ = 0, sm_ = 0;
  CUdevice device_ = 0;
  std::string name_;
  size_t totalBytes_ = 0;
  bool graphs_ = true;
  CUcontext context_ = nullptr;
  std::vector<CUmodule> modules_; // one per part of the kernels
  std::vector<CUfunction> kernels_;
  /// Per function and step, a Launch's parameter values (device pointers
  /// into the arena, 64-bit values) and the pointers to them that
  /// cuLaunchKernel takes: made once the arena is allocated.
  std::vector<std::vector<std::vector<uint64_t>>> launchValues_;
  std::vector<std::vector<std::vector<void *>>> launchParams_;
  CUdeviceptr arena_ = 0;
  CUstream stream_ = nullptr;
  std::unique_ptr<Staging> staging_;
  const BlasLtApi *lt_ = nullptr;
  cublasLtHandle_t ltHandle_ = nullptr;
  std::vector<std::unique_ptr<GemmPlan>> plans_;
  std::vector<size_t> planOfGemm_; // index into plans_ per program_.gemms
  std::vector<FunctionState> functions_; // 2 per function (see state())
  BucketReducer *reducer_ = nullptr;
  CUstream commStream_ = nullptr;
  /// One event per AllReduce step of the program (program_.allReduces),
  /// and the one the function's end waits for.
  std::vector<CUevent> bucketReady_;
  CUevent reducesDone_ = nullptr;
  bool reducesPending_ = false;
};

CudaDevice::~CudaDevice() {
  // Errors are ignored: a lost context fails every call, and nothing here
  // may throw. The order undoes init's.
  if (!context_)
    return;
  api_.ctxSetCurrent(context_);
  if (stream_)
    api_.streamSynchronize(stream_);
  if (commStream_)
    api_.streamSynchronize(commStream_);
  for (FunctionState &f : functions_)
    if (f.graph)
      api_.graphExecDestroy(f.graph);
  for (CUevent e : bucketReady_)
    api_.eventDestroy(e);
  if (reducesDone_)
    api_.eventDestroy(reducesDone_);
  if (commStream_)
    api_.streamDestroy(commStream_);
  plans_.clear();
  if (ltHandle_)
    lt_->destroy(ltHandle_);
  staging_.reset();
  if (stream_)
    api_.streamDestroy(stream_);
  if (arena_)
    api_.memFree(arena_);
  for (CUmodule module : modules_)
    api_.moduleUnload(module);
  api_.primaryCtxRelease(device_);
}

Status CudaDevice::openDevice(int ordinal) {
  if (CUresult r = api_.init(0); r != CUDA_SUCCESS)
    return Status::error(api_.check(r, "cuInit").message(), kExitUsage);
  int count = 0;
  MODELC_RETURN_IF_ERROR(
      api_.check(api_.deviceGetCount(&count), "cuDeviceGetCount"));
  if (count == 0)
    return Status::error("no CUDA device; run with --cpu", kExitUsage);
  if (ordinal < 0 || ordinal >= count)
    return Status::error(fmt::format("there is no GPU {}: this machine has {} "
                                     "CUDA device(s), numbered from 0",
                                     ordinal, count),
                         kExitUsage);
  ordinal_ = ordinal;
  MODELC_RETURN_IF_ERROR(
      api_.check(api_.deviceGet(&device_, ordinal), "cuDeviceGet"));
  char name[256] = {};
  MODELC_RETURN_IF_ERROR(api_.check(
      api_.deviceGetName(name, sizeof(name) - 1, device_), "cuDeviceGetName"));
  name_ = name;
  int major = 0, minor = 0;
  MODELC_RETURN_IF_ERROR(api_.check(
      api_.deviceGetAttribute(
          &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_),
      "cuDeviceGetAttribute", "compute capability"));
  MODELC_RETURN_IF_ERROR(api_.check(
      api_.deviceGetAttribute(
          &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_),
      "cuDeviceGetAttribute", "compute capability"));
  sm_ = major * 10 + minor;
  MODELC_RETURN_IF_ERROR(api_.check(api_.deviceTotalMem(&totalBytes_, device_),
                                    "cuDeviceTotalMem"));
  return Status();
}

Status CudaDevice::loadModule() {
  if (program_.kernels.empty())
    return Status();
  Result<size_t> chosen = selectImage(program_.images, sm_);
  if (!chosen)
    return chosen.status();
  for (size_t index : imagesOfParts(program_.images, *chosen, program_.parts)) {
    const GpuImageInfo &image = program_.images[index];
    // An aligned copy; the zero padding is PTX's terminating NUL.
    std::vector<uint64_t> data(image.size / 8 + 1, 0);
    std::memcpy(data.data(), image.data, image.size);
    std::string log(kJitLogBytes, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log.data(),
                      reinterpret_cast<void *>(uintptr_t(kJitLogBytes))};
    CUmodule module = nullptr;
    CUresult r =
        api_.moduleLoadDataEx(&module, data.data(), 2, options, values);
    if (r != CUDA_SUCCESS) {
      log.resize(std::strlen(log.c_str()));
      std::string hint =
          log.empty() ? std::string() : "the JIT compiler says: " + log;
      return api_.check(r, "cuModuleLoadDataEx", imageName(image), hint);
    }
    modules_.push_back(module);
  }
  for (const GpuKernelInfo &kernel : program_.kernels) {
    CUfunction fn = nullptr;
    std::string what = imageName(program_.images[*chosen]);
    MODELC_RETURN_IF_ERROR(api_.check(
        api_.moduleGetFunction(&fn, modules_[kernel.part], kernel.name.c_str()),
        "cuModuleGetFunction", "kernel " + kernel.name + " in " + what,
        "the image lacks a kernel of the program; rebuild it with modelc"));
    kernels_.push_back(fn);
  }
  return Status();
}

std::string CudaDevice::imageName(const GpuImageInfo &image) const {
  std::string part =
      program_.parts > 1
          ? fmt::format(" (part {} of {})", image.part, program_.parts)
          : std::string();
  return fmt::format("{} {}{} on this sm_{} GPU", image.cubin ? "cubin" : "PTX",
                     image.arch, part, sm_);
}

void CudaDevice::prepareLaunches() {
  launchValues_.resize(program_.functions.size());
  launchParams_.resize(program_.functions.size());
  for (size_t f = 0; f < program_.functions.size(); ++f) {
    const std::vector<GpuStepInfo> &steps = program_.functions[f].steps;
    launchValues_[f].resize(steps.size());
    launchParams_[f].resize(steps.size());
    for (size_t s = 0; s < steps.size(); ++s) {
      if (steps[s].kind != GpuStepInfo::Kind::Launch)
        continue;
      const GpuKernelInfo &kernel = program_.kernels[steps[s].kernel];
      std::vector<uint64_t> &values = launchValues_[f][s];
      for (size_t i = 0; i < steps[s].args.size(); ++i)
        values.push_back(kernel.bufferParams[i] ? arena_ + steps[s].args[i]
                                                : steps[s].args[i]);
      for (uint64_t &value : values)
        launchParams_[f][s].push_back(&value);
    }
  }
}

Status CudaDevice::planGemms() {
  if (program_.gemms.empty())
    return Status();
  Result<const BlasLtApi *> lt = loadBlasLt();
  if (!lt)
    return lt.status();
  lt_ = *lt;
  MODELC_RETURN_IF_ERROR(lt_->check(lt_->create(&ltHandle_), "cublasLtCreate"));
  std::map<std::string, size_t> planOfKey;
  planOfGemm_.resize(program_.gemms.size());
  for (const GpuFunctionInfo &function : program_.functions)
    for (size_t s = 0; s < function.steps.size(); ++s) {
      const GpuStepInfo &step = function.steps[s];
      if (step.kind != GpuStepInfo::Kind::Gemm)
        continue;
      const GpuGemmInfo &gemm = program_.gemms[step.gemm];
      auto [it, added] = planOfKey.emplace(GemmPlan::key(gemm), plans_.size());
      planOfGemm_[step.gemm] = it->second;
      if (!added)
        continue;
      Result<std::unique_ptr<GemmPlan>> plan = GemmPlan::create(
          *lt_, ltHandle_, gemm, program_.workspaceBytes,
          fmt::format("function {} step {}", function.symbol, s));
      if (!plan)
        return plan.status();
      plans_.push_back(plan.take());
    }
  return Status();
}

Status CudaDevice::init(int ordinal) {
  graphs_ = graphsEnabled();
  MODELC_RETURN_IF_ERROR(openDevice(ordinal));
  MODELC_RETURN_IF_ERROR(api_.check(api_.primaryCtxRetain(&context_, device_),
                                    "cuDevicePrimaryCtxRetain"));
  MODELC_RETURN_IF_ERROR(makeCurrent());
  MODELC_RETURN_IF_ERROR(loadModule());
  MODELC_RETURN_IF_ERROR(api_.check(
      api_.streamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
  uint64_t bytes = std::max<uint64_t>(program_.arenaBytes, 256);
  MODELC_RETURN_IF_ERROR(api_.check(
      api_.memAlloc(&arena_, bytes), "cuMemAlloc",
      fmt::format("the {}-byte device arena", bytes),
      fmt::format("the program needs {:.2f} GiB of device memory and {} has "
                  "{:.1f} GiB in all: free the GPU (see nvidia-smi), use a "
                  "smaller batch, or run with --cpu",
                  double(bytes) / double(uint64_t(1) << 30), name_,
                  double(totalBytes_) / double(uint64_t(1) << 30))));
  MODELC_RETURN_IF_ERROR(
      api_.check(api_.memsetD8Async(arena_, 0, bytes, stream_),
                 "cuMemsetD8Async", "zeroing the arena"));
  prepareLaunches();
  MODELC_RETURN_IF_ERROR(staging_->init());
  MODELC_RETURN_IF_ERROR(planGemms());
  functions_.resize(2 * program_.functions.size());
  return api_.check(api_.streamSynchronize(stream_), "cuStreamSynchronize",
                    "zeroing the arena");
}

Status CudaDevice::checkRange(const char *what, uint64_t offset,
                              uint64_t bytes) const {
  if (offset <= program_.arenaBytes && bytes <= program_.arenaBytes - offset)
    return Status();
  return Status::error(
      fmt::format("internal error: {} of {} bytes at offset {} lies outside "
                  "the {}-byte device arena",
                  what, bytes, offset, program_.arenaBytes),
      kExitInternal);
}

Status CudaDevice::upload(uint64_t offset, const void *src, uint64_t bytes) {
  MODELC_RETURN_IF_ERROR(checkRange("an upload", offset, bytes));
  if (bytes == 0)
    return Status();
  MODELC_RETURN_IF_ERROR(makeCurrent());
  return staging_->upload(arena_ + offset, src, bytes, stream_);
}

Status CudaDevice::download(uint64_t offset, void *dst, uint64_t bytes) {
  MODELC_RETURN_IF_ERROR(checkRange("a download", offset, bytes));
  if (bytes == 0)
    return Status();
  MODELC_RETURN_IF_ERROR(makeCurrent());
  return staging_->download(dst, arena_ + offset, bytes, stream_);
}

Status CudaDevice::setReducer(BucketReducer *reducer) {
  MODELC_RETURN_IF_ERROR(makeCurrent());
  reducer_ = reducer;
  if (!reducer || commStream_)
    return Status();
  MODELC_RETURN_IF_ERROR(
      api_.check(api_.streamCreate(&commStream_, CU_STREAM_NON_BLOCKING),
                 "cuStreamCreate", "the communication stream"));
  bucketReady_.assign(program_.allReduces.size(), nullptr);
  for (CUevent &e : bucketReady_)
    MODELC_RETURN_IF_ERROR(
        api_.check(api_.eventCreate(&e, CU_EVENT_DISABLE_TIMING),
                   "cuEventCreate", "a gradient bucket's event"));
  return api_.check(api_.eventCreate(&reducesDone_, CU_EVENT_DISABLE_TIMING),
                    "cuEventCreate", "the buckets' event");
}

Status CudaDevice::enqueueReduce(const GpuStepInfo &step) {
  const GpuAllReduceInfo &bucket = program_.allReduces[step.allReduce];
  std::vector<BucketBuffer> buffers;
  for (const GpuAllReduceInfo::Buffer &b : bucket.buffers)
    buffers.push_back({arena_ + b.offset, b.count, b.dtype == DType::F64});
  std::string what = fmt::format("gradient bucket {}", bucket.bucket);
  CUevent ready = bucketReady_[step.allReduce];
  MODELC_RETURN_IF_ERROR(
      api_.check(api_.eventRecord(ready, stream_), "cuEventRecord", what));
  MODELC_RETURN_IF_ERROR(api_.check(api_.streamWaitEvent(commStream_, ready, 0),
                                    "cuStreamWaitEvent", what));
  reducesPending_ = true;
  Status reduced = reducer_->reduce(buffers, commStream_);
  if (!reduced.ok())
    return Status::error(fmt::format("the all-reduce of gradient bucket {} "
                                     "failed: {}",
                                     bucket.bucket, reduced.message()),
                         reduced.exitCode());
  return Status();
}

Status CudaDevice::joinReduces(const GpuFunctionInfo &function) {
  if (!reducesPending_)
    return Status();
  reducesPending_ = false;
  MODELC_RETURN_IF_ERROR(api_.check(api_.eventRecord(reducesDone_, commStream_),
                                    "cuEventRecord", function.symbol));
  return api_.check(api_.streamWaitEvent(stream_, reducesDone_, 0),
                    "cuStreamWaitEvent", function.symbol);
}

Status CudaDevice::enqueueStep(size_t functionIndex, size_t stepIndex) {
  const GpuFunctionInfo &function = program_.functions[functionIndex];
  const GpuStepInfo &step = function.steps[stepIndex];
  // Without a reducer this GPU is the only rank: the mean of a bucket over
  // one rank is the bucket. Other micro-batches than a step's last
  // accumulate without communicating (DDP's no_sync).
  if (step.kind == GpuStepInfo::Kind::AllReduce)
    return reducing() ? enqueueReduce(step) : Status();
  if (step.kind == GpuStepInfo::Kind::Gemm)
    return plans_[planOfGemm_[step.gemm]]->enqueue(
        program_.gemms[step.gemm], arena_, arena_ + program_.workspaceOffset,
        stream_);
  const GpuKernelInfo &kernel = program_.kernels[step.kernel];
  // The driver copies the values when it enqueues (or captures) the launch.
  void **params = launchParams_[functionIndex][stepIndex].data();
  return api_.check(
      api_.launchKernel(kernels_[step.kernel], kernel.grid, 1, 1, kernel.block,
                        1, 1, kernel.sharedBytes, stream_, params, nullptr),
      "cuLaunchKernel",
      fmt::format("kernel {} of {}", kernel.name, function.symbol));
}

Status CudaDevice::enqueueSteps(size_t functionIndex) {
  const GpuFunctionInfo &function = program_.functions[functionIndex];
  Status queued;
  for (size_t s = 0; s < function.steps.size(); ++s) {
    queued = enqueueStep(functionIndex, s);
    if (!queued.ok())
      break;
  }
  // Also after a failure: a capture must end with its streams joined.
  Status joined = joinReduces(function);
  return queued.ok() ? joined : queued;
}

Status CudaDevice::capture(size_t functionIndex) {
  const std::string &symbol = program_.functions[functionIndex].symbol;
  MODELC_RETURN_IF_ERROR(api_.check(
      api_.streamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
      "cuStreamBeginCapture", symbol));
  Status queued = enqueueSteps(functionIndex);
  CUgraph graph = nullptr;
  CUresult ended = api_.streamEndCapture(stream_, &graph);
  Status status =
      queued.ok() ? api_.check(ended, "cuStreamEndCapture", symbol) : queued;
  if (status.ok()) {
    status =
        api_.check(api_.graphInstantiate(&state(functionIndex).graph, graph, 0),
                   "cuGraphInstantiate", symbol);
  }
  if (graph)
    api_.graphDestroy(graph);
  if (!status.ok())
    return Status::error(status.message() + " (while capturing " + symbol +
                             " as a CUDA graph; MODELC_CUDA_GRAPHS=0 turns "
                             "graphs off)",
                         status.exitCode());
  return Status();
}

Status CudaDevice::run(size_t functionIndex) {
  if (functionIndex >= program_.functions.size())
    return Status::error(fmt::format("internal error: GPU function {} of {}",
                                     functionIndex, program_.functions.size()),
                         kExitInternal);
  if (program_.functions[functionIndex].steps.empty())
    return Status();
  MODELC_RETURN_IF_ERROR(makeCurrent());
  FunctionState &state = this->state(functionIndex);
  const std::string &symbol = program_.functions[functionIndex].symbol;
  // The first run loads lazily-loaded kernels and runs cuBLASLt once
  // outside a capture; the second records the graph that later runs replay.
  if (!state.graph && (state.runs++ == 0 || !graphs_))
    return enqueueSteps(functionIndex);
  if (!state.graph)
    MODELC_RETURN_IF_ERROR(capture(functionIndex));
  return api_.check(api_.graphLaunch(state.graph, stream_), "cuGraphLaunch",
                    symbol);
}

Status CudaDevice::runStep(size_t functionIndex, size_t stepIndex) {
  if (functionIndex >= program_.functions.size() ||
      stepIndex >= program_.functions[functionIndex].steps.size())
    return Status::error(fmt::format("internal error: step {} of GPU "
                                     "function {}",
                                     stepIndex, functionIndex),
                         kExitInternal);
  MODELC_RETURN_IF_ERROR(makeCurrent());
  const GpuFunctionInfo &function = program_.functions[functionIndex];
  Status queued = enqueueStep(functionIndex, stepIndex);
  Status joined = joinReduces(function);
  return queued.ok() ? joined : queued;
}

Status CudaDevice::synchronize() {
  MODELC_RETURN_IF_ERROR(makeCurrent());
  return api_.check(api_.streamSynchronize(stream_), "cuStreamSynchronize",
                    "waiting for the GPU");
}

} // namespace

Probe probe() {
  Probe probe;
  Result<const DriverApi *> api = loadDriver();
  if (!api) {
    probe.problem = api.status().message();
    return probe;
  }
  if (CUresult r = (*api)->init(0); r != CUDA_SUCCESS) {
    probe.problem = (*api)->check(r, "cuInit").message();
    return probe;
  }
  int count = 0;
  if (CUresult r = (*api)->deviceGetCount(&count); r != CUDA_SUCCESS) {
    probe.problem = (*api)->check(r, "cuDeviceGetCount").message();
    return probe;
  }
  if (count == 0)
    probe.problem = "no CUDA device";
  probe.devices = count;
  return probe;
}

Result<std::unique_ptr<Device>> Device::open(int ordinal,
                                             const Manifest &manifest) {
  Result<GpuProgramInfo> program = readGpuProgram(manifest);
  if (!program)
    return program.status();
  Result<const DriverApi *> api = loadDriver();
  if (!api)
    return Status::error(api.status().message() + "; run with --cpu",
                         kExitUsage);
  auto device = std::make_unique<CudaDevice>(**api, program.take());
  MODELC_RETURN_IF_ERROR(device->init(ordinal));
  return std::unique_ptr<Device>(std::move(device));
}

} // namespace modelc::rt::cuda
