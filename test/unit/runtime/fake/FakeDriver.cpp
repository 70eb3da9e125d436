// The fake libcuda's driver API (FakeCuda.h).
#include "FakeCuda.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

namespace fake {
std::string callLog;
std::mutex logMutex;
std::atomic<int> live{0};
void note(const std::string &what) {
  std::lock_guard<std::mutex> lock(logMutex);
  callLog += what + " ";
}
} // namespace fake

using fake::live;
using fake::note;

namespace {
constexpr uint64_t kFakeCounterOffset = 3072;
} // namespace

struct CUctx_st {};
struct CUmod_st {
  std::string image;
};
struct CUfunc_st {
  std::string name;
  /// The number of `.param`s its `.entry` declares in the module's text.
  size_t params = 0;
  /// Its `.maxntid` (the most threads a block may have), 0 when undeclared.
  unsigned maxThreads = 0;
};
struct CUevent_st {
  bool recorded = false;
  /// The graph being captured on the stream it was recorded on, if any.
  CUgraph_st *capture = nullptr;
};
struct CUgraphExec_st {
  std::vector<std::function<void()>> ops;
};

namespace {
CUctx_st primaryContext;
std::atomic<int> retained{0};
/// Live device allocations, base to size, to print a launch's pointers as
/// offsets into them.
std::map<uintptr_t, size_t> allocations;
std::mutex allocationsMutex;

/// The `.param`s of `.entry NAME(...)` in a PTX text; nullopt without one.
std::optional<size_t> countEntryParams(const std::string &image,
                                       const std::string &name) {
  size_t at = image.find(".entry " + name + "(");
  if (at == std::string::npos)
    return std::nullopt;
  size_t end = image.find(')', at);
  size_t count = 0;
  for (size_t p = image.find(".param", at); p < end;
       p = image.find(".param", p + 1))
    ++count;
  return count;
}

/// The `.maxntid X` that follows `.entry NAME(...)` in a PTX text, before
/// its body; 0 without one.
unsigned entryMaxThreads(const std::string &image, const std::string &name) {
  size_t at = image.find(".entry " + name + "(");
  if (at == std::string::npos)
    return 0;
  size_t body = image.find('{', image.find(')', at));
  size_t directive = image.find(".maxntid", at);
  if (directive == std::string::npos || directive > body)
    return 0;
  return unsigned(std::strtoul(image.c_str() + directive + 8, nullptr, 10));
}

/// The offset of `value` in the device allocation it points into, if any.
std::optional<uint64_t> allocationOffset(uint64_t value) {
  std::lock_guard<std::mutex> lock(allocationsMutex);
  auto it = allocations.upper_bound(uintptr_t(value));
  if (it == allocations.begin())
    return std::nullopt;
  --it;
  if (value - it->first > it->second)
    return std::nullopt;
  return value - it->first;
}

/// A launch argument as the log shows it: `@OFFSET` inside an allocation,
/// else the value.
std::string describeArgument(uint64_t value) {
  std::optional<uint64_t> offset = allocationOffset(value);
  return offset ? "@" + std::to_string(*offset) : std::to_string(value);
}
} // namespace

extern "C" {

const char *fakeCudaLog() {
  std::lock_guard<std::mutex> lock(fake::logMutex);
  return fake::callLog.c_str();
}
void fakeCudaClearLog() {
  std::lock_guard<std::mutex> lock(fake::logMutex);
  fake::callLog.clear();
}
int fakeCudaLive() { return live + retained; }

CUresult CUDAAPI cuDriverGetVersion(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorName(CUresult e, const char **s) {
  *s = e == CUDA_ERROR_INVALID_PTX     ? "CUDA_ERROR_INVALID_PTX"
       : e == CUDA_ERROR_NOT_FOUND     ? "CUDA_ERROR_NOT_FOUND"
       : e == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
       : e == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
           ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"
           : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGetErrorString(CUresult, const char **s) {
  *s = "fake error";
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuInit(unsigned) { return CUDA_SUCCESS; }
/// FAKE_CUDA_DEVICES GPUs (default 1), alike.
static int deviceCount() {
  const char *env = std::getenv("FAKE_CUDA_DEVICES");
  return env ? std::atoi(env) : 1;
}
CUresult CUDAAPI cuDeviceGetCount(int *n) {
  *n = deviceCount();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice *d, int ordinal) {
  *d = ordinal;
  return ordinal >= 0 && ordinal < deviceCount() ? CUDA_SUCCESS
                                                 : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice) {
  std::strncpy(name, "Fake GPU", size_t(len));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice) {
  const char *env = std::getenv("FAKE_CUDA_SM");
  int sm = env ? std::atoi(env) : 90;
  *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? sm / 10 : sm % 10;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice) {
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice) {
  *c = &primaryContext;
  ++retained;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice) {
  --retained;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSetCurrent(CUcontext c) {
  return c == &primaryContext ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n,
                                    CUjit_option *options, void **values) {
  std::string text(static_cast<const char *>(image));
  if (text.find("syntax error") != std::string::npos) {
    for (unsigned i = 0; i < n; ++i)
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
        std::strcpy(static_cast<char *>(values[i]), "ptxas: line 1: oops");
    return CUDA_ERROR_INVALID_PTX;
  }
  *m = new CUmod_st{text};
  ++live;
  note("load:" + text);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleUnload(CUmodule m) {
  delete m;
  --live;
  return CUDA_SUCCESS;
}
/// Kernels are named k... (the tests' programs) or ..._kN (modelc's, as
/// docs/codegen/gpu.md names them); one the module's text declares must be
/// there (a module without PTX entries stands in for a cubin).
CUresult CUDAAPI cuModuleGetFunction(CUfunction *f, CUmodule m, const char *n) {
  std::string name(n);
  size_t suffix = name.rfind("_k");
  bool modelcName = suffix != std::string::npos && suffix + 2 < name.size() &&
                    std::isdigit(static_cast<unsigned char>(name[suffix + 2]));
  if (n[0] != 'k' && !modelcName)
    return CUDA_ERROR_NOT_FOUND;
  std::optional<size_t> params = countEntryParams(m->image, n);
  if (!params && m->image.find(".entry") != std::string::npos)
    return CUDA_ERROR_NOT_FOUND;
  static std::map<std::string, CUfunc_st> functions;
  static std::mutex functionsMutex;
  std::lock_guard<std::mutex> lock(functionsMutex);
  CUfunc_st &function = functions[std::string(m->image) + '\0' + n];
  function = CUfunc_st{n, params.value_or(0), entryMaxThreads(m->image, n)};
  *f = &function;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  *p = CUdeviceptr(uintptr_t(std::malloc(bytes)));
  std::memset(reinterpret_cast<void *>(uintptr_t(*p)), 0xAB, bytes);
  {
    std::lock_guard<std::mutex> lock(allocationsMutex);
    allocations[uintptr_t(*p)] = bytes;
  }
  ++live;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  {
    std::lock_guard<std::mutex> lock(allocationsMutex);
    allocations.erase(uintptr_t(p));
  }
  std::free(reinterpret_cast<void *>(uintptr_t(p)));
  --live;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemHostAlloc(void **p, size_t bytes, unsigned) {
  *p = std::malloc(bytes);
  ++live;
  note("pinned:" + std::to_string(bytes));
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFreeHost(void *p) {
  std::free(p);
  --live;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n,
                                 CUstream s) {
  if (s && s->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  std::memset(reinterpret_cast<void *>(uintptr_t(p)), v, n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr d, const void *h, size_t n,
                                   CUstream s) {
  if (s && s->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  std::memcpy(reinterpret_cast<void *>(uintptr_t(d)), h, n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyDtoHAsync(void *h, CUdeviceptr d, size_t n,
                                   CUstream s) {
  if (s && s->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  std::memcpy(h, reinterpret_cast<void *>(uintptr_t(d)), n);
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned flags) {
  if (flags != CU_STREAM_NON_BLOCKING)
    return CUDA_ERROR_INVALID_VALUE;
  *s = new CUstream_st;
  ++live;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  delete s;
  --live;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) {
  if (s->capturing || mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
    return CUDA_ERROR_INVALID_VALUE;
  s->capturing = new CUgraph_st;
  ++live;
  note("capture");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamEndCapture(CUstream s, CUgraph *g) {
  *g = s->capturing;
  s->capturing = nullptr;
  if (*g)
    for (CUstream_st *forked : (*g)->forked)
      forked->capturing = nullptr;
  return *g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned) {
  *e = new CUevent_st;
  ++live;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  e->capture = s->capturing;
  e->recorded = !s->capturing;
  return CUDA_SUCCESS;
}
/// Streams run everything at once, so waiting orders nothing; an event of
/// a capture makes the waiting stream join that capture.
CUresult CUDAAPI cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (e->capture && s->capturing != e->capture) {
    if (s->capturing)
      return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    s->capturing = e->capture;
    e->capture->forked.push_back(s);
  }
  note("stream-wait");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventSynchronize(CUevent e) {
  if (e->recorded)
    note("wait");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventDestroy(CUevent e) {
  delete e;
  --live;
  return CUDA_SUCCESS;
}
/// Logs `NAME<grid,block>(args)` and adds 1 to the uint32 at the first
/// argument plus kFakeCounterOffset (a kernel's first buffer is the
/// arena's start in the tests), when the launch runs.
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy,
                                unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared, CUstream s,
                                void **params, void **extra) {
  // As a real driver: a block above the kernel's .maxntid cannot launch.
  if (gy != 1 || gz != 1 || by != 1 || bz != 1 || shared != 0 || extra ||
      (!params && f->params > 0) || (f->maxThreads && bx > f->maxThreads))
    return CUDA_ERROR_INVALID_VALUE;
  // The driver copies the values now: a capture keeps them.
  std::vector<uint64_t> values(f->params);
  for (size_t i = 0; i < f->params; ++i)
    values[i] = *static_cast<uint64_t *>(params[i]);
  std::string name =
      f->name + "<" + std::to_string(gx) + "," + std::to_string(bx) + ">(";
  for (size_t i = 0; i < values.size(); ++i)
    name += (i ? "," : "") + describeArgument(values[i]);
  name += ")";
  s->run([values, name] {
    note(name);
    // Only a pointer into an allocation that has room for the counter.
    if (!values.empty() && allocationOffset(values[0]) &&
        allocationOffset(values[0] + kFakeCounterOffset + 4))
      ++*reinterpret_cast<uint32_t *>(
          uintptr_t(values[0] + kFakeCounterOffset));
  });
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g,
                                             unsigned long long) {
  *e = new CUgraphExec_st{g->ops};
  ++live;
  note("instantiate");
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphLaunch(CUgraphExec e, CUstream s) {
  if (s->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  note("graph");
  for (auto &op : e->ops)
    op();
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec e) {
  delete e;
  --live;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphDestroy(CUgraph g) {
  delete g;
  --live;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **fn, int version,
                                     cuuint64_t,
                                     CUdriverProcAddressQueryResult *status) {
#define FAKE_ENTRY(name)                                                       \
  { #name, reinterpret_cast < void *>(&name) }
  static const std::map<std::string, void *> table = {
      FAKE_ENTRY(cuInit),
      FAKE_ENTRY(cuDeviceGetCount),
      FAKE_ENTRY(cuDeviceGet),
      FAKE_ENTRY(cuDeviceGetName),
      FAKE_ENTRY(cuDeviceGetAttribute),
      FAKE_ENTRY(cuDeviceTotalMem),
      FAKE_ENTRY(cuDevicePrimaryCtxRetain),
      FAKE_ENTRY(cuDevicePrimaryCtxRelease),
      FAKE_ENTRY(cuCtxSetCurrent),
      FAKE_ENTRY(cuModuleLoadDataEx),
      FAKE_ENTRY(cuModuleUnload),
      FAKE_ENTRY(cuModuleGetFunction),
      FAKE_ENTRY(cuMemAlloc),
      FAKE_ENTRY(cuMemFree),
      FAKE_ENTRY(cuMemsetD8Async),
      FAKE_ENTRY(cuMemHostAlloc),
      FAKE_ENTRY(cuMemFreeHost),
      FAKE_ENTRY(cuMemcpyHtoDAsync),
      FAKE_ENTRY(cuMemcpyDtoHAsync),
      FAKE_ENTRY(cuStreamCreate),
      FAKE_ENTRY(cuStreamDestroy),
      FAKE_ENTRY(cuStreamSynchronize),
      FAKE_ENTRY(cuStreamBeginCapture),
      FAKE_ENTRY(cuStreamEndCapture),
      FAKE_ENTRY(cuEventCreate),
      FAKE_ENTRY(cuEventRecord),
      FAKE_ENTRY(cuEventSynchronize),
      FAKE_ENTRY(cuStreamWaitEvent),
      FAKE_ENTRY(cuEventDestroy),
      FAKE_ENTRY(cuLaunchKernel),
      FAKE_ENTRY(cuGraphInstantiateWithFlags),
      FAKE_ENTRY(cuGraphLaunch),
      FAKE_ENTRY(cuGraphExecDestroy),
      FAKE_ENTRY(cuGraphDestroy)};
#undef FAKE_ENTRY
  auto it = table.find(symbol);
  *fn = it != table.end() && version == 13000 ? it->second : nullptr;
  *status =
      *fn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_SUCCESS;
}

} // extern "C"
