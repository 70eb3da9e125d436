// The rendezvous of a run of several processes (docs/runtime/distributed.md,
// "Several processes"): process 0 serves a key-value store on the master's
// port (StoreServer); every process reaches it (TcpStore, which is also
// Gloo's rendezvous store), beats a heartbeat in it, and when a collective
// fails asks it which process is gone (Liveness). The store is cpp-httplib's
// HTTP in a shim (StoreShimABI.h), loaded only by runs of several processes.
#pragma once

#include "runtime/dist/GlooShimABI.h"
#include "runtime/dist/Launch.h"
#include "runtime/dist/StoreShimABI.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace modelc::rt::dist {

/// The prefix of the key each process of GPU ranks sets once its GPUs are
/// open ("gpus_open/1"), before any joins NCCL.
constexpr const char *kGpusOpenPrefix = "gpus_open/";

/// "rank 3" for the keys a rank publishes in Gloo's full-mesh rendezvous
/// ("3", "rank_3"), "node 1 (its GPUs)" for "gpus_open/1", else the key in
/// quotes.
std::string describeRendezvousKey(const std::string &key);

/// The store shim's functions; loads it once. An error (exit 2) when
/// libcpp-httplib or its dependencies are missing, naming the package.
Result<const modelc_store_api *> loadStore();

/// The store that process 0 serves for the run's lifetime.
class StoreServer {
public:
  /// Serves on `port` of every address (IPv6 ones when `ipv6`), with room
  /// for `clients` requests at once.
  static Result<std::unique_ptr<StoreServer>> serve(int port, bool ipv6,
                                                    int clients);
  ~StoreServer();
  StoreServer(const StoreServer &) = delete;
  StoreServer &operator=(const StoreServer &) = delete;

private:
  StoreServer(const modelc_store_api *api, modelc_store_server *server)
      : api_(api), server_(server) {}
  const modelc_store_api *api_;
  modelc_store_server *server_;
};

/// The store at the master's address, as seen by one process; usable from
/// any thread. As Gloo's store its calls wait up to `timeout` (the master
/// may start after this process); the others wait as long as they say.
class TcpStore {
public:
  static Result<std::unique_ptr<TcpStore>>
  open(const std::string &host, int port, std::chrono::milliseconds timeout);
  TcpStore(const TcpStore &) = delete;
  TcpStore &operator=(const TcpStore &) = delete;

  /// The store as Gloo's rendezvous store.
  const modelc_gloo_store &callbacks() const { return callbacks_; }
  /// "HOST:PORT", for messages.
  std::string address() const;

  /// Sets the key, asking again while the master does not answer, for at
  /// most `patience`.
  Status set(const std::string &key, const std::string &value,
             std::chrono::milliseconds patience);
  /// Waits up to `timeout` for every key, asking again while the master
  /// does not answer yet (it may start after this process). The error says
  /// which ranks did not join, or that the master never answered.
  Status wait(const std::vector<std::string> &keys,
              std::chrono::milliseconds timeout);
  /// The value; nullopt when the key is not there; an error when the
  /// master does not answer within `patience`.
  Result<std::optional<std::string>> get(const std::string &key,
                                         std::chrono::milliseconds patience);
  /// Milliseconds since the key was last set; nullopt when it is not there.
  Result<std::optional<int64_t>> age(const std::string &key,
                                     std::chrono::milliseconds patience);

private:
  TcpStore(const modelc_store_api *api, std::string host, int port,
           std::chrono::milliseconds timeout);
  Status noMaster(std::chrono::milliseconds waited) const;
  static int setCallback(void *self, const char *key, const void *data,
                         size_t size, char *err, size_t errSize);
  static int waitCallback(void *self, const char *const *keys, size_t count,
                          int64_t timeoutMs, char *err, size_t errSize);
  static int getCallback(void *self, const char *key,
                         void (*sink)(void *, const void *, size_t),
                         void *sinkSelf, char *err, size_t errSize);

  const modelc_store_api *api_;
  std::string host_;
  int port_;
  std::chrono::milliseconds timeout_;
  modelc_gloo_store callbacks_;
};

/// This process's heartbeat in the store (a thread that sets
/// "alive/<process>" every half second), and what the others' say.
class Liveness {
public:
  /// How often the heartbeat is set, and how old one is when its process
  /// counts as gone.
  static constexpr std::chrono::milliseconds kBeat{500}, kStale{2500};

  Liveness(TcpStore &store, const LaunchPlan &plan);
  ~Liveness();
  Liveness(const Liveness &) = delete;
  Liveness &operator=(const Liveness &) = delete;

  /// After a collective failed: the process that is gone, as "rank 1" (or
  /// "node 1 (ranks 4-7)") and why, looking for at most `patience` (a
  /// process killed a moment ago still has a fresh heartbeat); empty when
  /// every process still answers.
  std::string lost(std::chrono::milliseconds patience = std::chrono::seconds(5));
  /// Tells the others this process stopped with an error, and what it was.
  void reportFailure(const std::string &message);
  /// This process's part of the run is done. Process 0, whose store the
  /// others use, waits for them (at most `timeout`) before it goes.
  void finish(std::chrono::milliseconds timeout);

  /// "rank 1", or "node 1 (ranks 4-7)" when a process runs several ranks.
  std::string describe(int process) const;

private:
  void beat();

  TcpStore &store_;
  LaunchPlan plan_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;
};

/// An address of this machine that `host` can reach back, for Gloo's
/// transport: the loopback address when `host` is one (one machine), else
/// the address of the interface that the route to `host` leaves from.
Result<std::string> localAddressToward(const std::string &host, int port);

} // namespace modelc::rt::dist
