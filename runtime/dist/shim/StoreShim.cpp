// The rendezvous-store shim (runtime/dist/StoreShimABI.h): the only code
// that links cpp-httplib. Process 0 serves a key-value store in memory;
// every process reaches it with one HTTP request per call.
#include "runtime/dist/StoreShimABI.h"

#include <httplib.h>
#include <netinet/in.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void setError(char *err, size_t size, const std::string &what) {
  if (err && size)
    std::snprintf(err, size, "%s", what.c_str());
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      out.push_back(line);
  return out;
}

/// The store: values and when each was last set.
class Store {
public:
  void set(const std::string &key, std::string value) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      values_[key] = {std::move(value), Clock::now()};
    }
    changed_.notify_all();
  }

  /// The keys still missing after waiting up to `wait` (none: all there);
  /// false when the server stopped meanwhile.
  bool wait(const std::vector<std::string> &keys, std::chrono::milliseconds wait,
            std::vector<std::string> &missing) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto findMissing = [&] {
      missing.clear();
      for (const std::string &key : keys)
        if (!values_.count(key))
          missing.push_back(key);
      return missing.empty() || stopping_;
    };
    changed_.wait_for(lock, wait, findMissing);
    return !stopping_;
  }

  bool get(const std::string &key, std::string &value) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = values_.find(key);
    if (it == values_.end())
      return false;
    value = it->second.value;
    return true;
  }

  bool age(const std::string &key, int64_t &ms) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = values_.find(key);
    if (it == values_.end())
      return false;
    ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                               it->second.set)
             .count();
    return true;
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
  }

private:
  struct Entry {
    std::string value;
    Clock::time_point set;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Entry> values_;
  bool stopping_ = false;
};

} // namespace

struct modelc_store_server {
  Store store;
  httplib::Server http;
  std::thread thread;
  std::atomic<bool> ended{false};
};

namespace {

/// Every answer carries it: a client that gets an answer without it has
/// reached some other server on the port.
constexpr const char *kMarker = "X-Modelc-Store";

void defineRoutes(modelc_store_server &s) {
  Store &store = s.store;
  s.http.set_post_routing_handler(
      [](const httplib::Request &, httplib::Response &res) {
        res.set_header(kMarker, "1");
      });
  s.http.Post("/set", [&store](const httplib::Request &req,
                               httplib::Response &) {
    store.set(req.get_header_value("X-Key"), req.body);
  });
  s.http.Post("/wait", [&store](const httplib::Request &req,
                                httplib::Response &res) {
    int64_t ms = std::atoll(req.get_header_value("X-Wait-Ms").c_str());
    std::vector<std::string> missing;
    if (!store.wait(lines(req.body), std::chrono::milliseconds(ms), missing)) {
      res.status = 503;
      res.set_content("the rendezvous server is stopping", "text/plain");
    } else if (!missing.empty()) {
      std::string text;
      for (const std::string &key : missing)
        text += key + "\n";
      res.status = 404;
      res.set_content(text, "text/plain");
    }
  });
  s.http.Get("/get", [&store](const httplib::Request &req,
                              httplib::Response &res) {
    std::string value;
    if (store.get(req.get_header_value("X-Key"), value))
      res.set_content(value, "application/octet-stream");
    else
      res.status = 404;
  });
  s.http.Get("/age", [&store](const httplib::Request &req,
                              httplib::Response &res) {
    int64_t ms = 0;
    if (store.age(req.get_header_value("X-Key"), ms))
      res.set_content(std::to_string(ms), "text/plain");
    else
      res.status = 404;
  });
}

modelc_store_server *serve(int port, int ipv6, int clients, char *err,
                           size_t errSize) {
  auto server = std::make_unique<modelc_store_server>();
  size_t threads = size_t(clients > 0 ? clients : 1) + 4;
  server->http.new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  // SO_REUSEADDR (a restarted master binds at once) but not httplib's
  // default SO_REUSEPORT, with which a second run on the same port would
  // share it silently instead of being refused.
  server->http.set_socket_options([](int sock) {
    int yes = 1, no = 0;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    // Dual stack where the socket is IPv6 (fails harmlessly on IPv4).
    ::setsockopt(sock, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof(no));
  });
  defineRoutes(*server);
  // "::" takes IPv4 too (httplib clears IPV6_V6ONLY); a machine without
  // IPv6 gets 0.0.0.0.
  bool bound = server->http.bind_to_port("::", port) ||
               (!ipv6 && server->http.bind_to_port("0.0.0.0", port));
  if (!bound) {
    setError(err, errSize,
             "cannot serve the rendezvous on port " + std::to_string(port) +
                 ": it is in use or not allowed (is another run using it? "
                 "pick another --master port)");
    return nullptr;
  }
  modelc_store_server *s = server.get();
  server->thread = std::thread([s] {
    s->http.listen_after_bind();
    s->ended = true;
  });
  // Until it runs, stop() would not stop it.
  while (!s->http.is_running() && !s->ended)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (s->ended) {
    s->thread.join();
    setError(err, errSize,
             "cannot serve the rendezvous on port " + std::to_string(port) +
                 ": the server stopped at once");
    return nullptr;
  }
  return server.release();
}

void stop(modelc_store_server *server) {
  server->store.stop();
  server->http.stop();
  if (server->thread.joinable())
    server->thread.join();
  delete server;
}

/// A client for one call: the connection is made and waited for at most
/// `timeoutMs` (and the reply `readMs` more).
httplib::Client client(const char *host, int port, int64_t timeoutMs,
                       int64_t readMs) {
  httplib::Client c(host, port);
  auto split = [](int64_t ms, auto set) { set(ms / 1000, (ms % 1000) * 1000); };
  split(timeoutMs, [&](time_t s, time_t us) { c.set_connection_timeout(s, us); });
  split(timeoutMs + readMs,
        [&](time_t s, time_t us) { c.set_read_timeout(s, us); });
  split(timeoutMs, [&](time_t s, time_t us) { c.set_write_timeout(s, us); });
  return c;
}

/// MODELC_STORE_OK for a 200, else the outcome and its message.
int outcome(const httplib::Result &res, const char *host, int port,
            char *err, size_t errSize) {
  if (!res) {
    setError(err, errSize,
             std::string("no answer from the rendezvous at ") + host + ":" +
                 std::to_string(port) + " (" + httplib::to_string(res.error()) +
                 ")");
    return MODELC_STORE_NO_ANSWER;
  }
  if (!res->has_header(kMarker)) {
    setError(err, errSize,
             "the server at " + std::string(host) + ":" +
                 std::to_string(port) +
                 " is not a modelc rendezvous (it answered " +
                 std::to_string(res->status) +
                 "): is --master the port of node 0 of this run?");
    return MODELC_STORE_FAILED;
  }
  if (res->status == 200)
    return MODELC_STORE_OK;
  if (res->status == 404) {
    setError(err, errSize, res->body);
    return MODELC_STORE_ABSENT;
  }
  setError(err, errSize,
           "the rendezvous at " + std::string(host) + ":" +
               std::to_string(port) + " answered " +
               std::to_string(res->status) +
               (res->body.empty() ? "" : ": " + res->body));
  return MODELC_STORE_FAILED;
}

int set(const char *host, int port, const char *key, const void *data,
        size_t size, int64_t timeoutMs, char *err, size_t errSize) {
  httplib::Client c = client(host, port, timeoutMs, 0);
  httplib::Result res =
      c.Post("/set", {{"X-Key", key}},
             std::string(static_cast<const char *>(data), size),
             "application/octet-stream");
  return outcome(res, host, port, err, errSize);
}

int wait(const char *host, int port, const char *const *keys, size_t count,
         int64_t waitMs, char *err, size_t errSize) {
  std::string body;
  for (size_t i = 0; i < count; ++i)
    body += std::string(keys[i]) + "\n";
  // The connection is quick or not there: a few seconds, then the wait.
  httplib::Client c =
      client(host, port, std::clamp<int64_t>(waitMs, 1000, 5000), waitMs + 5000);
  httplib::Result res =
      c.Post("/wait", {{"X-Wait-Ms", std::to_string(waitMs)}}, body,
             "text/plain");
  return outcome(res, host, port, err, errSize);
}

int get(const char *host, int port, const char *key,
        void (*sink)(void *, const void *, size_t), void *sinkSelf,
        int64_t timeoutMs, char *err, size_t errSize) {
  httplib::Client c = client(host, port, timeoutMs, 0);
  httplib::Result res = c.Get("/get", {{"X-Key", key}});
  int status = outcome(res, host, port, err, errSize);
  if (status == MODELC_STORE_OK)
    sink(sinkSelf, res->body.data(), res->body.size());
  return status;
}

int age(const char *host, int port, const char *key, int64_t *ageMs,
        int64_t timeoutMs, char *err, size_t errSize) {
  httplib::Client c = client(host, port, timeoutMs, 0);
  httplib::Result res = c.Get("/age", {{"X-Key", key}});
  int status = outcome(res, host, port, err, errSize);
  if (status == MODELC_STORE_OK)
    *ageMs = std::atoll(res->body.c_str());
  return status;
}

const modelc_store_api kApi = {MODELC_STORE_ABI_VERSION, serve, stop, set,
                               wait, get, age};

} // namespace

extern "C" __attribute__((visibility("default"))) const modelc_store_api *
modelc_store_get_api(void) {
  return &kApi;
}
