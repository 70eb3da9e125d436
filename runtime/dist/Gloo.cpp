// CPU ranks on Gloo (Gloo.h): loading the embedded shim, the in-memory
// rendezvous store, and the Communicator.
#include "runtime/dist/Gloo.h"

#include "runtime/dist/Rendezvous.h"
#include "runtime/dist/Shim.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

/// The shim (runtime/dist/shim/GlooShim.cpp) as built, embedded by the
/// build (runtime/CMakeLists.txt).
extern "C" const unsigned char modelc_gloo_shim_image[];
extern "C" const size_t modelc_gloo_shim_image_size;

namespace modelc::rt::dist {

namespace {

void setError(char *err, size_t size, const std::string &message) {
  if (err && size)
    std::snprintf(err, size, "%s", message.c_str());
}

} // namespace

Result<const modelc_gloo_api *> loadGloo() {
  static Result<const void *> api = loadShim(
      {modelc_gloo_shim_image, modelc_gloo_shim_image_size,
       "modelc_gloo_get_api",
       "CPU ranks (--ranks, --nnodes on the CPU) use Gloo", "libgloo0",
       MODELC_GLOO_ABI_VERSION});
  if (!api)
    return api.status();
  return static_cast<const modelc_gloo_api *>(*api);
}

LocalStore::LocalStore()
    : callbacks_{this, &LocalStore::set, &LocalStore::wait, &LocalStore::get} {
}

int LocalStore::set(void *self, const char *key, const void *data, size_t size,
                    char *, size_t) {
  auto *store = static_cast<LocalStore *>(self);
  {
    std::lock_guard<std::mutex> lock(store->mutex_);
    const char *bytes = static_cast<const char *>(data);
    store->values_[key].assign(bytes, bytes + size);
  }
  store->changed_.notify_all();
  return 0;
}

int LocalStore::wait(void *self, const char *const *keys, size_t count,
                     int64_t timeoutMs, char *err, size_t errSize) {
  auto *store = static_cast<LocalStore *>(self);
  std::unique_lock<std::mutex> lock(store->mutex_);
  auto missing = [&] {
    std::vector<std::string> out;
    for (size_t i = 0; i < count; ++i)
      if (!store->values_.count(keys[i]))
        out.push_back(describeRendezvousKey(keys[i]));
    return out;
  };
  bool ready = store->changed_.wait_for(
      lock, std::chrono::milliseconds(timeoutMs),
      [&] { return missing().empty(); });
  if (ready)
    return 0;
  setError(err, errSize,
           fmt::format("the rendezvous timed out after {} s: {} did not join",
                       double(timeoutMs) / 1000, fmt::join(missing(), ", ")));
  return -1;
}

int LocalStore::get(void *self, const char *key,
                    void (*sink)(void *, const void *, size_t), void *sinkSelf,
                    char *err, size_t errSize) {
  auto *store = static_cast<LocalStore *>(self);
  std::lock_guard<std::mutex> lock(store->mutex_);
  auto it = store->values_.find(key);
  if (it == store->values_.end()) {
    setError(err, errSize,
             fmt::format("the rendezvous has no value for {}",
                         describeRendezvousKey(key)));
    return -1;
  }
  sink(sinkSelf, it->second.data(), it->second.size());
  return 0;
}

Result<std::unique_ptr<GlooCommunicator>>
GlooCommunicator::connect(const modelc_gloo_store &store, int rank, int size,
                          const std::string &hostname,
                          std::chrono::milliseconds timeout) {
  Result<const modelc_gloo_api *> api = loadGloo();
  if (!api)
    return api.status();
  char err[512] = "";
  modelc_gloo_context *context =
      (*api)->connect(&store, rank, size, hostname.c_str(), timeout.count(),
                      err, sizeof(err));
  if (!context)
    return Status::error(fmt::format("rank {} of {}: {}", rank, size, err),
                         kExitLostRank);
  return std::unique_ptr<GlooCommunicator>(
      new GlooCommunicator(*api, context, rank, size));
}

GlooCommunicator::~GlooCommunicator() { api_->destroy(context_); }

Status GlooCommunicator::failed(const char *what, const char *message) const {
  // The trainer says which rank speaks.
  return Status::error(fmt::format("Gloo {}: {}", what, message),
                       kExitLostRank);
}

Status GlooCommunicator::allReduceSum(float *data, size_t count) {
  char err[512] = "";
  if (api_->allreduce_sum(context_, data, count, MODELC_GLOO_F32, nextTag_++,
                          err, sizeof(err)) != 0)
    return failed("all-reduce", err);
  return Status();
}

Status GlooCommunicator::allReduceSum(double *data, size_t count) {
  char err[512] = "";
  if (api_->allreduce_sum(context_, data, count, MODELC_GLOO_F64, nextTag_++,
                          err, sizeof(err)) != 0)
    return failed("all-reduce", err);
  return Status();
}

Status GlooCommunicator::broadcast(void *data, size_t bytes, int root) {
  char err[512] = "";
  if (api_->broadcast(context_, data, bytes, root, nextTag_++, err,
                      sizeof(err)) != 0)
    return failed("broadcast", err);
  return Status();
}

Status GlooCommunicator::barrier() {
  char err[512] = "";
  if (api_->barrier(context_, nextTag_++, err, sizeof(err)) != 0)
    return failed("barrier", err);
  return Status();
}

} // namespace modelc::rt::dist
