// A fake libnccl for testing runtime/dist/Nccl on machines without GPUs
// (MODELC_LIBNCCL points at it). Its ranks are threads of one process:
// ncclCommInitRank with the same id joins one in-memory group and waits for
// all of it; a collective waits until every rank has called it, then the
// last to arrive computes it for all. "Device" memory is host memory, as in
// the fake libcuda (FakeDriver.cpp, FakeCuda.h). A collective on the null
// stream is done when its call returns; on a stream of the fake libcuda it
// goes through the stream (CUstream_st::run): at once, or, while the stream
// is being captured, into the graph, so that each cuGraphLaunch of it runs
// the collective, blocking that replay until every rank's replay reaches
// it; arguments are checked at the call, and an error found at replay
// becomes the communicator's asynchronous error (ncclCommGetAsyncError).
// ncclGroupStart/ncclGroupEnd only track the thread's nesting (an end
// without a start is ncclInvalidUsage): the calls between them run as they
// come, which is enough because every rank makes the same calls in the same
// order. ncclRedOpCreatePreMulSum makes a reduction for one communicator
// and type from a ncclScalarHostImmediate scalar (other residences are
// ncclInvalidArgument), read at creation; an all-reduce with it computes,
// as NCCL, the sum over ranks of each rank's scalar times its data, in the
// element type. It refuses what real NCCL refuses (a rank out of range, an
// unknown communicator or reduction) and, unlike NCCL, also ranks that
// disagree on a collective's kind, count, type, reduction (sum or PreMulSum)
// or root. ncclCommAbort makes the other ranks' pending and later calls fail
// with an asynchronous ncclRemoteError instead of waiting, and frees the
// communicator's reductions (ncclCommDestroy does not: a reduction not
// destroyed stays alive). So that no test can hang, every wait ends after
// FAKE_NCCL_TIMEOUT_MS (default 10000), which fails the group the same way.
// Hooks for tests: fakeNcclSetDevice (the "current GPU" of the calling
// thread, 0 by default), fakeNcclLive (communicators, groups, reductions and
// ncclMemAlloc blocks alive), fakeNcclWaiting (calls blocked in a
// collective). FAKE_NCCL_VERSION overrides the version.
#include "FakeCuda.h"

#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

/// One rank's call of a collective.
struct Call {
  std::string kind;
  const void *send;
  void *recv;
  size_t count;
  ncclDataType_t type;
  int root;            // broadcast's; 0 for all-reduce
  bool preMul = false; // all-reduce's reduction is a PreMulSum, else ncclSum
  double scalar = 1;   // the PreMulSum's scalar (of the element type)
};

/// A collective of the group, by sequence number.
struct Slot {
  std::vector<Call> calls;
  std::vector<bool> arrived;
  int arrivals = 0, departures = 0;
  bool done = false;
  ncclResult_t result = ncclSuccess;
  std::string error;
};

struct Group {
  std::string key;
  int size;
  std::vector<ncclComm *> members;
  int joined = 0;
  int alive = 0;
  bool failed = false;
  std::string failure;
  std::map<uint64_t, Slot> slots;
};

/// A PreMulSum reduction of one communicator.
struct PreMulSum {
  ncclDataType_t type;
  double scalar;
};

} // namespace

struct ncclComm {
  std::shared_ptr<Group> group;
  std::map<int, PreMulSum> preMulSums; // by ncclRedOp_t
  int nextOp = ncclNumOps;
  int rank;
  int device;
  uint64_t next = 0;
  int inFlight = 0;
  bool aborted = false;
  ncclResult_t asyncError = ncclSuccess;
  std::string lastError;
};

namespace {

std::mutex mutex;
std::condition_variable changed;
std::map<std::string, std::shared_ptr<Group>> groups;
std::set<ncclComm *> comms;
std::set<void *> blocks;
int preMulSums = 0; // created and not destroyed (or freed by an abort)
uint64_t ids = 0;
thread_local int currentDevice = 0;
thread_local int groupDepth = 0;
thread_local std::string lastInitError;
const char kIdMagic[] = "fake-nccl-id:";

std::chrono::milliseconds timeout() {
  const char *env = std::getenv("FAKE_NCCL_TIMEOUT_MS");
  return std::chrono::milliseconds(env ? std::atol(env) : 10000);
}

size_t sizeOf(ncclDataType_t type) {
  switch (type) {
  case ncclInt8:
  case ncclUint8:
    return 1;
  case ncclFloat32:
    return 4;
  case ncclFloat64:
    return 8;
  default:
    return 0; // not supported by the fake
  }
}

std::string describe(const Call &c) {
  static const std::map<ncclDataType_t, const char *> names = {
      {ncclInt8, "i8"},
      {ncclUint8, "u8"},
      {ncclFloat32, "f32"},
      {ncclFloat64, "f64"}};
  std::string s =
      c.kind + " of " + std::to_string(c.count) + " " + names.at(c.type);
  if (c.preMul)
    s += " (PreMulSum)";
  if (c.kind == "broadcast")
    s += " from rank " + std::to_string(c.root);
  return s;
}

/// Fails the group (under the lock): every pending and later call of its
/// ranks sees an asynchronous ncclRemoteError.
void failGroup(Group &g, const std::string &why) {
  if (!g.failed) {
    g.failed = true;
    g.failure = why;
  }
  changed.notify_all();
}

/// Fills every rank's receive buffer (under the lock), or says why not.
void compute(Group &g, Slot &s, uint64_t seq) {
  const Call &first = s.calls[0];
  for (int r = 1; r < g.size; ++r) {
    const Call &c = s.calls[size_t(r)];
    if (c.kind != first.kind || c.count != first.count ||
        c.type != first.type || c.root != first.root ||
        c.preMul != first.preMul) {
      s.result = ncclInvalidUsage;
      s.error = "collective #" + std::to_string(seq) + ": rank 0 called " +
                describe(first) + ", rank " + std::to_string(r) + " " +
                describe(c);
      return;
    }
  }
  size_t bytes = first.count * sizeOf(first.type);
  std::vector<char> result(bytes);
  if (first.kind == "broadcast") {
    std::memcpy(result.data(), s.calls[size_t(first.root)].send, bytes);
  } else if (first.type == ncclFloat32) {
    // In rank order, each rank's data premultiplied by its scalar (1 for
    // ncclSum, which leaves the data exact).
    std::vector<float> sum(first.count, 0.0f);
    for (const Call &c : s.calls)
      for (size_t i = 0; i < first.count; ++i)
        sum[i] += float(c.scalar) * static_cast<const float *>(c.send)[i];
    std::memcpy(result.data(), sum.data(), bytes);
  } else {
    std::vector<double> sum(first.count, 0.0);
    for (const Call &c : s.calls)
      for (size_t i = 0; i < first.count; ++i)
        sum[i] += c.scalar * static_cast<const double *>(c.send)[i];
    std::memcpy(result.data(), sum.data(), bytes);
  }
  for (const Call &c : s.calls)
    std::memcpy(c.recv, result.data(), bytes);
}

/// Checks this rank's arguments of a collective (under the lock): its
/// reduction becomes the call's PreMulSum and scalar.
ncclResult_t check(ncclComm *comm, Call &call, ncclRedOp_t op) {
  if (!comms.count(comm))
    return ncclInvalidArgument;
  Group &g = *comm->group;
  std::string prefix = "fake NCCL " + call.kind + ": ";
  bool allReduce = call.kind == "all-reduce";
  if (!sizeOf(call.type) ||
      (allReduce && (call.type == ncclInt8 || call.type == ncclUint8))) {
    comm->lastError = prefix + "the fake supports only f32/f64 sums and "
                               "byte broadcasts";
    return ncclInvalidArgument;
  }
  if (allReduce && op != ncclSum) {
    auto it = comm->preMulSums.find(int(op));
    if (it == comm->preMulSums.end() || it->second.type != call.type) {
      comm->lastError = prefix + "reduction " + std::to_string(int(op)) +
                        " is neither ncclSum nor a PreMulSum of this "
                        "communicator for the data's type";
      return ncclInvalidArgument;
    }
    call.preMul = true;
    call.scalar = it->second.scalar;
  }
  if (!allReduce && (call.root < 0 || call.root >= g.size)) {
    comm->lastError = prefix + "invalid root " + std::to_string(call.root);
    return ncclInvalidArgument;
  }
  if (call.count && (!call.recv || !call.send)) {
    comm->lastError = prefix + "null buffer";
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

/// Runs a checked collective: waits for every rank's call of the same
/// sequence number, and the last one computes it.
ncclResult_t perform(ncclComm *comm, const Call &call) {
  std::unique_lock<std::mutex> lock(mutex);
  if (!comms.count(comm))
    return ncclInvalidArgument; // a graph replayed after its communicator
  Group &g = *comm->group;
  if (comm->asyncError != ncclSuccess)
    return comm->asyncError;
  if (call.count == 0)
    return ncclSuccess;
  uint64_t seq = comm->next++;
  Slot &s = g.slots[seq];
  if (s.calls.empty()) {
    s.calls.resize(size_t(g.size));
    s.arrived.assign(size_t(g.size), false);
  }
  s.calls[size_t(comm->rank)] = call;
  s.arrived[size_t(comm->rank)] = true;
  ++comm->inFlight;
  if (++s.arrivals == g.size && !g.failed) {
    compute(g, s, seq);
    s.done = true;
    changed.notify_all();
  }
  bool finished = changed.wait_for(
      lock, timeout(), [&] { return s.done || g.failed || comm->aborted; });
  if (!finished) {
    std::string missing;
    for (int r = 0; r < g.size; ++r)
      if (!s.arrived[size_t(r)])
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    failGroup(g, "fake NCCL: collective #" + std::to_string(seq) +
                     " timed out waiting for rank(s) " + missing);
  }
  ncclResult_t result = ncclSuccess;
  if (s.done) {
    result = s.result;
    comm->lastError = s.error;
  } else {
    // As NCCL: the call was queued; the failure is asynchronous.
    comm->asyncError = ncclRemoteError;
    comm->lastError = g.failure;
  }
  if (++s.departures == g.size)
    g.slots.erase(seq);
  --comm->inFlight;
  changed.notify_all();
  return result;
}

/// A collective: checked now, then performed now (the null stream) or
/// through the fake libcuda's stream, which runs it now or, while it is
/// being captured, at each replay of the graph.
ncclResult_t collective(ncclComm *comm, Call call, ncclRedOp_t op,
                        cudaStream_t stream) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (ncclResult_t r = check(comm, call, op); r != ncclSuccess)
      return r;
  }
  if (!stream)
    return perform(comm, call);
  ncclResult_t now = ncclSuccess;
  // Where the stream defers the work, its result is not this call's but an
  // asynchronous error of the communicator.
  ncclResult_t *result = stream->capturing ? nullptr : &now;
  stream->run([comm, call, result] {
    ncclResult_t r = perform(comm, call);
    if (result) {
      *result = r;
    } else if (r != ncclSuccess) {
      std::lock_guard<std::mutex> lock(mutex);
      if (comms.count(comm) && comm->asyncError == ncclSuccess)
        comm->asyncError = r;
    }
  });
  return now;
}

/// Ends `comm` (under the lock) once no call of it is in flight.
void release(std::unique_lock<std::mutex> &lock, ncclComm *comm) {
  changed.wait(lock, [&] { return comm->inFlight == 0; });
  Group &g = *comm->group;
  g.members[size_t(comm->rank)] = nullptr;
  if (--g.alive == 0)
    groups.erase(g.key);
  comms.erase(comm);
  delete comm;
}

} // namespace

extern "C" {

void fakeNcclSetDevice(int device) { currentDevice = device; }

int fakeNcclWaiting() {
  std::lock_guard<std::mutex> lock(mutex);
  int waiting = 0;
  for (ncclComm *comm : comms)
    waiting += comm->inFlight;
  return waiting;
}

int fakeNcclLive() {
  std::lock_guard<std::mutex> lock(mutex);
  return int(comms.size() + groups.size() + blocks.size()) + preMulSums;
}

ncclResult_t ncclGetVersion(int *version) {
  if (!version)
    return ncclInvalidArgument;
  const char *env = std::getenv("FAKE_NCCL_VERSION");
  *version = env ? std::atoi(env) : NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclUnhandledCudaError:
    return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError:
    return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInternalError:
    return "internal error - please report this issue to the NCCL developers";
  case ncclInvalidArgument:
    return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage:
    return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInProgress:
    return "NCCL operation in progress";
  default:
    return "unknown result code";
  }
}

const char *ncclGetLastError(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(mutex);
  if (comm && comms.count(comm))
    return comm->lastError.c_str();
  return lastInitError.c_str();
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  if (!id)
    return ncclInvalidArgument;
  std::lock_guard<std::mutex> lock(mutex);
  std::memset(id->internal, 0, sizeof(id->internal));
  std::string text = kIdMagic + std::to_string(++ids);
  std::memcpy(id->internal, text.data(), text.size());
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id,
                              int rank) {
  lastInitError.clear();
  if (!out || nranks < 1 || rank < 0 || rank >= nranks) {
    lastInitError = "fake NCCL: invalid rank " + std::to_string(rank) + "/" +
                    std::to_string(nranks);
    return ncclInvalidArgument;
  }
  std::string key(id.internal, sizeof(id.internal));
  if (key.compare(0, sizeof(kIdMagic) - 1, kIdMagic) != 0) {
    lastInitError = "fake NCCL: the id is not from ncclGetUniqueId";
    return ncclInvalidArgument;
  }
  std::unique_lock<std::mutex> lock(mutex);
  std::shared_ptr<Group> &slot = groups[key];
  if (!slot) {
    slot = std::make_shared<Group>();
    slot->key = key;
    slot->size = nranks;
    slot->members.assign(size_t(nranks), nullptr);
  }
  std::shared_ptr<Group> g = slot;
  if (g->size != nranks || g->members[size_t(rank)] || g->failed) {
    lastInitError =
        g->failed ? g->failure
        : g->size != nranks
            ? "fake NCCL: " + std::to_string(nranks) +
                  " ranks, the group has " + std::to_string(g->size)
            : "fake NCCL: rank " + std::to_string(rank) + " joined twice";
    if (g->alive == 0)
      groups.erase(key);
    return g->failed ? ncclRemoteError : ncclInvalidUsage;
  }
  auto *comm = new ncclComm;
  comm->group = g;
  comm->rank = rank;
  comm->device = currentDevice;
  g->members[size_t(rank)] = comm;
  ++g->joined;
  ++g->alive;
  comms.insert(comm);
  changed.notify_all();
  bool complete = changed.wait_for(
      lock, timeout(), [&] { return g->joined == g->size || g->failed; });
  if (complete && !g->failed) {
    *out = comm;
    return ncclSuccess;
  }
  std::string missing;
  for (int r = 0; r < g->size; ++r)
    if (!g->members[size_t(r)])
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  if (!g->failed)
    failGroup(*g, "fake NCCL: ncclCommInitRank timed out waiting for rank(s) " +
                      missing);
  lastInitError = g->failure;
  release(lock, comm);
  return ncclRemoteError;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!comms.count(comm) || !device)
    return ncclInvalidArgument;
  *device = comm->device;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *error) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!comms.count(comm) || !error)
    return ncclInvalidArgument;
  if (comm->group->failed && comm->asyncError == ncclSuccess) {
    comm->asyncError = ncclRemoteError;
    comm->lastError = comm->group->failure;
  }
  *error = comm->asyncError;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  std::unique_lock<std::mutex> lock(mutex);
  if (!comms.count(comm))
    return ncclInvalidArgument;
  release(lock, comm);
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  std::unique_lock<std::mutex> lock(mutex);
  if (!comms.count(comm))
    return ncclInvalidArgument;
  comm->aborted = true;
  preMulSums -= int(comm->preMulSums.size());
  failGroup(*comm->group,
            "fake NCCL: rank " + std::to_string(comm->rank) + " aborted");
  release(lock, comm);
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  return collective(comm, {"all-reduce", send, recv, count, type, 0}, op,
                    stream);
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
                           ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return collective(comm, {"broadcast", send, recv, count, type, root}, ncclSum,
                    stream);
}

ncclResult_t ncclGroupStart() {
  ++groupDepth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (groupDepth == 0)
    return ncclInvalidUsage;
  --groupDepth;
  return ncclSuccess;
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar,
                                      ncclDataType_t type,
                                      ncclScalarResidence_t residence,
                                      ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!comms.count(comm))
    return ncclInvalidArgument;
  if (!op || !scalar || residence != ncclScalarHostImmediate ||
      (type != ncclFloat32 && type != ncclFloat64)) {
    comm->lastError = "fake NCCL: ncclRedOpCreatePreMulSum supports only "
                      "f32/f64 scalars of ncclScalarHostImmediate";
    return ncclInvalidArgument;
  }
  double value = type == ncclFloat32 ? *static_cast<const float *>(scalar)
                                     : *static_cast<const double *>(scalar);
  *op = ncclRedOp_t(comm->nextOp++);
  comm->preMulSums[int(*op)] = {type, value};
  ++preMulSums;
  return ncclSuccess;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!comms.count(comm) || !comm->preMulSums.erase(int(op)))
    return ncclInvalidArgument;
  --preMulSums;
  return ncclSuccess;
}

ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  if (!ptr)
    return ncclInvalidArgument;
  std::lock_guard<std::mutex> lock(mutex);
  *ptr = std::malloc(size ? size : 1);
  blocks.insert(*ptr);
  return ncclSuccess;
}

ncclResult_t ncclMemFree(void *ptr) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!blocks.erase(ptr))
    return ncclInvalidArgument;
  std::free(ptr);
  return ncclSuccess;
}

} // extern "C"
