// The Gloo shim (runtime/dist/GlooShimABI.h): the only code that links
// libgloo. A shared object embedded in the runtime and loaded when CPU
// ranks are asked for; it turns the runtime's store callbacks into a
// gloo::rendezvous::Store and Gloo's exceptions into messages.
#include "runtime/dist/GlooShimABI.h"

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

struct modelc_gloo_context {
  std::shared_ptr<gloo::rendezvous::Context> context;
};

namespace {

void setError(char *err, size_t size, const char *what) {
  if (err && size)
    std::snprintf(err, size, "%s", what);
}

/// The runtime's store as Gloo's: a failed call throws gloo::IoException
/// with the runtime's message, which connect() hands back.
class CallbackStore : public gloo::rendezvous::Store {
public:
  explicit CallbackStore(const modelc_gloo_store &store, int64_t timeoutMs)
      : store_(store), timeoutMs_(timeoutMs) {}

  void set(const std::string &key, const std::vector<char> &data) override {
    char err[512] = "";
    if (store_.set(store_.self, key.c_str(), data.data(), data.size(), err,
                   sizeof(err)) != 0)
      throw gloo::IoException(err);
  }

  /// Gloo expects get() to block until the key is there.
  std::vector<char> get(const std::string &key) override {
    wait({key});
    std::vector<char> value;
    char err[512] = "";
    auto sink = [](void *self, const void *data, size_t size) {
      auto *out = static_cast<std::vector<char> *>(self);
      out->assign(static_cast<const char *>(data),
                  static_cast<const char *>(data) + size);
    };
    if (store_.get(store_.self, key.c_str(), sink, &value, err, sizeof(err)) !=
        0)
      throw gloo::IoException(err);
    return value;
  }

  void wait(const std::vector<std::string> &keys) override {
    wait(keys, std::chrono::milliseconds(timeoutMs_));
  }

  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &timeout) override {
    std::vector<const char *> names;
    for (const std::string &key : keys)
      names.push_back(key.c_str());
    char err[512] = "";
    if (store_.wait(store_.self, names.data(), names.size(), timeout.count(),
                    err, sizeof(err)) != 0)
      throw gloo::IoException(err);
  }

private:
  modelc_gloo_store store_;
  int64_t timeoutMs_;
};

/// Runs `body`; a Gloo (or any) exception becomes -1 and its message.
template <typename Body> int guarded(char *err, size_t size, Body body) {
  try {
    body();
    return 0;
  } catch (const std::exception &e) {
    setError(err, size, e.what());
  } catch (...) {
    setError(err, size, "an unknown exception in Gloo");
  }
  return -1;
}

modelc_gloo_context *connect(const modelc_gloo_store *store, int rank,
                             int size, const char *hostname,
                             int64_t timeoutMs, char *err, size_t errSize) {
  auto out = std::make_unique<modelc_gloo_context>();
  int status = guarded(err, errSize, [&] {
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname;
    std::shared_ptr<gloo::transport::Device> device =
        gloo::transport::tcp::CreateDevice(attr);
    out->context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    out->context->setTimeout(std::chrono::milliseconds(timeoutMs));
    CallbackStore callbacks(*store, timeoutMs);
    out->context->connectFullMesh(callbacks, device);
  });
  return status == 0 ? out.release() : nullptr;
}

int allreduceSum(modelc_gloo_context *c, void *data, size_t count, int dtype,
                 uint32_t tag, char *err, size_t errSize) {
  return guarded(err, errSize, [&] {
    gloo::AllreduceOptions options(c->context);
    options.setTag(tag);
    if (dtype == MODELC_GLOO_F64) {
      options.setOutput(static_cast<double *>(data), count);
      options.setReduceFunction(
          static_cast<void (*)(void *, const void *, const void *, size_t)>(
              &gloo::sum<double>));
    } else {
      options.setOutput(static_cast<float *>(data), count);
      options.setReduceFunction(
          static_cast<void (*)(void *, const void *, const void *, size_t)>(
              &gloo::sum<float>));
    }
    gloo::allreduce(options);
  });
}

int broadcast(modelc_gloo_context *c, void *data, size_t bytes, int root,
              uint32_t tag, char *err, size_t errSize) {
  return guarded(err, errSize, [&] {
    gloo::BroadcastOptions options(c->context);
    options.setTag(tag);
    options.setRoot(root);
    options.setOutput(static_cast<uint8_t *>(data), bytes);
    gloo::broadcast(options);
  });
}

int barrier(modelc_gloo_context *c, uint32_t tag, char *err, size_t errSize) {
  return guarded(err, errSize, [&] {
    gloo::BarrierOptions options(c->context);
    options.setTag(tag);
    gloo::barrier(options);
  });
}

void destroy(modelc_gloo_context *c) { delete c; }

const modelc_gloo_api kApi = {MODELC_GLOO_ABI_VERSION, connect, allreduceSum,
                              broadcast, barrier, destroy};

} // namespace

extern "C" __attribute__((visibility("default"))) const modelc_gloo_api *
modelc_gloo_get_api(void) {
  return &kApi;
}
