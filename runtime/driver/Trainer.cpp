// The training loop: per optimizer step, `accumulate` fwd_bwd calls on
// micro-batches of one global batch, then update (docs/pipeline.md).
#include "runtime/driver/Trainer.h"

#include "runtime/data/BatchOrder.h"
#include "runtime/driver/Devices.h"
#include "runtime/driver/Initializers.h"
#include "runtime/driver/Signals.h"
#include "runtime/driver/Text.h"
#include "runtime/driver/TrainPlan.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <csignal>

namespace modelc::rt {

namespace {

using Clock = std::chrono::steady_clock;

void printBanner(const Manifest &m, const TrainPlan &p, const CommandLine &cl,
                 const Arena &arena, ProgramIO &io) {
  const TrainInfo &e = *p.entry;
  io.err << fmt::format("{} (source {})\n", m.sourceName,
                        m.sourceHash.substr(0, 12));
  io.err << fmt::format("train {}: {}, batch {} x accumulate {} x ranks {}, "
                        "{} steps ({} per epoch of {} samples)\n",
                        e.name, deviceText(arena), e.batch, e.accumulate,
                        cl.ranks, p.totalSteps, p.stepsPerEpoch,
                        p.data->numSamples());
  if (const cuda::Device *d = arena.device())
    io.err << fmt::format("parameters {}, arena {} planned on the GPU ({} "
                          "kernels)\n",
                          formatCount(m.parameterCount()),
                          formatBytes(d->arenaBytes()), d->kernelCount());
  else
    io.err << fmt::format("parameters {}, arena {} planned\n",
                          formatCount(m.parameterCount()),
                          formatBytes(m.arenaBytes));
  if (!p.checkpoint.resumeFrom.empty())
    io.err << "resuming from " << p.checkpoint.resumeFrom << "\n";
}

class TrainLoop {
public:
  TrainLoop(const TrainPlan &plan, const std::string &sourceHash, Arena &arena,
            RunLog &log)
      : p_(plan), sourceHash_(sourceHash), arena_(arena), log_(log),
        order_(plan.data->numSamples(), plan.globalBatch, plan.settings.shuffle,
               plan.settings.seed) {}

  Status resume() {
    Result<CheckpointState> s =
        restoreCheckpoint(p_.checkpoint.resumeFrom, sourceHash_, p_.entry->name,
                          p_.tensors, arena_);
    if (!s)
      return s.status();
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
    step_ = lastCheckpoint_ = s->step;
    counter_ = s->rngCounter;
    order_.seek(s->epoch, s->batchInEpoch);
    cursor_ = {order_.epoch(), order_.batchInEpoch()};
    return Status();
  }

  Status run();

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
  /// Whether step s+1's batch may be fetched during step s: not after the
  /// last step, nor before an evaluation or a checkpoint. An evaluation may
  /// launch fwd_bwd itself on its own batches (then the staged batch would
  /// be overwritten), and keeping both out keeps the arena as the
  /// checkpoint and eval code have always seen it.
  bool prefetchAfter(int64_t s) const;
  Status checkpoint(int64_t s, uint64_t counter, int64_t epoch,
                    int64_t batchInEpoch);
  Status evaluate(int64_t s);

  const TrainPlan &p_;
  std::string sourceHash_;
  Arena &arena_;
  RunLog &log_;
  BatchOrder order_;
  Cursor cursor_;
  Prefetched next_;
  int64_t step_ = 0;
  uint64_t counter_ = 0;
  int64_t lastCheckpoint_ = -1, lastEval_ = -1;
  std::string lastCheckpointDir_;
  double trainSeconds_ = 0;
  int64_t samplesSinceLog_ = 0;
};

Status TrainLoop::checkpoint(int64_t s, uint64_t counter, int64_t epoch,
                             int64_t batchInEpoch) {
  CheckpointState state;
  state.step = s;
  state.epoch = epoch;
  state.batchInEpoch = batchInEpoch;
  state.rngCounter = counter;
  state.sourceHash = sourceHash_;
  state.entry = p_.entry->name;
  state.totalSteps = p_.totalSteps;
  state.seed = p_.settings.seed;
  MODELC_RETURN_IF_ERROR(arena_.pullPersistent());
  Result<std::string> dir = writeCheckpoint(
      p_.checkpoint.dir, state, p_.tensors, arena_, p_.checkpoint.keep);
  if (!dir)
    return dir.status();
  lastCheckpoint_ = s;
  lastCheckpointDir_ = *dir;
  return Status();
}

Status TrainLoop::evaluate(int64_t s) {
  Result<std::vector<double>> averages =
      p_.evaluator->run(arena_, p_.settings.evalSteps);
  if (!averages)
    return averages.status();
  log_.eval(s, *averages);
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
  const TrainInfo &e = *p_.entry;
  Cursor before = cursor_;
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
  p_.hypers->write({s, p_.totalSteps, counter_}, arena_);
  std::vector<double> sums(p_.outputs.size(), 0.0);
  for (int64_t a = 0; a < e.accumulate; ++a) {
    if (!loaded)
      p_.data->load(global + a * e.batch, arena_);
    p_.hypers->writeRngCounter(++counter_, arena_);
    MODELC_RETURN_IF_ERROR(arena_.launch(p_.fwdBwd));
    // While the device runs this micro-batch, the host gathers the next one
    // (of this step, or the first of the next step) and sends it.
    loaded = a + 1 < e.accumulate;
    if (loaded) {
      p_.data->load(global + (a + 1) * e.batch, arena_);
      MODELC_RETURN_IF_ERROR(arena_.stageInputs(p_.fwdBwd));
    } else if (prefetchAfter(s)) {
      next_.global = order_.next();
      next_.after = {order_.epoch(), order_.batchInEpoch()};
      next_.loaded = true;
      p_.data->load(next_.global, arena_);
      MODELC_RETURN_IF_ERROR(arena_.stageInputs(p_.fwdBwd));
    }
    MODELC_RETURN_IF_ERROR(arena_.finish(p_.fwdBwd));
    for (size_t i = 0; i < sums.size(); ++i)
      sums[i] += arena_.readScalar(*p_.outputs[i]);
  }
  for (double &v : sums)
    v /= double(e.accumulate);
  if (!std::isfinite(sums[0])) {
    std::string saved;
    if (!p_.checkpoint.dir.empty() && s > 1) {
      if (lastCheckpoint_ != s - 1)
        MODELC_RETURN_IF_ERROR(checkpoint(s - 1, counter_ - e.accumulate,
                                          before.epoch, before.batchInEpoch));
      saved = "; the last good checkpoint is " + lastCheckpointDir_;
    }
    return Status::error(fmt::format("training diverged at step {}: the loss "
                                     "is {}{}",
                                     s, sums[0], saved),
                         kExitDiverged);
  }
  // The update's outputs (lr, grad norm) are read only on logged steps;
  // otherwise the host goes on to the next step while the device updates.
  MODELC_RETURN_IF_ERROR(arena_.launch(p_.update));
  bool logged = s % p_.settings.logEvery == 0 || s == p_.totalSteps;
  if (logged)
    MODELC_RETURN_IF_ERROR(arena_.finish(p_.update));
  trainSeconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  samplesSinceLog_ += p_.globalBatch;

  if (logged) {
    StepRecord r;
    r.step = s;
    r.loss = sums[0];
    r.metrics.assign(sums.begin() + 1, sums.end());
    if (p_.lr)
      r.lr = arena_.readScalar(*p_.lr);
    if (p_.gradNorm)
      r.gradNorm = arena_.readScalar(*p_.gradNorm);
    int64_t tokens = p_.data->tokensPerSample();
    double units = double(samplesSinceLog_) * double(tokens ? tokens : 1);
    r.throughput = trainSeconds_ > 0 ? units / trainSeconds_ : 0;
    log_.step(r);
    trainSeconds_ = 0;
    samplesSinceLog_ = 0;
  }
  int64_t evalEvery = p_.settings.evalEvery;
  if (p_.evaluator && ((evalEvery > 0 && s % evalEvery == 0) ||
                       (evalEvery == 0 && cursor_.batchInEpoch == 0)))
    MODELC_RETURN_IF_ERROR(evaluate(s));
  if (p_.checkpoint.every > 0 && s % p_.checkpoint.every == 0)
    MODELC_RETURN_IF_ERROR(
        checkpoint(s, counter_, cursor_.epoch, cursor_.batchInEpoch));
  return Status();
}

Status TrainLoop::run() {
  SignalGuard signals;
  for (int64_t s = step_ + 1; s <= p_.totalSteps; ++s) {
    MODELC_RETURN_IF_ERROR(runStep(s));
    step_ = s;
    if (int sig = SignalGuard::pending()) {
      log_.finish();
      std::string what = sig == SIGINT ? "SIGINT" : "SIGTERM";
      if (p_.checkpoint.dir.empty())
        return Status::error(fmt::format("stopped by {} after step {}; no "
                                         "checkpoint directory, nothing saved",
                                         what, s),
                             128 + sig);
      if (lastCheckpoint_ != s)
        MODELC_RETURN_IF_ERROR(
            checkpoint(s, counter_, cursor_.epoch, cursor_.batchInEpoch));
      return Status::error(fmt::format("stopped by {} after step {}; "
                                       "checkpoint {} (continue with --resume)",
                                       what, s, lastCheckpointDir_),
                           128 + sig);
    }
  }
  if (p_.evaluator && lastEval_ != p_.totalSteps)
    MODELC_RETURN_IF_ERROR(evaluate(p_.totalSteps));
  log_.finish();
  if (!p_.checkpoint.dir.empty() && lastCheckpoint_ != p_.totalSteps)
    MODELC_RETURN_IF_ERROR(checkpoint(p_.totalSteps, counter_, cursor_.epoch,
                                      cursor_.batchInEpoch));
  return Status();
}

} // namespace

Status runTraining(const Manifest &m, const CommandLine &cl, ProgramIO &io) {
  Result<DeviceChoice> device = chooseDevice(cl, m);
  if (!device)
    return device.status();
  Result<TrainPlan> plan = planTraining(m, cl);
  if (!plan)
    return plan.status();
  Result<Arena> arena = Arena::allocate(m.arenaBytes);
  if (!arena)
    return arena.status();
  MODELC_RETURN_IF_ERROR(initializeParameters(m, plan->settings.seed, *arena));
  if (!cl.init.empty())
    MODELC_RETURN_IF_ERROR(
        loadTensors(cl.init, plan->tensors.params, *arena, "parameters"));
  bool resuming = !plan->checkpoint.resumeFrom.empty();
  Result<RunLog> log =
      RunLog::open(io, cl.log, resuming, plan->totalSteps, plan->entry->outputs,
                   plan->data->tokensPerSample() > 0);
  if (!log)
    return log.status();
  TrainLoop loop(*plan, m.sourceHash, *arena, *log);
  if (resuming)
    MODELC_RETURN_IF_ERROR(loop.resume());
  MODELC_RETURN_IF_ERROR(useDevice(*device, m, *arena, io));
  printBanner(m, *plan, cl, *arena, io);
  MODELC_RETURN_IF_ERROR(loop.run());
  if (!cl.save.empty()) {
    MODELC_RETURN_IF_ERROR(arena->pullPersistent());
    MODELC_RETURN_IF_ERROR(saveTensors(cl.save, plan->tensors.params, *arena));
    io.err << "saved the parameters to " << cl.save << "\n";
  }
  return Status();
}

} // namespace modelc::rt
