// Finds and loads libcuda and libcublasLt, resolves the function tables of
// CudaApi.h and turns CUresult/cublasStatus_t into Status messages.
#include "runtime/cuda/CudaApi.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <glob.h>
#include <map>
#include <memory>
#include <mutex>

namespace modelc::rt::cuda {

namespace {

/// The oldest driver whose cuGetProcAddress_v2 the loader needs.
constexpr int kMinDriverVersion = 12000;

std::string versionText(int version) {
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

std::string envOr(const char *name, const char *fallback) {
  const char *value = std::getenv(name);
  return value && *value ? value : fallback;
}

std::string lastDlError() {
  const char *e = dlerror();
  return e ? e : "unknown error";
}

Status noDriver(const std::string &why) {
  return Status::error("no CUDA driver (" + why + ")", kExitUsage);
}

/// What to do about a failed driver call when the caller has no better idea.
std::string_view hintFor(CUresult r) {
  switch (r) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "the GPU has too little free memory: free it (see nvidia-smi), "
           "use a smaller batch, or run with --cpu";
  case CUDA_ERROR_STUB_LIBRARY:
    return "this libcuda is the CUDA toolkit's stub, not the driver's: set "
           "MODELC_LIBCUDA to the driver's libcuda.so.1 or fix "
           "LD_LIBRARY_PATH";
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_DEVICE_UNAVAILABLE:
  case CUDA_ERROR_INVALID_DEVICE:
    return "no usable GPU: check nvidia-smi and CUDA_VISIBLE_DEVICES, or run "
           "with --cpu";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
  case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    return "the NVIDIA driver and libcuda do not match: update or reinstall "
           "the driver";
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
  case CUDA_ERROR_INVALID_IMAGE:
    return "the driver cannot load this program's GPU code: update the "
           "driver, or rebuild with modelc --arch sm_XX for this GPU";
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
    return "a GPU kernel failed and the CUDA context is lost; rerun with "
           "MODELC_CUDA_GRAPHS=0 CUDA_LAUNCH_BLOCKING=1 to find the step, and "
           "compare with --cpu";
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
  case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
  case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
  case CUDA_ERROR_STREAM_CAPTURE_ISOLATION:
  case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
  case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
    return "capturing the step as a CUDA graph failed; rerun with "
           "MODELC_CUDA_GRAPHS=0";
  default:
    return "run with --cpu to use the CPU instead";
  }
}

std::string_view hintFor(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "the GPU has too little free memory: free it (see nvidia-smi), "
           "use a smaller batch, or run with --cpu";
  case CUBLAS_STATUS_NOT_SUPPORTED:
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "cuBLASLt cannot do this GEMM on this GPU; run with --cpu";
  default:
    return "run with --cpu to use the CPU instead";
  }
}

/// Successful loads, keyed by the environment variable's value ("" when
/// unset), so that a test may point the variable elsewhere later.
template <typename Api> struct LoadCache {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<Api>> loaded;
};

Status resolveDriver(void *lib, DriverApi &api) {
  using GetProcAddress = decltype(&cuGetProcAddress_v2);
  auto getProcAddress =
      reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
  auto driverGetVersion = reinterpret_cast<decltype(&cuDriverGetVersion)>(
      dlsym(lib, "cuDriverGetVersion"));
  api.getErrorName =
      reinterpret_cast<decltype(&cuGetErrorName)>(dlsym(lib, "cuGetErrorName"));
  api.getErrorString = reinterpret_cast<decltype(&cuGetErrorString)>(
      dlsym(lib, "cuGetErrorString"));
  if (!getProcAddress || !driverGetVersion || !api.getErrorName ||
      !api.getErrorString)
    return noDriver(
        api.path + " lacks cuGetProcAddress_v2: it is older than CUDA " +
        versionText(kMinDriverVersion) + "; update the NVIDIA driver");
  if (CUresult r = driverGetVersion(&api.driverVersion); r != CUDA_SUCCESS)
    return noDriver("cuDriverGetVersion failed with " + api.describe(r) + "; " +
                    std::string(hintFor(r)));
  if (api.driverVersion < kMinDriverVersion)
    return noDriver(fmt::format(
        "the driver supports CUDA {}, modelc programs need {} or newer; "
        "update the NVIDIA driver",
        versionText(api.driverVersion), versionText(kMinDriverVersion)));
  // Ask for the ABI of the header we compiled against, or of the driver
  // when it is older (asking for a newer one is an error); the functions
  // used here kept their prototypes from 12.0 to CUDA_VERSION.
  int abi = std::min(api.driverVersion, CUDA_VERSION);
  auto resolve = [&](const char *symbol, void **fn) -> Status {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r =
        getProcAddress(symbol, fn, abi, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r != CUDA_SUCCESS)
      return noDriver(fmt::format("cuGetProcAddress({}) failed with {}; {}",
                                  symbol, api.describe(r), hintFor(r)));
    if (!*fn || found != CU_GET_PROC_ADDRESS_SUCCESS)
      return noDriver(fmt::format("{} has no {} for CUDA {}", api.path, symbol,
                                  versionText(abi)));
    return Status();
  };
#define MODELC_RESOLVE(member, symbol)                                         \
  {                                                                            \
    void *fn = nullptr;                                                        \
    MODELC_RETURN_IF_ERROR(resolve(#symbol, &fn));                             \
    api.member = reinterpret_cast<decltype(api.member)>(fn);                   \
  }
  MODELC_CUDA_DRIVER_FUNCTIONS(MODELC_RESOLVE)
#undef MODELC_RESOLVE
  return Status();
}

/// Opens `path` as cuBLASLt of our major version and resolves its table;
/// the reason it is not usable otherwise.
Result<std::unique_ptr<BlasLtApi>> openBlasLt(const std::string &path) {
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return Status::error(lastDlError());
  auto api = std::make_unique<BlasLtApi>();
  api->path = path;
  std::string missing;
#define MODELC_RESOLVE(member, symbol)                                         \
  api->member = reinterpret_cast<decltype(api->member)>(dlsym(lib, #symbol));  \
  if (!api->member && missing.empty())                                         \
    missing = #symbol;
  MODELC_CUBLASLT_FUNCTIONS(MODELC_RESOLVE)
#undef MODELC_RESOLVE
  if (!missing.empty()) {
    dlclose(lib);
    return Status::error(path + " has no " + missing);
  }
  api->version = api->getVersion();
  if (api->version / 10000 != CUBLAS_VER_MAJOR) {
    dlclose(lib);
    return Status::error(fmt::format(
        "{} is cuBLASLt {}.{}.{}, not {}", path, api->version / 10000,
        api->version / 100 % 100, api->version % 100, CUBLAS_VER_MAJOR));
  }
  return api;
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

std::string DriverApi::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (getErrorName && getErrorName(result, &name) == CUDA_SUCCESS && name) {
    if (getErrorString && getErrorString(result, &text) == CUDA_SUCCESS && text)
      return fmt::format("{} ({})", name, text);
    return name;
  }
  // The toolkit's stub libcuda names no error, not even its own.
  if (result == CUDA_ERROR_STUB_LIBRARY)
    return "CUDA_ERROR_STUB_LIBRARY (libcuda is a stub library)";
  return fmt::format("CUresult {}", static_cast<int>(result));
}

Status DriverApi::check(CUresult result, std::string_view call,
                        std::string_view what, std::string_view hint) const {
  if (result == CUDA_SUCCESS)
    return Status();
  std::string message = fmt::format("CUDA error: {}", call);
  if (!what.empty())
    message += fmt::format(" ({})", what);
  message += fmt::format(" failed with {}; {}", describe(result),
                         hint.empty() ? hintFor(result) : hint);
  return Status::error(message, kExitInternal);
}

Status BlasLtApi::check(cublasStatus_t status, std::string_view call,
                        std::string_view what) const {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status();
  std::string message = fmt::format("cuBLASLt error: {}", call);
  if (!what.empty())
    message += fmt::format(" ({})", what);
  message += fmt::format(" failed with {} ({}); {}", getStatusName(status),
                         getStatusString(status), hintFor(status));
  return Status::error(message, kExitInternal);
}

Result<const DriverApi *> loadDriver() {
  static LoadCache<DriverApi> cache;
  const char *env = std::getenv("MODELC_LIBCUDA");
  std::string key = env ? env : "";
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (auto it = cache.loaded.find(key); it != cache.loaded.end())
    return static_cast<const DriverApi *>(it->second.get());
  auto api = std::make_unique<DriverApi>();
  api->path = key.empty() ? "libcuda.so.1" : key;
  void *lib = dlopen(api->path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return noDriver(key.empty()
                        ? "libcuda.so.1 not found"
                        : "MODELC_LIBCUDA=" + key + ": " + lastDlError());
  // A library that does not resolve stays open: libcuda is not meant to be
  // unloaded, and nothing else of it runs.
  MODELC_RETURN_IF_ERROR(resolveDriver(lib, *api));
  const DriverApi *result = api.get();
  cache.loaded.emplace(key, std::move(api));
  return result;
}

std::vector<std::string> cublasLtCandidates() {
  const std::string lib = fmt::format("libcublasLt.so.{}", CUBLAS_VER_MAJOR);
  const std::string cu = fmt::format("cu{}", CUBLAS_VER_MAJOR);
  std::vector<std::string> patterns = {lib, "libcublasLt.so"};
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (std::string home = envOr(var, ""); !home.empty())
      patterns.push_back(home + "/lib64/" + lib);
  patterns.push_back("/usr/local/cuda/lib64/" + lib);
  patterns.push_back(
      fmt::format("/usr/local/cuda-{}*/lib64/{}", CUBLAS_VER_MAJOR, lib));
  // pip wheels: nvidia-cublas (CUDA 13: nvidia/cu13/lib, before that
  // nvidia/cublas/lib) inside virtual environments and system Pythons.
  for (const char *site : {"/opt/*/.venv/lib/python3*/site-packages",
                           "/opt/*/venv/lib/python3*/site-packages",
                           "/opt/*/lib/python3*/site-packages",
                           "/usr/local/lib/python3*/dist-packages",
                           "/usr/local/lib/python3*/site-packages",
                           "/usr/lib/python3/dist-packages"})
    for (const std::string &dir : {cu, std::string("cublas")})
      patterns.push_back(fmt::format("{}/nvidia/{}/lib/{}", site, dir, lib));
  return patterns;
}

Result<const BlasLtApi *> loadBlasLt() {
  static LoadCache<BlasLtApi> cache;
  const char *env = std::getenv("MODELC_CUBLASLT");
  std::string key = env ? env : "";
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (auto it = cache.loaded.find(key); it != cache.loaded.end())
    return static_cast<const BlasLtApi *>(it->second.get());
  std::vector<std::string> paths;
  if (!key.empty())
    paths.push_back(key);
  else
    for (const std::string &pattern : cublasLtCandidates())
      for (std::string &path : expand(pattern))
        paths.push_back(std::move(path));
  std::string skipped;
  for (const std::string &path : paths) {
    Result<std::unique_ptr<BlasLtApi>> api = openBlasLt(path);
    if (api) {
      const BlasLtApi *result = api->get();
      cache.loaded.emplace(key, api.take());
      return result;
    }
    // "not found" is the common case of a search; say only the surprises.
    const std::string &why = api.status().message();
    if (!key.empty() || why.find("No such file") == std::string::npos)
      skipped += "; " + why;
  }
  if (!key.empty())
    return Status::error("cuBLASLt not usable (MODELC_CUBLASLT=" + key +
                             skipped + "); run with --cpu to use the CPU",
                         kExitUsage);
  return Status::error(
      fmt::format("cuBLASLt {0} (libcublasLt.so.{0}) not found in the "
                  "loader's path, $CUDA_HOME, /usr/local/cuda or the nvidia "
                  "pip packages under /opt and /usr/local{1}; set "
                  "MODELC_CUBLASLT to its path, or run with --cpu",
                  CUBLAS_VER_MAJOR, skipped),
      kExitUsage);
}

} // namespace modelc::rt::cuda
