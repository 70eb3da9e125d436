// The rendezvous of a run of several processes (Rendezvous.h).
#include "runtime/dist/Rendezvous.h"

#include "runtime/dist/Shim.h"

#include <fmt/format.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cstdio>
#include <cstring>
#include <netdb.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

/// The shim (runtime/dist/shim/StoreShim.cpp) as built, embedded by the
/// build (runtime/CMakeLists.txt).
extern "C" const unsigned char modelc_store_shim_image[];
extern "C" const size_t modelc_store_shim_image_size;

namespace modelc::rt::dist {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

void setError(char *err, size_t size, const std::string &message) {
  if (err && size)
    std::snprintf(err, size, "%s", message.c_str());
}

std::string seconds(milliseconds ms) {
  return fmt::format("{:g} s", double(ms.count()) / 1000);
}

} // namespace

std::string describeRendezvousKey(const std::string &key) {
  auto numberAfter = [&](const std::string &prefix) -> std::string {
    std::string number =
        key.rfind(prefix, 0) == 0 ? key.substr(prefix.size()) : "";
    bool digits = !number.empty() &&
                  std::all_of(number.begin(), number.end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    return digits ? number : "";
  };
  if (std::string n = numberAfter(kGpusOpenPrefix); !n.empty())
    return "node " + n + " (its GPUs)";
  if (std::string n = numberAfter("rank_"); !n.empty())
    return "rank " + n;
  if (std::string n = numberAfter(""); !n.empty())
    return "rank " + n;
  return "'" + key + "'";
}

Result<const modelc_store_api *> loadStore() {
  static Result<const void *> api = loadShim(
      {modelc_store_shim_image, modelc_store_shim_image_size,
       "modelc_store_get_api",
       "a run of several processes (--nnodes, or a launcher's variables) "
       "meets through cpp-httplib",
       "libcpp-httplib0.11", MODELC_STORE_ABI_VERSION});
  if (!api)
    return api.status();
  return static_cast<const modelc_store_api *>(*api);
}

Result<std::unique_ptr<StoreServer>> StoreServer::serve(int port, bool ipv6,
                                                        int clients) {
  Result<const modelc_store_api *> api = loadStore();
  if (!api)
    return api.status();
  char err[512] = "";
  modelc_store_server *server =
      (*api)->serve(port, ipv6 ? 1 : 0, clients, err, sizeof(err));
  if (!server)
    return Status::error(err);
  return std::unique_ptr<StoreServer>(new StoreServer(*api, server));
}

StoreServer::~StoreServer() { api_->stop(server_); }

TcpStore::TcpStore(const modelc_store_api *api, std::string host, int port,
                   milliseconds timeout)
    : api_(api), host_(std::move(host)), port_(port), timeout_(timeout),
      callbacks_{this, &TcpStore::setCallback, &TcpStore::waitCallback,
                 &TcpStore::getCallback} {}

Result<std::unique_ptr<TcpStore>>
TcpStore::open(const std::string &host, int port, milliseconds timeout) {
  Result<const modelc_store_api *> api = loadStore();
  if (!api)
    return api.status();
  return std::unique_ptr<TcpStore>(new TcpStore(*api, host, port, timeout));
}

Status TcpStore::noMaster(milliseconds waited) const {
  return Status::error(
      fmt::format("the rendezvous timed out after {}: no answer from the "
                  "master at {} (node 0 serves it: is it running, and is the "
                  "address right?)",
                  seconds(waited), address()),
      kExitLostRank);
}

std::string TcpStore::address() const {
  return host_.find(':') != std::string::npos
             ? fmt::format("[{}]:{}", host_, port_)
             : fmt::format("{}:{}", host_, port_);
}

Status TcpStore::set(const std::string &key, const std::string &value,
                     milliseconds patience) {
  Clock::time_point deadline = Clock::now() + patience;
  for (;;) {
    auto left = std::max(milliseconds(1),
                         std::chrono::duration_cast<milliseconds>(
                             deadline - Clock::now()));
    char err[512] = "";
    int status =
        api_->set(host_.c_str(), port_, key.c_str(), value.data(),
                  value.size(), std::min(left, milliseconds(5000)).count(),
                  err, sizeof(err));
    if (status == MODELC_STORE_OK)
      return Status();
    if (status != MODELC_STORE_NO_ANSWER)
      return Status::error(err, kExitLostRank);
    if (Clock::now() >= deadline)
      return noMaster(patience);
    std::this_thread::sleep_for(std::min(left, milliseconds(250)));
  }
}

Status TcpStore::wait(const std::vector<std::string> &keys,
                      milliseconds timeout) {
  std::vector<const char *> names;
  for (const std::string &key : keys)
    names.push_back(key.c_str());
  Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    auto left = std::max(milliseconds(0),
                         std::chrono::duration_cast<milliseconds>(
                             deadline - Clock::now()));
    char err[512] = "";
    int status = api_->wait(host_.c_str(), port_, names.data(), names.size(),
                            left.count(), err, sizeof(err));
    if (status == MODELC_STORE_OK)
      return Status();
    if (status == MODELC_STORE_ABSENT) {
      std::vector<std::string> missing;
      std::istringstream in(err);
      for (std::string key; std::getline(in, key);)
        if (!key.empty())
          missing.push_back(describeRendezvousKey(key));
      return Status::error(
          fmt::format("the rendezvous timed out after {}: {} did not join",
                      seconds(timeout), fmt::join(missing, ", ")),
          kExitLostRank);
    }
    if (status != MODELC_STORE_NO_ANSWER)
      return Status::error(err, kExitLostRank);
    if (left.count() == 0)
      return noMaster(timeout);
    std::this_thread::sleep_for(std::min(left, milliseconds(250)));
  }
}

Result<std::optional<std::string>> TcpStore::get(const std::string &key,
                                                 milliseconds patience) {
  std::string value;
  auto sink = [](void *self, const void *data, size_t size) {
    static_cast<std::string *>(self)->assign(static_cast<const char *>(data),
                                             size);
  };
  char err[512] = "";
  int status = api_->get(host_.c_str(), port_, key.c_str(), sink, &value,
                         patience.count(), err, sizeof(err));
  if (status == MODELC_STORE_ABSENT)
    return std::optional<std::string>();
  if (status != MODELC_STORE_OK)
    return Status::error(err, kExitLostRank);
  return std::optional<std::string>(std::move(value));
}

Result<std::optional<int64_t>> TcpStore::age(const std::string &key,
                                             milliseconds patience) {
  int64_t ms = 0;
  char err[512] = "";
  int status = api_->age(host_.c_str(), port_, key.c_str(), &ms,
                         patience.count(), err, sizeof(err));
  if (status == MODELC_STORE_ABSENT)
    return std::optional<int64_t>();
  if (status != MODELC_STORE_OK)
    return Status::error(err, kExitLostRank);
  return std::optional<int64_t>(ms);
}

int TcpStore::setCallback(void *self, const char *key, const void *data,
                          size_t size, char *err, size_t errSize) {
  auto *store = static_cast<TcpStore *>(self);
  Status s = store->set(
      key, std::string(static_cast<const char *>(data), size), store->timeout_);
  if (s.ok())
    return 0;
  setError(err, errSize, s.message());
  return -1;
}

int TcpStore::waitCallback(void *self, const char *const *keys, size_t count,
                           int64_t timeoutMs, char *err, size_t errSize) {
  Status s = static_cast<TcpStore *>(self)->wait(
      std::vector<std::string>(keys, keys + count), milliseconds(timeoutMs));
  if (s.ok())
    return 0;
  setError(err, errSize, s.message());
  return -1;
}

int TcpStore::getCallback(void *self, const char *key,
                          void (*sink)(void *, const void *, size_t),
                          void *sinkSelf, char *err, size_t errSize) {
  auto *store = static_cast<TcpStore *>(self);
  Result<std::optional<std::string>> value = store->get(key, store->timeout_);
  if (!value) {
    setError(err, errSize, value.status().message());
    return -1;
  }
  if (!*value) {
    setError(err, errSize,
             fmt::format("the rendezvous has no value for {}",
                         describeRendezvousKey(key)));
    return -1;
  }
  sink(sinkSelf, (*value)->data(), (*value)->size());
  return 0;
}

namespace {
std::string aliveKey(int process) { return fmt::format("alive/{}", process); }
std::string failedKey(int process) {
  return fmt::format("failed/{}", process);
}
std::string doneKey(int process) { return fmt::format("done/{}", process); }
} // namespace

Liveness::Liveness(TcpStore &store, const LaunchPlan &plan)
    : store_(store), plan_(plan) {
  (void)store_.set(aliveKey(plan_.process), "", kBeat);
  thread_ = std::thread([this] { beat(); });
}

Liveness::~Liveness() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  thread_.join();
}

void Liveness::beat() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_.wait_for(lock, kBeat, [this] { return stopping_; })) {
    lock.unlock();
    // A beat that fails is not an error here: a collective that needs
    // the lost process fails, and lost() says why.
    (void)store_.set(aliveKey(plan_.process), "", kBeat);
    lock.lock();
  }
}

std::string Liveness::describe(int process) const {
  if (plan_.ranksPerProcess == 1)
    return fmt::format("rank {}", process);
  int first = process * plan_.ranksPerProcess;
  return fmt::format("node {} (ranks {}-{})", process, first,
                     first + plan_.ranksPerProcess - 1);
}

std::string Liveness::lost(milliseconds patience) {
  Clock::time_point deadline = Clock::now() + patience;
  std::string gone = fmt::format("{}: node 0 served the rendezvous at {} and "
                                 "no longer answers",
                                 describe(0), store_.address());
  for (;;) {
    // A process that said why it stopped comes first: that is the cause.
    for (int q = 0; q < plan_.processes; ++q) {
      if (q == plan_.process)
        continue;
      Result<std::optional<std::string>> failed =
          store_.get(failedKey(q), kStale);
      if (!failed)
        return gone;
      if (*failed)
        return fmt::format("{}: it stopped: {}", describe(q), **failed);
    }
    for (int q = 0; q < plan_.processes; ++q) {
      if (q == plan_.process)
        continue;
      // A process that finished its part stopped beating on purpose.
      Result<std::optional<std::string>> done = store_.get(doneKey(q), kStale);
      if (done && *done)
        continue;
      Result<std::optional<int64_t>> age = store_.age(aliveKey(q), kStale);
      if (!age)
        return gone;
      if (*age && **age > kStale.count())
        return fmt::format("{}: no heartbeat for {:.1f} s", describe(q),
                           double(**age) / 1000);
    }
    if (Clock::now() >= deadline)
      return "";
    std::this_thread::sleep_for(milliseconds(250));
  }
}

void Liveness::reportFailure(const std::string &message) {
  (void)store_.set(failedKey(plan_.process), message, kStale);
}

void Liveness::finish(milliseconds timeout) {
  (void)store_.set(doneKey(plan_.process), "", kStale);
  if (plan_.process != 0)
    return;
  std::vector<std::string> keys;
  for (int q = 1; q < plan_.processes; ++q)
    keys.push_back(doneKey(q));
  (void)store_.wait(keys, timeout);
}

Result<std::string> localAddressToward(const std::string &host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo *found = nullptr;
  std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found))
    return Status::error(fmt::format("the master's address {}: {}", host,
                                     ::gai_strerror(rc)));
  std::unique_ptr<addrinfo, void (*)(addrinfo *)> guard(found, ::freeaddrinfo);
  // Connecting a datagram socket sends nothing: it only picks the route,
  // whose local address is the one the master reaches back.
  int fd = ::socket(found->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return Status::error(fmt::format("cannot find this machine's address "
                                     "toward {}: {}",
                                     host, std::strerror(errno)));
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  bool ok = ::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr *>(&local),
                          &length) == 0;
  int error = errno;
  ::close(fd);
  if (!ok)
    return Status::error(fmt::format("cannot find this machine's address "
                                     "toward {}: {}",
                                     host, std::strerror(error)));
  char text[INET6_ADDRSTRLEN] = "";
  const void *address =
      local.ss_family == AF_INET6
          ? static_cast<const void *>(
                &reinterpret_cast<sockaddr_in6 *>(&local)->sin6_addr)
          : static_cast<const void *>(
                &reinterpret_cast<sockaddr_in *>(&local)->sin_addr);
  if (!::inet_ntop(local.ss_family, address, text, sizeof(text)))
    return Status::error(fmt::format("cannot find this machine's address "
                                     "toward {}",
                                     host));
  return std::string(text);
}

} // namespace modelc::rt::dist
