// The training loop: per optimizer step, `accumulate` fwd_bwd calls on
// micro-batches of one global batch, then update (docs/pipeline.md).
#include "runtime/driver/Trainer.h"

#include "runtime/data/BatchOrder.h"
#include "runtime/dist/Gloo.h"
#include "runtime/dist/GpuRank.h"
#include "runtime/dist/RankContext.h"
#include "runtime/dist/Rendezvous.h"
#include "runtime/driver/Devices.h"
#include "runtime/driver/GradScaler.h"
#include "runtime/driver/Initializers.h"
#include "runtime/driver/Preflight.h"
#include "runtime/driver/Signals.h"
#include "runtime/driver/Text.h"
#include "runtime/driver/TrainPlan.h"
#include "runtime/driver/TrainRanks.h"
#include "runtime/driver/Zero.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace modelc::rt {

namespace {

using Clock = std::chrono::steady_clock;

/// `nccl` is rank 0's communicator on GPU ranks, else null.
void printBanner(const Manifest &m, const TrainPlan &p, const CommandLine &cl,
                 const Arena &arena, const ZeroShards *zero,
                 const dist::NcclCommunicator *nccl, ProgramIO &io) {
  const TrainInfo &e = *p.entry;
  io.err << fmt::format("{} (source {})\n", m.sourceName,
                        m.sourceHash.substr(0, 12));
  io.err << fmt::format("train {}: {}, batch {} x accumulate {} x ranks {} "
                        "(global batch {}), {} steps ({} per epoch of {} "
                        "samples)\n",
                        e.name, deviceText(arena), e.batch, p.accumulate,
                        p.ranks, p.globalBatch, p.totalSteps, p.stepsPerEpoch,
                        p.data->numSamples());
  std::string precision = "precision " + e.precision;
  if (const std::optional<GradScalerInfo> &g = p.settings.gradScaler)
    precision += fmt::format(" with dynamic loss scaling (initial scale {:g}, "
                             "x{:g} after {} finite steps, x{:g} and the step "
                             "skipped on inf/NaN)",
                             g->initScale, g->growthFactor, g->growthInterval,
                             g->backoffFactor);
  io.err << precision << "\n";
  if (const cuda::Device *d = arena.device())
    io.err << fmt::format("parameters {}, arena {} planned on the GPU ({} "
                          "kernels)\n",
                          formatCount(m.parameterCount()),
                          formatBytes(d->arenaBytes()), d->kernelCount());
  else
    io.err << fmt::format("parameters {}, arena {} planned{}\n",
                          formatCount(m.parameterCount()),
                          formatBytes(m.arenaBytes),
                          p.ranks > 1 ? " per rank" : "");
  const dist::LaunchPlan &l = p.launch;
  bool ipv6 = l.masterHost.find(':') != std::string::npos;
  if (l.processes > 1)
    io.err << fmt::format("{} processes x {} rank{} ({}), rendezvous at "
                          "{}{}{}:{}, served by node 0\n",
                          l.processes, l.ranksPerProcess,
                          l.ranksPerProcess == 1 ? "" : "s", l.source,
                          ipv6 ? "[" : "", l.masterHost, ipv6 ? "]" : "",
                          l.masterPort);
  if (nccl)
    io.err << fmt::format("GPU ranks over NCCL {} (one thread per GPU; the "
                          "gradient buckets all-reduced on a communication "
                          "stream during the backward)\n",
                          dist::ncclVersionText(nccl->api().version));
  if (zero) {
    std::vector<uint64_t> held = zero->bytesPerRank();
    uint64_t most = *std::max_element(held.begin(), held.end());
    io.err << fmt::format("zero 1: optimizer state {} sharded in chunks "
                          "over {} rank{}: at most {} per rank, plus a {} "
                          "window\n",
                          formatBytes(zero->totalBytes()), zero->ranks(),
                          zero->ranks() == 1 ? "" : "s", formatBytes(most),
                          formatBytes(zero->windowBytes()));
  }
  if (!p.checkpoint.resumeFrom.empty())
    io.err << "resuming from " << p.checkpoint.resumeFrom
           << (p.rescaled.empty() ? "" : ": " + p.rescaled) << "\n";
}

/// How the loop ended without an error: the run is complete, or it
/// stopped early with a checkpoint (--time-limit) and `note` says how to go
/// on.
struct LoopEnd {
  bool finished = true;
  std::string note;
};

class TrainLoop {
public:
  /// `log` is rank 0's; the other ranks log nothing (null).
  TrainLoop(const TrainPlan &plan, const CommandLine &cl,
            CheckpointState identity, Arena &arena, RunLog *log,
            ProgramIO &io, Clock::time_point started, RankPlace place,
            ZeroShards *zero)
      : p_(plan), cl_(cl), identity_(std::move(identity)), arena_(arena),
        log_(log), io_(io), started_(started), place_(place), zero_(zero),
        context_(place.comm),
        order_(plan.data->numSamples(), plan.globalBatch, plan.settings.shuffle,
               plan.settings.seed) {
    if (plan.settings.gradScaler)
      scaler_.emplace(*plan.settings.gradScaler);
    // The program scales each micro-batch's gradient by 1/accumulate of its
    // entry; the buckets' sums over the ranks become the mean over all of
    // the step's micro-batches.
    context_.setDivisor(double(plan.accumulate * place.ranks) /
                        double(plan.entry->accumulate));
  }

  const dist::RankContext &rankContext() const { return context_; }

  Status resume() {
    // ZeRO-1: the whole state is read, then each rank keeps its shard.
    CheckpointTensors tensors = p_.tensors;
    std::optional<Arena> whole;
    if (zero_) {
      Result<Arena> a = zero_->wholeArena();
      if (!a)
        return a.status();
      whole.emplace(a.take());
      tensors.state = zero_->wholeState();
      tensors.stateArena = &*whole;
    }
    Result<CheckpointState> s =
        restoreCheckpoint(p_.checkpoint.resumeFrom, identity_.sourceHash,
                          p_.entry->name, tensors, arena_);
    if (!s)
      return s.status();
    if (zero_)
      zero_->takeShard(*whole);
    // --allow-batch-change: the cursor in batches of the new global batch
    // (TrainPlan::BatchChange), which the checks below then hold to.
    if (const std::optional<TrainPlan::BatchChange> &c = p_.batchChange) {
      s->epoch = c->epoch;
      s->batchInEpoch = c->batchInEpoch;
    }
    if (s->batchInEpoch >= p_.stepsPerEpoch)
      return Status::error(fmt::format(
          "{}: its data cursor (batch {} of epoch {}) does not fit data set "
          "'{}' ({} steps per epoch); was the data changed?",
          p_.checkpoint.resumeFrom, s->batchInEpoch, s->epoch, p_.data->name(),
          p_.stepsPerEpoch));
    if (s->step > p_.totalSteps)
      return Status::error(
          fmt::format("{} is at step {}, past the end of this run ({} steps)",
                      p_.checkpoint.resumeFrom, s->step, p_.totalSteps));
    if (s->epoch * p_.stepsPerEpoch + s->batchInEpoch - s->step !=
        p_.cursorShift)
      return Status::error(fmt::format(
          "{}: its data cursor (batch {} of epoch {}) is not where {} steps "
          "of {} per epoch end; was the data or the batch changed?",
          p_.checkpoint.resumeFrom, s->batchInEpoch, s->epoch, s->step,
          p_.stepsPerEpoch));
    step_ = lastCheckpoint_ = s->step;
    lastCheckpointDir_ = p_.checkpoint.resumeFrom;
    counter_ = s->rngCounter;
    skippedSteps_ = s->skippedSteps;
    // The scale goes on from an f16 run's checkpoint; a run that was not
    // f16 (or an older checkpoint) leaves the scaler at its initial scale.
    if (scaler_ && s->precision == "f16" &&
        !scaler_->restore(s->lossScale, s->growthTracker))
      return Status::error(fmt::format(
          "{}: its loss scale {} cannot be restored (not a positive f32); "
          "was the file edited?",
          p_.checkpoint.resumeFrom, s->lossScale));
    order_.seek(s->epoch, s->batchInEpoch);
    cursor_ = {order_.epoch(), order_.batchInEpoch()};
    return Status();
  }

  Result<LoopEnd> run();
  /// The checkpoint at the end of a finished run, unless the last step
  /// wrote one; nothing without a checkpoint directory.
  Status finalCheckpoint();
  int64_t lastCheckpoint() const { return lastCheckpoint_; }
  const std::string &lastCheckpointDir() const { return lastCheckpointDir_; }

private:
  /// Where the data order stands: (epoch, batch in epoch) of the batch
  /// after the last one trained, what a checkpoint records.
  struct Cursor {
    int64_t epoch = 0, batchInEpoch = 0;
  };
  /// The next step's batch, taken from the order (and its first micro-batch
  /// loaded and staged) while the device ran the current step.
  struct Prefetched {
    const int64_t *global = nullptr;
    Cursor after;
    bool loaded = false;
  };

  Status runStep(int64_t s);
  /// Step s's micro-batches of the global batch at `global` (the first
  /// already `loaded` when prefetched) through fwd_bwd; `sums` receives
  /// the loss and metrics averaged over them.
  Status forwardBackward(int64_t s, const int64_t *global, bool loaded,
                         std::vector<double> &sums);
  /// Step s's update (and ZeRO's exchange), and the loss scale's; waits
  /// for it when the step is `logged` or the scale depends on it.
  Status update(int64_t s, bool logged);
  /// With several ranks, rank 0's module buffers (running statistics) to
  /// every rank after each step, as DDP's broadcast_buffers: each rank
  /// updates them from its own slice of the batch.
  Status broadcastModuleBuffers();
  /// The log record of step s.
  void logStep(int64_t s, const std::vector<double> &sums, double lossScale);
  /// This rank's micro-batch `a` of the global batch at `global` (spec §7:
  /// samples [(a*R + r)*batch, (a*R + r + 1)*batch) of it).
  const int64_t *microBatch(const int64_t *global, int64_t a) const {
    return global + (a * place_.ranks + place_.rank) * p_.entry->batch;
  }
  /// The dropout counter of this rank's micro-batch number `counter` (from
  /// 1): distinct over ranks, the single-rank counter with one rank.
  uint64_t rankCounter(uint64_t counter) const {
    return (counter - 1) * uint64_t(place_.ranks) + uint64_t(place_.rank) + 1;
  }
  /// The step's loss and metrics averaged over the ranks, and whether any
  /// rank was sent a signal or rank 0's time limit is up: every rank
  /// decides the same.
  Status agree(std::vector<double> &averages, int64_t s);
  /// Whether step s+1's batch may be fetched during step s: not after the
  /// last step, nor before an evaluation or a checkpoint. An evaluation may
  /// launch fwd_bwd itself on its own batches (then the staged batch would
  /// be overwritten), and keeping both out keeps the arena as the
  /// checkpoint and eval code have always seen it.
  bool prefetchAfter(int64_t s) const;
  Status checkpoint(int64_t s, uint64_t counter, int64_t epoch,
                    int64_t batchInEpoch);
  /// The checkpoint after step s, where the cursor now stands.
  Status checkpointNow(int64_t s) {
    return checkpoint(s, counter_, cursor_.epoch, cursor_.batchInEpoch);
  }
  Status evaluate(int64_t s);
  /// The error of a non-finite loss at step s: the parameters after step
  /// s-1 made it, so their checkpoint (if any) is set aside and the message
  /// names the newest checkpoint before them.
  Status diverged(int64_t s, double loss);
  /// Ends the run after step s for `why` (a signal, a log that cannot be
  /// written, the time limit) with a checkpoint; the message says where.
  Status stopAfter(int64_t s, const std::string &why, int exitCode);
  /// After each step: a --log write error stops the run, or with
  /// --log-errors=warn is reported once.
  Status checkLog(int64_t s);
  bool timeIsUp() const {
    return cl_.timeLimitSeconds &&
           std::chrono::duration<double>(Clock::now() - started_).count() >=
               *cl_.timeLimitSeconds;
  }

  const TrainPlan &p_;
  const CommandLine &cl_;
  CheckpointState identity_;
  Arena &arena_;
  RunLog *log_;
  ProgramIO &io_;
  Clock::time_point started_;
  RankPlace place_;
  /// ZeRO-1's shards of the optimizer state; null without zero = 1.
  ZeroShards *zero_;
  dist::RankContext context_;
  /// What agree() decided for the step just run: the signal to stop for
  /// (0: none) and whether the time limit is up.
  int stopSignal_ = 0;
  bool timeUp_ = false;
  bool logWarned_ = false;
  BatchOrder order_;
  Cursor cursor_;
  Prefetched next_;
  int64_t step_ = 0;
  uint64_t counter_ = 0;
  /// f16: torch.amp.GradScaler's state. The steps it skipped (kept in every
  /// precision, so that a resumed f16 run's optimizer count carries over).
  std::optional<GradScaler> scaler_;
  int64_t skippedSteps_ = 0;
  int64_t lastCheckpoint_ = -1, lastEval_ = -1;
  std::string lastCheckpointDir_;
  double trainSeconds_ = 0;
  int64_t samplesSinceLog_ = 0;
};

Status TrainLoop::checkpoint(int64_t s, uint64_t counter, int64_t epoch,
                             int64_t batchInEpoch) {
  // Every rank holds the same state: rank 0 writes it (as D/step_N,
  // which the other ranks name in their messages). Under ZeRO-1 each
  // holds a shard of the optimizer state, which rank 0 gathers first.
  CheckpointTensors tensors = p_.tensors;
  std::optional<Arena> whole;
  if (zero_) {
    Result<std::optional<Arena>> gathered = zero_->gather(place_.comm);
    if (!gathered)
      return gathered.status();
    whole = gathered.take();
    if (whole) {
      tensors.state = zero_->wholeState();
      tensors.stateArena = &*whole;
    }
  }
  if (!place_.leader()) {
    lastCheckpoint_ = s;
    lastCheckpointDir_ =
        (std::filesystem::path(p_.checkpoint.dir) / fmt::format("step_{}", s))
            .string();
    return Status();
  }
  CheckpointState state = identity_;
  state.step = s;
  state.epoch = epoch;
  state.batchInEpoch = batchInEpoch;
  state.rngCounter = counter;
  state.precision = p_.entry->precision;
  state.ranks = place_.ranks;
  state.accumulate = p_.accumulate;
  state.cursorShift = p_.cursorShift;
  state.skippedSteps = skippedSteps_;
  if (scaler_) {
    state.lossScale = scaler_->scale();
    state.growthTracker = scaler_->growthTracker();
  }
  MODELC_RETURN_IF_ERROR(arena_.pullPersistent());
  state.paramsFinite = allFinite(p_.tensors.params, arena_);
  Result<std::string> dir = writeCheckpoint(
      p_.checkpoint.dir, state, tensors, arena_, p_.checkpoint.keep);
  if (!dir)
    return dir.status();
  lastCheckpoint_ = s;
  lastCheckpointDir_ = *dir;
  return Status();
}

Status TrainLoop::evaluate(int64_t s) {
  Result<std::vector<double>> averages = p_.evaluator->run(
      arena_, p_.settings.evalSteps, place_.rank, place_.comm);
  if (!averages)
    return averages.status();
  if (log_)
    log_->eval(s, *averages);
  lastEval_ = s;
  return Status();
}

bool TrainLoop::prefetchAfter(int64_t s) const {
  if (s >= p_.totalSteps)
    return false;
  int64_t evalEvery = p_.settings.evalEvery;
  bool eval = p_.evaluator && ((evalEvery > 0 && s % evalEvery == 0) ||
                               (evalEvery == 0 && cursor_.batchInEpoch == 0));
  bool checkpoint = p_.checkpoint.every > 0 && s % p_.checkpoint.every == 0;
  return !eval && !checkpoint;
}

Status TrainLoop::runStep(int64_t s) {
  Clock::time_point start = Clock::now();
  const int64_t *global = next_.global;
  if (global) {
    cursor_ = next_.after;
  } else {
    global = order_.next();
    cursor_ = {order_.epoch(), order_.batchInEpoch()};
  }
  bool loaded = next_.loaded;
  next_ = {};
  double lossScale = scaler_ ? scaler_->scale() : 1.0;
  p_.hypers->write(
      {s, p_.totalSteps, counter_, s - skippedSteps_, lossScale}, arena_);
  std::vector<double> sums(p_.outputs.size(), 0.0);
  MODELC_RETURN_IF_ERROR(forwardBackward(s, global, loaded, sums));
  MODELC_RETURN_IF_ERROR(agree(sums, s));
  if (!std::isfinite(sums[0]))
    return diverged(s, sums[0]);
  bool logged = s % p_.settings.logEvery == 0 || s == p_.totalSteps;
  MODELC_RETURN_IF_ERROR(update(s, logged));
  MODELC_RETURN_IF_ERROR(broadcastModuleBuffers());
  trainSeconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  samplesSinceLog_ += p_.globalBatch;
  if (logged)
    logStep(s, sums, lossScale);
  int64_t evalEvery = p_.settings.evalEvery;
  if (p_.evaluator && ((evalEvery > 0 && s % evalEvery == 0) ||
                       (evalEvery == 0 && cursor_.batchInEpoch == 0)))
    MODELC_RETURN_IF_ERROR(evaluate(s));
  if (p_.checkpoint.every > 0 && s % p_.checkpoint.every == 0) {
    // A failed periodic checkpoint does not stop the run: the next one or
    // the final one may succeed (a full disk freed).
    Status written = checkpointNow(s);
    if (!written.ok())
      io_.err << fmt::format(
          "warning: the checkpoint after step {} failed: {}; training goes "
          "on{}\n",
          s, written.message(),
          lastCheckpointDir_.empty()
              ? ""
              : "; the last checkpoint is " + lastCheckpointDir_);
  }
  return Status();
}

Status TrainLoop::broadcastModuleBuffers() {
  if (!place_.comm || place_.ranks == 1)
    return Status();
  // On GPUs the buffers are the device arena's, broadcast in stream order
  // after the update.
  for (const NamedBuffer &t : p_.tensors.params)
    if (t.buffer->role == Role::ModuleBuffer) {
      void *data = arena_.at(*t.buffer);
      dist::Communicator *comm = place_.comm;
      if (place_.nccl) {
        data = reinterpret_cast<void *>(
            uintptr_t(arena_.device()->arenaAddress() + t.buffer->offset));
        comm = place_.nccl;
      }
      MODELC_RETURN_IF_ERROR(comm->broadcast(data, t.buffer->bytes, 0));
    }
  return Status();
}

Status TrainLoop::forwardBackward(int64_t s, const int64_t *global,
                                  bool loaded, std::vector<double> &sums) {
  for (int64_t a = 0; a < p_.accumulate; ++a) {
    if (!loaded)
      p_.data->load(microBatch(global, a), arena_);
    p_.hypers->writeRngCounter(rankCounter(++counter_), arena_);
    // The gradients are averaged over the ranks after the last micro-batch
    // only (the all-reduces in fwd_bwd, docs/passes/data-parallel.md).
    context_.setReducing(a + 1 == p_.accumulate);
    MODELC_RETURN_IF_ERROR(arena_.launch(p_.fwdBwd));
    // While the device runs this micro-batch, the host gathers the next one
    // (of this step, or the first of the next step) and sends it.
    loaded = a + 1 < p_.accumulate;
    if (loaded) {
      p_.data->load(microBatch(global, a + 1), arena_);
      MODELC_RETURN_IF_ERROR(arena_.stageInputs(p_.fwdBwd));
    } else if (prefetchAfter(s)) {
      next_.global = order_.next();
      next_.after = {order_.epoch(), order_.batchInEpoch()};
      next_.loaded = true;
      p_.data->load(microBatch(next_.global, 0), arena_);
      MODELC_RETURN_IF_ERROR(arena_.stageInputs(p_.fwdBwd));
    }
    MODELC_RETURN_IF_ERROR(arena_.finish(p_.fwdBwd));
    MODELC_RETURN_IF_ERROR(context_.takeError());
    for (size_t i = 0; i < sums.size(); ++i)
      sums[i] += arena_.readScalar(*p_.outputs[i]);
  }
  for (double &v : sums)
    v /= double(p_.accumulate);
  return Status();
}

Status TrainLoop::update(int64_t s, bool logged) {
  // The update's outputs (lr, grad norm) are read only on logged steps;
  // otherwise the host goes on to the next step while the device updates.
  // With loss scaling the host waits every step: the next step's scale
  // depends on whether this one's gradients were finite.
  MODELC_RETURN_IF_ERROR(arena_.launch(p_.update));
  if (zero_)
    MODELC_RETURN_IF_ERROR(zero_->update(arena_, place_.comm));
  if (logged || scaler_)
    MODELC_RETURN_IF_ERROR(arena_.finish(p_.update));
  if (!scaler_)
    return Status();
  bool skipped = arena_.readScalar(*p_.foundInf) != 0;
  skippedSteps_ += skipped;
  scaler_->update(skipped);
  if (scaler_->scale() == 0)
    return Status::error(
        fmt::format("training diverged at step {}: the loss scale fell to "
                    "0 after {} skipped steps (the gradients are inf or "
                    "NaN at every scale); start again with a lower "
                    "learning rate, e.g. --set lr={:g}, or use bf16",
                    s, skippedSteps_, p_.settings.optimizer.lr / 10),
        kExitDiverged);
  return Status();
}

void TrainLoop::logStep(int64_t s, const std::vector<double> &sums,
                        double lossScale) {
  StepRecord r;
  r.step = s;
  r.loss = sums[0];
  r.metrics.assign(sums.begin() + 1, sums.end());
  if (p_.lr)
    r.lr = arena_.readScalar(*p_.lr);
  if (p_.gradNorm)
    r.gradNorm = arena_.readScalar(*p_.gradNorm);
  if (scaler_) {
    r.lossScale = lossScale;
    r.skippedSteps = skippedSteps_;
  }
  int64_t tokens = p_.data->tokensPerSample();
  double units = double(samplesSinceLog_) * double(tokens ? tokens : 1);
  r.throughput = trainSeconds_ > 0 ? units / trainSeconds_ : 0;
  if (log_)
    log_->step(r);
  trainSeconds_ = 0;
  samplesSinceLog_ = 0;
}

Status TrainLoop::agree(std::vector<double> &averages, int64_t s) {
  int signal = SignalGuard::pending();
  bool timeUp = place_.leader() && s < p_.totalSteps && timeIsUp();
  if (!place_.comm || place_.ranks == 1) {
    stopSignal_ = signal;
    timeUp_ = timeUp;
    return Status();
  }
  std::vector<double> shared = averages;
  shared.push_back(signal == SIGTERM);
  shared.push_back(signal == SIGINT);
  shared.push_back(timeUp);
  MODELC_RETURN_IF_ERROR(
      place_.comm->allReduceSum(shared.data(), shared.size()));
  for (size_t i = 0; i < averages.size(); ++i)
    averages[i] = shared[i] / double(place_.ranks);
  size_t flags = averages.size();
  stopSignal_ = shared[flags] > 0 ? SIGTERM : shared[flags + 1] > 0 ? SIGINT : 0;
  timeUp_ = shared[flags + 2] > 0;
  return Status();
}

Status TrainLoop::diverged(int64_t s, double loss) {
  std::string msg =
      fmt::format("training diverged at step {}: the loss is {}", s, loss);
  // Every rank sees the same loss; rank 0 speaks for them and sets the
  // checkpoint aside.
  if (!place_.leader())
    return Status::error(msg, kExitDiverged);
  std::string lower =
      fmt::format("--set lr={:g}", p_.settings.optimizer.lr / 10);
  const std::string &dir = p_.checkpoint.dir;
  if (dir.empty())
    return Status::error(msg + "; no checkpoint directory; start again with "
                               "a lower learning rate, e.g. " +
                             lower,
                         kExitDiverged);
  // The state after step s-1 (its parameters, or with them the next batch)
  // made this loss: resuming from it only repeats it.
  Result<std::string> setAside = markDiverged(dir, s - 1);
  if (!setAside)
    return Status::error(msg + "; " + setAside.status().message(),
                         kExitDiverged);
  if (!setAside->empty())
    msg += fmt::format("; the checkpoint of step {} leads to it (kept as "
                       "{})",
                       s - 1, *setAside);
  Result<std::optional<std::string>> good = lastGoodCheckpoint(dir, s - 2);
  if (!good)
    return Status::error(msg + "; " + good.status().message(), kExitDiverged);
  if (*good)
    msg += fmt::format("; the last good checkpoint is {}: resume from it "
                       "with a lower learning rate, e.g. --resume {} {}",
                       **good, dir, lower);
  else
    msg += fmt::format("; there is no good checkpoint (none before step "
                       "{}; --checkpoint-every N writes them): start again "
                       "with a lower learning rate, e.g. {}",
                       std::max<int64_t>(s - 1, 1), lower);
  return Status::error(msg, kExitDiverged);
}

Status TrainLoop::stopAfter(int64_t s, const std::string &why, int exitCode) {
  if (log_)
    log_->finish();
  if (p_.checkpoint.dir.empty())
    return Status::error(fmt::format("{} after step {}; no checkpoint "
                                     "directory, nothing saved",
                                     why, s),
                         exitCode);
  if (lastCheckpoint_ != s) {
    Status written = checkpointNow(s);
    if (!written.ok())
      return Status::error(
          fmt::format("{} after step {}; the checkpoint failed: {}{}", why, s,
                      written.message(),
                      lastCheckpointDir_.empty()
                          ? "; nothing saved"
                          : "; the last checkpoint is " + lastCheckpointDir_),
          exitCode == 0 ? kExitUsage : exitCode);
  }
  return Status::error(fmt::format("{} after step {}; checkpoint {} "
                                   "(continue with --resume {})",
                                   why, s, lastCheckpointDir_,
                                   p_.checkpoint.dir),
                       exitCode);
}

Status TrainLoop::checkLog(int64_t s) {
  if (!log_)
    return Status();
  const Status &logged = log_->fileStatus();
  if (logged.ok() || logWarned_)
    return Status();
  if (cl_.logErrorsWarn) {
    io_.err << "warning: " << logged.message()
            << "; training goes on without it (--log-errors=warn)\n";
    logWarned_ = true;
    return Status();
  }
  return stopAfter(s, logged.message() + " (--log-errors=warn goes on)",
                   kExitUsage);
}

Result<LoopEnd> TrainLoop::run() {
  for (int64_t s = step_ + 1; s <= p_.totalSteps; ++s) {
    MODELC_RETURN_IF_ERROR(runStep(s));
    step_ = s;
    if (int sig = stopSignal_) {
      SignalGuard::acknowledge();
      return stopAfter(s,
                       fmt::format("stopped by {}",
                                   sig == SIGINT ? "SIGINT" : "SIGTERM"),
                       128 + sig);
    }
    MODELC_RETURN_IF_ERROR(checkLog(s));
    if (timeUp_) {
      Status stopped = stopAfter(s, "time limit " + cl_.timeLimitText + " reached", 0);
      if (stopped.exitCode() != 0)
        return stopped;
      return LoopEnd{false, stopped.message()};
    }
  }
  if (p_.evaluator && lastEval_ != p_.totalSteps)
    MODELC_RETURN_IF_ERROR(evaluate(p_.totalSteps));
  if (log_)
    log_->finish();
  MODELC_RETURN_IF_ERROR(checkLog(p_.totalSteps));
  return LoopEnd();
}

Status TrainLoop::finalCheckpoint() {
  if (p_.checkpoint.dir.empty() || lastCheckpoint_ == p_.totalSteps)
    return Status();
  return checkpointNow(p_.totalSteps);
}

/// The end of a finished run: the final checkpoint and --save, each written
/// whatever happened to the other; the message says what was kept where.
Status keepResults(TrainLoop &loop, const TrainPlan &plan,
                   const CommandLine &cl, Arena &arena, ProgramIO &io) {
  Status checkpointed = loop.finalCheckpoint();
  Status saved;
  if (!cl.save.empty()) {
    saved = arena.pullPersistent();
    if (saved.ok())
      saved = saveTensors(cl.save, plan.tensors.params, arena);
    if (saved.ok())
      io.err << "saved the parameters to " << cl.save << "\n";
  }
  if (checkpointed.ok() && saved.ok())
    return Status();
  std::string msg;
  if (!checkpointed.ok())
    msg = "the final checkpoint failed: " + checkpointed.message();
  if (!saved.ok())
    msg += (msg.empty() ? "" : "; ") + ("--save failed: " + saved.message());
  bool checkpointKept = checkpointed.ok() && !plan.checkpoint.dir.empty();
  if (!cl.save.empty() && saved.ok())
    msg += "; the trained parameters are in " + cl.save;
  else if (checkpointKept)
    msg += "; the trained parameters are in the final checkpoint " +
           loop.lastCheckpointDir();
  else if (!loop.lastCheckpointDir().empty())
    msg += fmt::format("; the last checkpoint kept is {} (step {})",
                       loop.lastCheckpointDir(), loop.lastCheckpoint());
  else
    msg += "; the trained parameters could not be kept";
  return Status::error(msg, kExitUsage);
}

/// A GPU rank's device (until the arena takes it) and communicators, which
/// outlive the arena: destroying NCCL's waits for work queued on the GPU.
struct GpuRank {
  std::unique_ptr<cuda::Device> device;
  dist::GpuRankComms comms;
  dist::GpuRankGroup *group = nullptr;

  GpuRank() = default;
  GpuRank(const GpuRank &) = delete;
  GpuRank &operator=(const GpuRank &) = delete;
  ~GpuRank() {
    if (group && comms.device)
      group->remove(comms.device.get());
  }

  /// Opens the GPU, waits for the process's other ranks to open theirs and
  /// joins NCCL; `place` then talks through it. One GPU alone needs no
  /// collectives: where NCCL cannot start it trains without, after a note.
  Status join(const Manifest &m, GpuJoin &j, RankPlace &place, ProgramIO &io) {
    Result<std::unique_ptr<cuda::Device>> opened =
        gpuBackend().open(j.ordinal, m);
    // Whatever can fail before NCCL's join fails before this barrier.
    if (opened) {
      Status current = (*opened)->makeCurrent();
      if (!current.ok())
        opened = current;
    }
    if (!j.group.opened(opened.ok())) {
      j.secondary = opened.ok();
      return opened.ok()
                 ? Status::error("another GPU rank could not start", kExitUsage)
                 : opened.status();
    }
    device = opened.take();
    Result<dist::GpuRankComms> joined =
        dist::connectGpuRank(j.id, place.rank, place.ranks, *device);
    if (!joined && place.ranks == 1) {
      io.err << "note: " << joined.status().message()
             << "; one GPU trains without NCCL\n";
      return Status();
    }
    if (!joined)
      return joined.status();
    comms = joined.take();
    group = &j.group;
    group->add(comms.device);
    place.comm = comms.host.get();
    place.nccl = comms.device.get();
    return Status();
  }
};

} // namespace

/// One rank's training: its arena, initialised alike on every rank (the
/// same seed), the loop, and on rank 0 the log, the banner and what is
/// kept at the end. A rank of `--gpus` (`gpuJoin`) first opens its GPU and
/// joins the others over NCCL.
Status trainRank(const RunShared &run, RankPlace place, ProgramIO &io,
                 GpuJoin *gpuJoin) {
  const Manifest &m = run.m;
  const CommandLine &cl = run.cl;
  const TrainPlan &plan = run.plan;
  GpuRank gpu;
  if (gpuJoin)
    MODELC_RETURN_IF_ERROR(gpu.join(m, *gpuJoin, place, io));
  Result<Arena> arena = Arena::allocate(m.arenaBytes);
  if (!arena)
    return arena.status();
  // A GPU rank that fails aborts its group before its device (in the
  // arena) goes: the device waits for its streams, where NCCL's kernels
  // may wait for this rank's peers.
  struct AbortOnError {
    dist::GpuRankGroup *group;
    bool ok = false;
    ~AbortOnError() {
      if (group && !ok)
        group->abortAll();
    }
  } guard{gpuJoin ? &gpuJoin->group : nullptr};
  auto done = [&](Status s) {
    guard.ok = s.ok();
    return s;
  };
  MODELC_RETURN_IF_ERROR(initializeParameters(m, plan.settings.seed, *arena));
  if (!cl.init.empty())
    MODELC_RETURN_IF_ERROR(
        loadTensors(cl.init, plan.tensors.params, *arena, "parameters"));
  bool resuming = !plan.checkpoint.resumeFrom.empty();
  std::optional<RunLog> log;
  if (place.leader()) {
    Result<RunLog> opened =
        RunLog::open(io, cl.log, resuming, plan.totalSteps, plan.entry->outputs,
                     plan.data->tokensPerSample() > 0);
    if (!opened)
      return opened.status();
    log.emplace(opened.take());
  }
  std::optional<ZeroShards> zero;
  if (plan.entry->zero) {
    Result<ZeroShards> shards =
        ZeroShards::create(m, *plan.entry, place.rank, place.ranks);
    if (!shards)
      return shards.status();
    zero.emplace(shards.take());
  }
  TrainLoop loop(plan, cl, run.identity, *arena, log ? &*log : nullptr, io,
                 run.started, place, zero ? &*zero : nullptr);
  if (resuming)
    MODELC_RETURN_IF_ERROR(loop.resume());
  std::optional<dist::NcclBucketReducer> reducer;
  if (gpu.comms.device) {
    reducer.emplace(*gpu.comms.device, loop.rankContext());
    MODELC_RETURN_IF_ERROR(gpu.device->setReducer(&*reducer));
  } else if (run.device.gpu && loop.rankContext().divisor() != 1) {
    // One GPU without NCCL has nothing to average, but a resumed run that
    // changed its accumulation must still scale its gradients.
    return Status::error(
        fmt::format("--resume {}: the run's accumulation changed, so the "
                    "GPU must scale its gradient buckets, which it does over "
                    "NCCL: run with --gpus 1 where NCCL is installed, or "
                    "resume with the checkpoint's rank count",
                    plan.checkpoint.resumeFrom),
        kExitUsage);
  }
  if (gpu.device)
    MODELC_RETURN_IF_ERROR(arena->useDevice(std::move(gpu.device), m));
  else
    MODELC_RETURN_IF_ERROR(useDevice(run.device, m, *arena, io));
  if (place.leader())
    printBanner(m, plan, cl, *arena, zero ? &*zero : nullptr,
                gpu.comms.device.get(), io);
  Result<LoopEnd> end = loop.run();
  if (!end)
    return end.status();
  // Under ZeRO-1 the final checkpoint gathers the state from every rank.
  if (!place.leader())
    return done(zero && end->finished ? loop.finalCheckpoint() : Status());
  if (!end->finished) {
    io.err << end->note
           << (cl.save.empty() ? "" : "; --save is written when the run ends")
           << "\n";
    return done(log->close());
  }
  MODELC_RETURN_IF_ERROR(keepResults(loop, plan, cl, *arena, io));
  Status logClosed = log->close();
  if (!logClosed.ok() && !cl.logErrorsWarn)
    return logClosed;
  return done(Status());
}

Status runTraining(const Manifest &m, const CommandLine &cl, ProgramIO &io) {
  Clock::time_point started = Clock::now();
  Result<DeviceChoice> device = chooseDevice(cl, m);
  if (!device)
    return device.status();
  Result<TrainPlan> plan =
      planTraining(m, cl,
                   device->gpu ? std::max<int>(1, int(device->ordinals.size()))
                               : int(cl.ranks));
  if (!plan)
    return plan.status();
  CheckpointState identity = runIdentity(*plan, m.sourceHash);
  const dist::LaunchPlan &launch = plan->launch;
  if (plan->entry->zero && device->gpu)
    return Status::error(
        fmt::format("train {}: zero = 1 (ZeRO-1) shards the optimizer state "
                    "over CPU ranks for now: pass --cpu (ZeRO-1 on GPU "
                    "ranks is not there yet)",
                    plan->entry->name));
  // Node 0 alone writes, so it alone checks where it will write.
  if (launch.process == 0)
    MODELC_RETURN_IF_ERROR(preflightTraining(*plan, cl, identity, io));
  // One guard for the process: every rank reads its signal.
  SignalGuard signals;
  RunShared run{m, cl, *plan, identity, *device, started};
  if (device->gpu && !device->ordinals.empty() && launch.processes == 1)
    return trainGpuRanks(run, io);
  if (plan->ranks > 1) {
    // A rank that is gone closes its sockets: writing to one must be an
    // error that names it, not a signal that kills this process.
    std::signal(SIGPIPE, SIG_IGN);
    return launch.processes > 1 ? trainProcesses(run, io)
                                : trainThreadRanks(run, io);
  }
  return trainRank(run, RankPlace(), io);
}

} // namespace modelc::rt
