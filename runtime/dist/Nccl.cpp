// GPU ranks on NCCL (Nccl.h): finding and loading libnccl, the unique id,
// the Communicator with its asynchronous-error checks and abort, its scaled
// all-reduce of gradient buckets, and the Communicator of host memory.
#include "runtime/dist/Nccl.h"

#include "runtime/cuda/CudaApi.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <glob.h>
#include <iterator>
#include <map>
#include <mutex>

namespace modelc::rt::dist {

namespace {

constexpr const char *kInstallHint =
    "install NCCL 2 (Debian, Ubuntu with NVIDIA's CUDA repository: apt "
    "install libnccl2; pip: nvidia-nccl-cu13) or set MODELC_LIBNCCL to "
    "its libnccl.so.2";

std::string lastDlError() {
  const char *e = dlerror();
  return e ? e : "unknown error";
}

/// Opens `path` as NCCL of at least kMinNcclVersion and resolves its table;
/// the reason it is not usable otherwise.
Result<std::unique_ptr<NcclApi>> openNccl(const std::string &path) {
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return Status::error(lastDlError());
  auto api = std::make_unique<NcclApi>();
  api->path = path;
  // The version first: an old library is named as old, not as lacking a
  // function.
  auto getVersion =
      reinterpret_cast<decltype(&ncclGetVersion)>(dlsym(lib, "ncclGetVersion"));
  if (!getVersion || getVersion(&api->version) != ncclSuccess) {
    dlclose(lib);
    return Status::error(path + " has no working ncclGetVersion");
  }
  if (api->version < kMinNcclVersion) {
    dlclose(lib);
    return Status::error(fmt::format("{} is NCCL {}, older than {}", path,
                                     ncclVersionText(api->version),
                                     ncclVersionText(kMinNcclVersion)));
  }
  std::string missing;
#define MODELC_RESOLVE(member, symbol)                                         \
  api->member = reinterpret_cast<decltype(api->member)>(dlsym(lib, #symbol));  \
  if (!api->member && missing.empty())                                         \
    missing = #symbol;
  MODELC_NCCL_FUNCTIONS(MODELC_RESOLVE)
#undef MODELC_RESOLVE
  if (!missing.empty()) {
    dlclose(lib);
    return Status::error(path + " has no " + missing);
  }
  return api;
}

/// ": NCCL's last error message", when it has one (for NCCL 2.19 to 2.28
/// the last error of the process, whatever communicator is given).
std::string lastError(const NcclApi &api, ncclComm_t comm) {
  const char *last = api.getLastError(comm);
  return last && *last ? std::string(": ") + last : "";
}

std::vector<std::string> expand(const std::string &pattern) {
  if (pattern.find('*') == std::string::npos)
    return {pattern};
  std::vector<std::string> paths;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i)
      paths.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  return paths;
}

} // namespace

std::string ncclVersionText(int version) {
  // NCCL_VERSION: X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z since.
  if (version < 10000)
    return fmt::format("{}.{}.{}", version / 1000, version / 100 % 10,
                       version % 100);
  return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100,
                     version % 100);
}

std::string NcclApi::describe(ncclResult_t result) const {
  static const char *const names[] = {
      "ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
      "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
      "ncclRemoteError",   "ncclInProgress"};
  const char *text = getErrorString ? getErrorString(result) : nullptr;
  std::string name = unsigned(result) < std::size(names)
                         ? names[result]
                         : fmt::format("ncclResult_t {}", int(result));
  return text && *text ? fmt::format("{} ({})", name, text) : name;
}

std::vector<std::string> ncclCandidates() {
  const std::string lib = "libnccl.so.2";
  std::vector<std::string> patterns = {lib};
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *home = std::getenv(var); home && *home)
      for (const char *dir : {"/lib/", "/lib64/"})
        patterns.push_back(std::string(home) + dir + lib);
  for (const char *dir : {"/usr/local/cuda/lib/", "/usr/local/cuda/lib64/"})
    patterns.push_back(dir + lib);
  // pip wheels: nvidia-nccl-cu12/cu13 install nvidia/nccl/lib/libnccl.so.2.
  for (const char *site : {"/opt/*/.venv/lib/python3*/site-packages",
                           "/opt/*/venv/lib/python3*/site-packages",
                           "/opt/*/lib/python3*/site-packages",
                           "/usr/local/lib/python3*/dist-packages",
                           "/usr/local/lib/python3*/site-packages",
                           "/usr/lib/python3/dist-packages"})
    patterns.push_back(fmt::format("{}/nvidia/nccl/lib/{}", site, lib));
  return patterns;
}

Result<const NcclApi *> loadNccl() {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<NcclApi>> loaded;
  const char *env = std::getenv("MODELC_LIBNCCL");
  std::string key = env ? env : "";
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(key); it != loaded.end())
    return static_cast<const NcclApi *>(it->second.get());
  std::vector<std::string> paths;
  if (!key.empty())
    paths.push_back(key);
  else
    for (const std::string &pattern : ncclCandidates())
      for (std::string &path : expand(pattern))
        paths.push_back(std::move(path));
  std::string skipped;
  for (const std::string &path : paths) {
    Result<std::unique_ptr<NcclApi>> api = openNccl(path);
    if (api) {
      const NcclApi *result = api->get();
      loaded.emplace(key, api.take());
      return result;
    }
    // "not found" is the common case of a search; say only the surprises.
    const std::string &why = api.status().message();
    if (!key.empty() || why.find("No such file") == std::string::npos)
      skipped += "; " + why;
  }
  if (!key.empty())
    return Status::error(
        fmt::format("GPU ranks use NCCL, which could not be loaded "
                    "(MODELC_LIBNCCL={}{}); {}",
                    key, skipped, kInstallHint),
        kExitUsage);
  return Status::error(
      fmt::format("GPU ranks use NCCL {}.{} or newer (libnccl.so.2), not found "
                  "in the loader's path, $CUDA_HOME, /usr/local/cuda or the "
                  "nvidia pip packages under /opt and /usr/local{}; {}",
                  kMinNcclVersion / 10000, kMinNcclVersion / 100 % 100, skipped,
                  kInstallHint),
      kExitUsage);
}

Result<NcclId> createNcclId() {
  Result<const NcclApi *> api = loadNccl();
  if (!api)
    return api.status();
  ncclUniqueId id;
  if (ncclResult_t r = (*api)->getUniqueId(&id); r != ncclSuccess)
    return Status::error("NCCL error: ncclGetUniqueId failed with " +
                             (*api)->describe(r),
                         kExitInternal);
  NcclId bytes;
  std::memcpy(bytes.data(), id.internal, bytes.size());
  return bytes;
}

Result<std::unique_ptr<NcclCommunicator>>
NcclCommunicator::connect(const NcclId &id, int rank, int size, int device,
                          CUstream stream) {
  Result<const NcclApi *> api = loadNccl();
  if (!api)
    return api.status();
  std::string who = fmt::format("rank {} of {} (GPU {})", rank, size, device);
  ncclUniqueId uid;
  std::memcpy(uid.internal, id.data(), id.size());
  ncclComm_t comm = nullptr;
  if (ncclResult_t r = (*api)->commInitRank(&comm, size, uid, rank);
      r != ncclSuccess) {
    return Status::error(fmt::format("{}: NCCL error: ncclCommInitRank failed "
                                     "with {}{}",
                                     who, (*api)->describe(r),
                                     lastError(**api, nullptr)),
                         kExitInternal);
  }
  int actual = -1;
  ncclResult_t r = (*api)->commCuDevice(comm, &actual);
  if (r != ncclSuccess || actual != device) {
    (*api)->commAbort(comm);
    return Status::error(
        r != ncclSuccess
            ? fmt::format("{}: NCCL error: ncclCommCuDevice failed with {}",
                          who, (*api)->describe(r))
            : fmt::format("{}: NCCL joined on GPU {}: the thread must make "
                          "GPU {}'s context current before connecting",
                          who, actual, device),
        kExitInternal);
  }
  return std::unique_ptr<NcclCommunicator>(
      new NcclCommunicator(*api, comm, rank, size, device, stream));
}

NcclCommunicator::~NcclCommunicator() {
  if (!aborted_.exchange(true)) {
    if (error_.ok()) {
      for (const auto &[key, op] : scaledSums_)
        api_->redOpDestroy(op, comm_);
      api_->commDestroy(comm_);
    } else {
      api_->commAbort(comm_);
    }
  }
  // After the communicator: destroying it waits for its queued work.
  if (barrierElement_)
    api_->memFree(barrierElement_);
}

void NcclCommunicator::abort() {
  if (aborted_.exchange(true))
    return;
  api_->commAbort(comm_);
}

Status NcclCommunicator::fail(std::string message) {
  if (error_.ok())
    error_ = Status::error(fmt::format("rank {} of {} (GPU {}): {}", rank_,
                                       size_, device_, message),
                           kExitInternal);
  return error_;
}

Status NcclCommunicator::ready(std::string_view call) {
  if (!error_.ok())
    return error_;
  if (aborted_)
    return fail(
        fmt::format("NCCL {} after the communicator was aborted", call));
  return asyncError(fmt::format("before the {}", call));
}

Status NcclCommunicator::asyncError(std::string_view when) {
  // An aborted communicator may be freed: ask it nothing. Its kernels end
  // without a CUDA error, so a wait that returns says nothing either.
  if (aborted_)
    return fail(
        fmt::format("NCCL error {}: the communicator was aborted", when));
  ncclResult_t async = ncclSuccess;
  if (ncclResult_t r = api_->commGetAsyncError(comm_, &async); r != ncclSuccess)
    return fail(fmt::format("NCCL error: ncclCommGetAsyncError failed with {}",
                            api_->describe(r)));
  if (async != ncclSuccess && async != ncclInProgress)
    return fail(fmt::format("NCCL reported an error {}: {}{}", when,
                            api_->describe(async), lastError(*api_, comm_)));
  return Status();
}

Status NcclCommunicator::check(ncclResult_t result, std::string_view call) {
  // abort() from another thread is why a blocked call returns: the
  // communicator is gone, so ask it nothing more.
  if (aborted_)
    return fail(
        fmt::format("NCCL {} failed: the communicator was aborted", call));
  if (result != ncclSuccess)
    return fail(fmt::format("NCCL {} failed with {}{}", call,
                            api_->describe(result), lastError(*api_, comm_)));
  return asyncError(fmt::format("during the {}", call));
}

Status NcclCommunicator::allReduce(void *data, size_t count,
                                   ncclDataType_t type) {
  MODELC_RETURN_IF_ERROR(ready("all-reduce"));
  return check(
      api_->allReduce(data, data, count, type, ncclSum, comm_, stream_),
      "all-reduce");
}

Status NcclCommunicator::allReduceSum(float *data, size_t count) {
  return allReduce(data, count, ncclFloat32);
}

Status NcclCommunicator::allReduceSum(double *data, size_t count) {
  return allReduce(data, count, ncclFloat64);
}

Status NcclCommunicator::broadcast(void *data, size_t bytes, int root) {
  MODELC_RETURN_IF_ERROR(ready("broadcast"));
  return check(
      api_->broadcast(data, data, bytes, ncclUint8, root, comm_, stream_),
      "broadcast");
}

Result<ncclRedOp_t> NcclCommunicator::scaledSum(bool f64, double scale) {
  if (scale == 1)
    return ncclSum;
  auto key = std::make_pair(f64, scale);
  if (auto it = scaledSums_.find(key); it != scaledSums_.end())
    return it->second;
  // ncclScalarHostImmediate: NCCL reads the scalar, of the buffers' type,
  // before it returns.
  float f32Scale = float(scale);
  double f64Scale = scale;
  ncclRedOp_t op;
  MODELC_RETURN_IF_ERROR(check(
      api_->redOpCreatePreMulSum(
          &op, f64 ? static_cast<void *>(&f64Scale) : &f32Scale,
          f64 ? ncclFloat64 : ncclFloat32, ncclScalarHostImmediate, comm_),
      "scaled all-reduce's ncclRedOpCreatePreMulSum"));
  scaledSums_.emplace(key, op);
  return op;
}

Status NcclCommunicator::allReduceScaled(const std::vector<NcclBuffer> &buffers,
                                         double scale, CUstream stream) {
  MODELC_RETURN_IF_ERROR(ready("scaled all-reduce"));
  // The reductions first: NCCL's group is for collectives.
  ncclRedOp_t ops[2] = {ncclSum, ncclSum}; // f32, f64
  for (bool f64 : {false, true})
    if (std::any_of(buffers.begin(), buffers.end(),
                    [&](const NcclBuffer &b) { return b.f64 == f64; })) {
      Result<ncclRedOp_t> op = scaledSum(f64, scale);
      if (!op)
        return op.status();
      ops[f64] = *op;
    }
  MODELC_RETURN_IF_ERROR(
      check(api_->groupStart(), "scaled all-reduce's ncclGroupStart"));
  ncclResult_t result = ncclSuccess;
  for (const NcclBuffer &b : buffers) {
    result = api_->allReduce(b.data, b.data, b.count,
                             b.f64 ? ncclFloat64 : ncclFloat32, ops[b.f64],
                             comm_, stream);
    if (result != ncclSuccess)
      break;
  }
  // The group is ended also after a failed call: NCCL's group state is the
  // thread's, and a group left open would swallow its next calls.
  ncclResult_t end = api_->groupEnd();
  return check(result != ncclSuccess ? result : end, "scaled all-reduce");
}

Status NcclCommunicator::barrier() {
  MODELC_RETURN_IF_ERROR(ready("barrier"));
  if (!barrierElement_) {
    void *p = nullptr;
    MODELC_RETURN_IF_ERROR(
        check(api_->memAlloc(&p, sizeof(float)), "barrier's allocation"));
    barrierElement_ = static_cast<float *>(p);
  }
  MODELC_RETURN_IF_ERROR(
      check(api_->allReduce(barrierElement_, barrierElement_, 1, ncclFloat32,
                            ncclSum, comm_, stream_),
            "barrier"));
  Result<const cuda::DriverApi *> driver = cuda::loadDriver();
  if (!driver)
    return fail("the barrier cannot wait for its stream: " +
                driver.status().message());
  if (Status s = (*driver)->check((*driver)->streamSynchronize(stream_),
                                  "cuStreamSynchronize", "NCCL barrier");
      !s.ok())
    return fail(s.message());
  return asyncError("during the barrier");
}

NcclHostCommunicator::~NcclHostCommunicator() {
  if (scratch_)
    device_.api().memFree(scratch_);
}

Status NcclHostCommunicator::fail(std::string message) {
  if (error_.ok())
    error_ = Status::error(fmt::format("rank {} of {} (GPU {}): {}", rank(),
                                       size(), device_.device(), message),
                           kExitInternal);
  return error_;
}

template <typename Collective>
Status NcclHostCommunicator::throughScratch(void *data, size_t bytes,
                                            bool upload, std::string_view what,
                                            Collective collective) {
  if (!error_.ok())
    return error_;
  Result<const cuda::DriverApi *> loaded = cuda::loadDriver();
  if (!loaded)
    return fail(fmt::format("the host {} cannot copy to the GPU: {}", what,
                            loaded.status().message()));
  const cuda::DriverApi &d = **loaded;
  if (bytes > capacity_) {
    // Grown by doubling, so that a size that creeps up reallocates rarely.
    size_t grown = std::max(bytes, 2 * capacity_);
    if (scratch_)
      device_.api().memFree(scratch_);
    scratch_ = nullptr;
    capacity_ = 0;
    if (ncclResult_t r = device_.api().memAlloc(&scratch_, grown);
        r != ncclSuccess) {
      scratch_ = nullptr;
      return fail(fmt::format("NCCL error: ncclMemAlloc of {} bytes for the "
                              "host {} failed with {}",
                              grown, what, device_.api().describe(r)));
    }
    capacity_ = grown;
  }
  CUstream stream = device_.stream();
  auto scratch = CUdeviceptr(reinterpret_cast<uintptr_t>(scratch_));
  std::string context = fmt::format("host {}", what);
  auto checked = [&](CUresult r, std::string_view call) {
    Status s = d.check(r, call, context);
    return s.ok() ? s : fail(s.message());
  };
  if (upload)
    MODELC_RETURN_IF_ERROR(checked(
        d.memcpyHtoDAsync(scratch, data, bytes, stream), "cuMemcpyHtoDAsync"));
  MODELC_RETURN_IF_ERROR(collective(scratch_));
  MODELC_RETURN_IF_ERROR(checked(
      d.memcpyDtoHAsync(data, scratch, bytes, stream), "cuMemcpyDtoHAsync"));
  MODELC_RETURN_IF_ERROR(
      checked(d.streamSynchronize(stream), "cuStreamSynchronize"));
  // An abort ends the collective's kernels early and without an error: the
  // data is then not the reduction.
  return device_.healthy(fmt::format("during the host {}", what));
}

Status NcclHostCommunicator::allReduceSum(float *data, size_t count) {
  if (count == 0)
    return error_;
  return throughScratch(
      data, count * sizeof(float), true, "all-reduce", [&](void *scratch) {
        return device_.allReduceSum(static_cast<float *>(scratch), count);
      });
}

Status NcclHostCommunicator::allReduceSum(double *data, size_t count) {
  if (count == 0)
    return error_;
  return throughScratch(
      data, count * sizeof(double), true, "all-reduce", [&](void *scratch) {
        return device_.allReduceSum(static_cast<double *>(scratch), count);
      });
}

Status NcclHostCommunicator::broadcast(void *data, size_t bytes, int root) {
  if (bytes == 0)
    return error_;
  // Only the root's bytes matter: the others' are overwritten.
  return throughScratch(
      data, bytes, rank() == root, "broadcast",
      [&](void *scratch) { return device_.broadcast(scratch, bytes, root); });
}

} // namespace modelc::rt::dist
