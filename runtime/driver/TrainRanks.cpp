// How a run's ranks start (TrainRanks.h): threads of this process over
// Gloo or NCCL, or one process of several that meet at a rendezvous store
// with a heartbeat, a watchdog and the naming of a lost process
// (docs/runtime/distributed.md).
#include "runtime/driver/TrainRanks.h"

#include "runtime/dist/Gloo.h"
#include "runtime/dist/Rendezvous.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace modelc::rt {

namespace {

using Clock = std::chrono::steady_clock;

/// The error of ranks [first, first + results.size()) of `world` that
/// failed first (`failedAt`: 1 for the first to fail, 0 for none): the
/// process's, as the others' are usually their collectives failing after
/// it.
Status firstFailure(const std::vector<Status> &results,
                    const std::vector<int> &failedAt, int first, int world) {
  int count = int(results.size());
  int firstFailed = -1;
  for (int i = 0; i < count; ++i)
    if (failedAt[size_t(i)] &&
        (firstFailed < 0 ||
         failedAt[size_t(i)] < failedAt[size_t(firstFailed)]))
      firstFailed = i;
  if (firstFailed < 0)
    return Status();
  const Status &failed = results[size_t(firstFailed)];
  // The ranks that stop together (a divergence, a signal) fail alike: rank
  // 0's message is the one that says what was kept. Otherwise the first
  // failure is the cause, named by its rank.
  if (first == 0 &&
      (firstFailed == 0 ||
       (!results[0].ok() && results[0].exitCode() == failed.exitCode())))
    return results[0];
  std::string prefix =
      fmt::format("rank {} of {}: ", first + firstFailed, world);
  if (failed.message().rfind(prefix, 0) == 0)
    return failed;
  return Status::error(prefix + failed.message(), failed.exitCode());
}

/// The ranks this process runs, as threads: ranks [first, first + count)
/// of `world`, joined over Gloo's TCP transport on `hostname` through
/// `store`. The error of the rank that failed first is the process's (the
/// others' are usually their collectives failing after it); `joined` says
/// whether every rank here got through the rendezvous.
Status trainLocalRanks(const RunShared &run, ProgramIO &io,
                       const modelc_gloo_store &store,
                       const std::string &hostname, int first, int count,
                       int world, bool &joined) {
  std::vector<Status> results(static_cast<size_t>(count));
  std::vector<int> failedAt(static_cast<size_t>(count), 0);
  std::atomic<int> failures{0}, connected{0};
  std::ostringstream quiet;
  ProgramIO silent{quiet, quiet, false};
  auto timeout =
      std::chrono::milliseconds(int64_t(run.cl.timeoutSeconds * 1000));
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i)
    threads.emplace_back([&, i] {
      int r = first + i;
      Status status;
      Result<std::unique_ptr<dist::GlooCommunicator>> comm =
          dist::GlooCommunicator::connect(store, r, world, hostname, timeout);
      if (!comm) {
        status = comm.status();
      } else {
        ++connected;
        status = trainRank(run, {r, world, comm->get()}, r == 0 ? io : silent);
      }
      if (!status.ok())
        failedAt[size_t(i)] = ++failures;
      results[size_t(i)] = std::move(status);
    });
  for (std::thread &t : threads)
    t.join();
  joined = connected == count;
  return firstFailure(results, failedAt, first, world);
}

/// GPU ranks [first, first + gpus.size()) of `world` as threads of this
/// process, one per GPU of `gpus`, joined over NCCL with `id`. A rank that
/// fails aborts the group's communicators, so that no other waits for it.
Status trainGpuThreads(const RunShared &run, ProgramIO &io,
                       const dist::NcclId &id, const std::vector<int> &gpus,
                       int first, int world, dist::GpuRankGroup &group) {
  int count = int(gpus.size());
  std::vector<Status> results(static_cast<size_t>(count));
  std::vector<int> failedAt(static_cast<size_t>(count), 0);
  std::atomic<int> failures{0};
  std::ostringstream quiet;
  ProgramIO silent{quiet, quiet, false};
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i)
    threads.emplace_back([&, i] {
      int r = first + i;
      GpuJoin join{gpus[size_t(i)], id, group};
      Status status = trainRank(run, {r, world, nullptr, nullptr},
                                r == 0 ? io : silent, &join);
      // A rank that stopped because another could not start is no cause:
      // that one's error is the run's.
      if (join.secondary)
        return;
      if (!status.ok()) {
        failedAt[size_t(i)] = ++failures;
        group.abortAll();
      }
      results[size_t(i)] = std::move(status);
    });
  for (std::thread &t : threads)
    t.join();
  Status failed = firstFailure(results, failedAt, first, world);
  return failed.ok() ? group.error() : failed;
}

/// The store key of the run's NCCL id, which process 0 sets.
constexpr const char *kNcclIdKey = "nccl_id";

/// This process's GPU ranks in a run of several processes: process 0 makes
/// the NCCL id and the store carries it to the others. NCCL waits for a
/// lost process forever, so a watchdog asks the store every second whether
/// one is gone (its heartbeat stale, or it said it stopped) and aborts the
/// communicators; the error then has kExitLostRank, for the caller to name
/// the process.
Status trainGpuProcess(const RunShared &run, ProgramIO &io,
                       dist::TcpStore &store, dist::Liveness &liveness,
                       std::chrono::milliseconds timeout) {
  const dist::LaunchPlan &lp = run.plan.launch;
  std::vector<int> gpus = run.device.ordinals;
  // A launcher's process per GPU takes its local rank's, unless it sees a
  // single GPU (CUDA_VISIBLE_DEVICES set per task, as Slurm's
  // --gpus-per-task does).
  if (gpus.empty())
    gpus.push_back(gpuBackend().probe().devices == 1 ? 0 : lp.localIndex);
  if (int(gpus.size()) != lp.ranksPerProcess)
    return Status::error(fmt::format(
        "{} ranks per node ({}) but {} GPU(s) named by --gpus: each rank of "
        "a node trains on a GPU of its own",
        lp.ranksPerProcess, lp.source, gpus.size()));
  dist::NcclId id;
  if (lp.process == 0) {
    Result<dist::NcclId> made = dist::createNcclId();
    if (!made)
      return made.status();
    id = *made;
    MODELC_RETURN_IF_ERROR(
        store.set(kNcclIdKey, std::string(id.begin(), id.end()), timeout));
  } else {
    MODELC_RETURN_IF_ERROR(store.wait({kNcclIdKey}, timeout));
    Result<std::optional<std::string>> value = store.get(kNcclIdKey, timeout);
    if (!value)
      return value.status();
    if (!*value || (*value)->size() != id.size())
      return Status::error(fmt::format("the rendezvous at {} holds no NCCL "
                                       "id of {} bytes",
                                       store.address(), id.size()),
                           kExitInternal);
    std::copy((*value)->begin(), (*value)->end(), id.begin());
  }
  // NCCL's join waits for every rank without a timeout: the processes
  // first wait in the store, with one, until every one has opened its GPUs.
  auto allOpened = [&]() -> Status {
    MODELC_RETURN_IF_ERROR(store.set(
        dist::kGpusOpenPrefix + std::to_string(lp.process), "", timeout));
    std::vector<std::string> keys;
    for (int q = 0; q < lp.processes; ++q)
      keys.push_back(dist::kGpusOpenPrefix + std::to_string(q));
    return store.wait(keys, timeout);
  };
  dist::GpuRankGroup group(int(gpus.size()), allOpened);
  std::mutex mutex;
  std::condition_variable stop;
  bool done = false, lost = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    while (
        !stop.wait_for(lock, std::chrono::seconds(1), [&] { return done; })) {
      lock.unlock();
      bool gone = !liveness.lost(std::chrono::milliseconds(0)).empty();
      lock.lock();
      if (gone) {
        lost = true;
        group.abortAll();
        return;
      }
    }
  });
  Status status =
      trainGpuThreads(run, io, id, gpus, lp.firstRank(), lp.worldSize(), group);
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  stop.notify_all();
  watchdog.join();
  // An NCCL call that failed (an internal error) while another process is
  // gone failed for that: the caller names it. Errors of other kinds (a
  // divergence, a signal: every process stops alike) are this process's.
  if (!status.ok() && status.exitCode() == kExitInternal &&
      (lost || !liveness.lost().empty()))
    return Status::error(status.message(), kExitLostRank);
  return status;
}

/// How long a process the heartbeat says is gone may stay gone while this
/// process's ranks still wait in a collective, before the process stops.
constexpr std::chrono::seconds kLostGrace{10};

/// This process's CPU ranks in a run of several processes, over Gloo. A
/// collective whose peer process died usually fails at once (its sockets
/// close), but Gloo can also wait out --timeout: a node that vanished
/// without closing its sockets, or a wait that the closed socket does not
/// wake. So this thread asks the store every second whether a process is
/// gone; when one has been gone for kLostGrace while the ranks are still
/// out, it stops the run with kExitLostRank for the caller to name the
/// process, and leaves the waiting ranks' thread behind (the program exits
/// with _Exit after an error, so it is never resumed).
Status trainCpuProcess(const RunShared &run, ProgramIO &io,
                       dist::TcpStore &store, const std::string &hostname,
                       dist::Liveness &liveness, bool &joined) {
  struct Outcome {
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false, joined = true;
    Status status;
  };
  auto outcome = std::make_shared<Outcome>();
  const dist::LaunchPlan &lp = run.plan.launch;
  std::thread ranks([&run, &io, &store, hostname, outcome, &lp] {
    bool allJoined = true;
    Status status =
        trainLocalRanks(run, io, store.callbacks(), hostname, lp.firstRank(),
                        lp.ranksPerProcess, lp.worldSize(), allJoined);
    std::lock_guard<std::mutex> lock(outcome->mutex);
    outcome->status = std::move(status);
    outcome->joined = allJoined;
    outcome->finished = true;
    outcome->done.notify_all();
  });
  std::optional<Clock::time_point> lostSince;
  std::unique_lock<std::mutex> lock(outcome->mutex);
  while (!outcome->done.wait_for(lock, std::chrono::seconds(1),
                                 [&] { return outcome->finished; })) {
    lock.unlock();
    bool gone = !liveness.lost(std::chrono::milliseconds(0)).empty();
    lock.lock();
    if (!gone) {
      lostSince.reset();
      continue;
    }
    if (!lostSince)
      lostSince = Clock::now();
    if (Clock::now() - *lostSince < kLostGrace)
      continue;
    lock.unlock();
    ranks.detach();
    joined = true;
    return Status::error(
        fmt::format("rank {} of {}: still waiting in a collective {} s later",
                    lp.firstRank(), lp.worldSize(), kLostGrace.count()),
        kExitLostRank);
  }
  lock.unlock();
  ranks.join();
  joined = outcome->joined;
  return outcome->status;
}

} // namespace

/// `--cpu --ranks R`: R ranks as threads of this process, joined over
/// Gloo's TCP transport on loopback through a rendezvous in memory.
Status trainThreadRanks(const RunShared &run, ProgramIO &io) {
  dist::LocalStore store;
  bool joined = false;
  int ranks = int(run.plan.ranks);
  return trainLocalRanks(run, io, store.callbacks(), "127.0.0.1", 0, ranks,
                         ranks, joined);
}

/// `--gpus N | I,J,... | all` in one process: one rank per GPU, as threads,
/// over NCCL (docs/runtime/distributed.md, "GPU ranks"). One GPU where
/// NCCL is missing trains alone, as without --gpus.
Status trainGpuRanks(const RunShared &run, ProgramIO &io) {
  const std::vector<int> &gpus = run.device.ordinals;
  int world = int(gpus.size());
  Result<dist::NcclId> id = dist::createNcclId();
  if (!id && world == 1) {
    io.err << "note: " << id.status().message()
           << "; one GPU trains without it\n";
    return trainRank(run, RankPlace(), io);
  }
  if (!id)
    return id.status();
  dist::GpuRankGroup group(world);
  return trainGpuThreads(run, io, *id, gpus, 0, world, group);
}

/// A run of several processes (--nnodes, or a launcher's variables): node
/// 0 serves the rendezvous store on the master's port, every process runs
/// its ranks as threads over Gloo (CPU ranks) or NCCL (GPU ranks), with a
/// heartbeat in the store; when a collective fails the store says which
/// process is gone.
Status trainProcesses(const RunShared &run, ProgramIO &io) {
  const dist::LaunchPlan &lp = run.plan.launch;
  auto timeout =
      std::chrono::milliseconds(int64_t(run.cl.timeoutSeconds * 1000));
  std::unique_ptr<dist::StoreServer> server;
  if (lp.process == 0) {
    // Room for a waiting request of every rank and every process's beat.
    Result<std::unique_ptr<dist::StoreServer>> served =
        dist::StoreServer::serve(lp.masterPort,
                                 lp.masterHost.find(':') != std::string::npos,
                                 2 * lp.worldSize() + lp.processes);
    if (!served)
      return served.status();
    server = served.take();
  }
  Result<std::unique_ptr<dist::TcpStore>> store =
      dist::TcpStore::open(lp.masterHost, lp.masterPort, timeout);
  if (!store)
    return store.status();
  Result<std::string> hostname =
      dist::localAddressToward(lp.masterHost, lp.masterPort);
  if (!hostname)
    return hostname.status();
  dist::Liveness liveness(**store, lp);
  bool joined = true;
  Status status =
      run.device.gpu
          ? trainGpuProcess(run, io, **store, liveness, timeout)
          : trainCpuProcess(run, io, **store, *hostname, liveness, joined);
  Status outcome = status;
  if (!status.ok() && status.exitCode() != kExitLostRank) {
    liveness.reportFailure(status.message());
  } else if (!status.ok() && joined) {
    // A collective failed: name the process that is gone, when one is.
    std::string lost = liveness.lost();
    // "rank 1 of 2: lost rank 0: why (what failed here); ..."
    std::string message = status.message(), speaker;
    size_t colon = message.find(": ");
    if (message.rfind("rank ", 0) == 0 && colon != std::string::npos) {
      speaker = message.substr(0, colon + 2);
      message = message.substr(colon + 2);
    }
    if (!lost.empty())
      outcome = Status::error(
          fmt::format("{}lost {} ({}); once every node runs again, --resume "
                      "continues from the last checkpoint",
                      speaker, lost, message),
          kExitLostRank);
  }
  // Node 0 serves the store: it stays until the others are done with it
  // (after a failure, until they have read why, at most 10 s).
  liveness.finish(status.ok()
                      ? timeout
                      : std::min(timeout, std::chrono::milliseconds(10000)));
  return outcome;
}

} // namespace modelc::rt
