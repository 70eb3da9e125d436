// CPU ranks on Gloo (docs/runtime/distributed.md): the shim that links
// libgloo is loaded on first use (GlooShimABI.h says why), a rendezvous
// store, and the Communicator over a Gloo context.
#pragma once

#include "runtime/dist/Communicator.h"
#include "runtime/dist/GlooShimABI.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace modelc::rt::dist {

/// The shim's functions; loads it once. An error (exit 2) when libgloo.so.0
/// or its dependencies are missing, naming the package to install.
Result<const modelc_gloo_api *> loadGloo();

/// A rendezvous store in memory, for ranks that are threads of one process.
/// A wait that outlasts its timeout fails naming the ranks whose keys never
/// came.
class LocalStore {
public:
  LocalStore();
  LocalStore(const LocalStore &) = delete;
  LocalStore &operator=(const LocalStore &) = delete;
  const modelc_gloo_store &callbacks() const { return callbacks_; }

private:
  static int set(void *self, const char *key, const void *data, size_t size,
                 char *err, size_t errSize);
  static int wait(void *self, const char *const *keys, size_t count,
                  int64_t timeoutMs, char *err, size_t errSize);
  static int get(void *self, const char *key,
                 void (*sink)(void *, const void *, size_t), void *sinkSelf,
                 char *err, size_t errSize);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::vector<char>> values_;
  modelc_gloo_store callbacks_;
};

class GlooCommunicator : public Communicator {
public:
  /// Rank `rank` of `size` joins through `store` on `hostname` (an address
  /// of this machine that the other ranks reach; 127.0.0.1 for one
  /// machine); joining and every collective fail after `timeout`.
  static Result<std::unique_ptr<GlooCommunicator>>
  connect(const modelc_gloo_store &store, int rank, int size,
          const std::string &hostname, std::chrono::milliseconds timeout);
  ~GlooCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status allReduceSum(float *data, size_t count) override;
  Status allReduceSum(double *data, size_t count) override;
  Status broadcast(void *data, size_t bytes, int root) override;
  Status barrier() override;

private:
  GlooCommunicator(const modelc_gloo_api *api, modelc_gloo_context *context,
                   int rank, int size)
      : api_(api), context_(context), rank_(rank), size_(size) {}
  Status failed(const char *what, const char *message) const;

  const modelc_gloo_api *api_;
  modelc_gloo_context *context_;
  int rank_, size_;
  /// Gloo matches a collective's messages by tag: each call takes the next.
  uint32_t nextTag_ = 1;
};

} // namespace modelc::rt::dist
