// Resolving a training run: which entry, which settings, which data, how
// many steps, where checkpoints go; every usage error is found here, before
// the arena exists.
#include "runtime/driver/TrainPlan.h"

#include "runtime/data/BatchOrder.h"
#include "runtime/driver/Zero.h"
#include "schema/Schedules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace modelc::rt {

namespace {

Status internal(const std::string &what) {
  return Status::error("internal error: " + what, kExitInternal);
}

Result<int64_t> runLength(const TrainInfo &e, const CommandLine &cl,
                          int64_t stepsPerEpoch) {
  int64_t epochs = cl.epochs ? *cl.epochs : e.epochs;
  if (cl.steps)
    return *cl.steps;
  if (!cl.epochs && e.steps > 0)
    return e.steps;
  if (epochs <= 0)
    return internal("train entry '" + e.name +
                    "' has neither steps nor "
                    "epochs");
  if (epochs > std::numeric_limits<int64_t>::max() / stepsPerEpoch)
    return Status::error(fmt::format("--epochs {}: too many steps", epochs));
  return epochs * stepsPerEpoch;
}

Status resolveCheckpoints(const TrainInfo &e, const CommandLine &cl,
                          const RunSettings &settings, CheckpointConfig &ck) {
  ck.dir = cl.checkpointDir.empty() ? e.checkpointDir : cl.checkpointDir;
  ck.every = cl.checkpointEvery.value_or(settings.checkpointEvery);
  ck.keep = e.checkpointKeep;
  // Periodic checkpoints and a time limit need somewhere to go.
  if (ck.dir.empty() && (ck.every > 0 || cl.timeLimitSeconds))
    ck.dir = "checkpoints";
  if (!cl.resume)
    return Status();
  if (!cl.init.empty())
    return Status::error("--init and --resume: give one of them (a resumed "
                         "run takes its parameters from the checkpoint)");
  std::string from = cl.resumeDir.empty() ? ck.dir : cl.resumeDir;
  if (from.empty())
    return Status::error("--resume: no checkpoint directory; give --resume D "
                         "or --checkpoint-dir D");
  // A resumed run goes on writing where it resumed from, unless told.
  if (cl.checkpointDir.empty())
    ck.dir = from;
  ck.resumeDir = from;
  Result<std::optional<std::string>> newest = newestCheckpoint(from);
  if (!newest)
    return newest.status();
  if (*newest)
    ck.resumeFrom = **newest;
  else
    ck.notice = "no checkpoint in " + from +
                " yet: starting from the beginning";
  return Status();
}

/// The micro-batches per rank and step: the entry's; resuming a checkpoint
/// of another rank count, the count that keeps its global batch (ranks x
/// accumulate micro-batches of `batch`), which must split evenly over the
/// ranks now asked for (8 x 1 -> 4 x 2 -> 1 x 8, as torchrun users expect
/// of a fixed global batch). With --allow-batch-change a count that cannot
/// takes the accumulation nearest to it instead (p.batchChange).
Status resolveAccumulation(const TrainInfo &e, const CommandLine &cl,
                           TrainPlan &p) {
  p.accumulate = e.accumulate;
  if (p.checkpoint.resumeFrom.empty())
    return Status();
  Result<CheckpointState> state = readCheckpointState(p.checkpoint.resumeFrom);
  if (!state)
    return state.status();
  int64_t accumulate = state->accumulate > 0 ? state->accumulate : e.accumulate;
  p.cursorShift = state->cursorShift;
  if (state->ranks == p.ranks) {
    p.accumulate = accumulate;
    return Status();
  }
  auto ranks = [](int64_t n) {
    return fmt::format("{} rank{}", n, n == 1 ? "" : "s");
  };
  int64_t microBatches = state->ranks * accumulate;
  if (microBatches % p.ranks == 0) {
    p.accumulate = microBatches / p.ranks;
    p.rescaled = fmt::format(
        "the checkpoint's run took {} x accumulate {}; {} x accumulate {} "
        "keep its global batch of {}",
        ranks(state->ranks), accumulate, ranks(p.ranks), p.accumulate,
        e.batch * microBatches);
    return Status();
  }
  // The nearest accumulation, at least 1 (halves round up).
  int64_t nearest = std::max<int64_t>(1, (2 * microBatches + p.ranks) /
                                             (2 * p.ranks));
  if (!cl.allowBatchChange)
    return Status::error(fmt::format(
        "--resume {}: that run took {} ranks x accumulate {} micro-batches of "
        "{} per step; {} ranks cannot split its {} evenly, so the global "
        "batch would change; resume on a rank count that divides {}, or pass "
        "--allow-batch-change to go on with accumulate {} (a global batch of "
        "{})",
        p.checkpoint.resumeFrom, state->ranks, accumulate, e.batch, p.ranks,
        microBatches, microBatches, nearest, e.batch * nearest * p.ranks));
  p.accumulate = nearest;
  p.batchChange = TrainPlan::BatchChange{e.batch * microBatches, state->step,
                                         state->epoch, state->batchInEpoch};
  p.rescaled = fmt::format(
      "the checkpoint's run took {} x accumulate {} (a global batch of {}); "
      "{} x accumulate {} make a global batch of {} (--allow-batch-change)",
      ranks(state->ranks), accumulate, e.batch * microBatches, ranks(p.ranks),
      p.accumulate, e.batch * p.accumulate * p.ranks);
  return Status();
}

/// --allow-batch-change: where the checkpoint's data cursor lands in
/// batches of the new global batch, and so the new cursor shift.
void rebaseCursor(TrainPlan &p) {
  TrainPlan::BatchChange &c = *p.batchChange;
  int64_t samples = c.batchInEpoch * c.fromGlobalBatch;
  c.batchInEpoch = samples / p.globalBatch;
  if (c.batchInEpoch >= p.stepsPerEpoch) {
    ++c.epoch;
    c.batchInEpoch = 0;
  }
  p.rescaled += fmt::format(
      "; the data go on from batch {} of epoch {} ({} of the epoch's samples "
      "done, {} of them again)",
      c.batchInEpoch, c.epoch, samples, samples - c.batchInEpoch * p.globalBatch);
  p.cursorShift = c.epoch * p.stepsPerEpoch + c.batchInEpoch - c.step;
}

Status bindFunctionsAndOutputs(const Manifest &m, TrainPlan &p) {
  const std::string &name = p.entry->name;
  p.fwdBwd = m.function(FunctionKind::FwdBwd, name);
  p.update = m.function(FunctionKind::Update, name);
  if (!p.fwdBwd || !p.update)
    return internal("train entry '" + name +
                    "' lacks its fwd_bwd or update function");
  if (p.entry->outputs.empty() || p.entry->outputs.front() != "loss")
    return internal("train entry '" + name + "' does not output 'loss' first");
  Result<std::vector<const BufferInfo *>> outputs =
      scalarOutputs(m, Phase::Train, name, p.entry->outputs);
  if (!outputs)
    return outputs.status();
  p.outputs = outputs.take();
  for (const char *key : {"lr", "grad_norm"}) {
    if (!m.buffer(Role::Output, Phase::Train, name, key))
      continue;
    Result<std::vector<const BufferInfo *>> b =
        scalarOutputs(m, Phase::Train, name, {key});
    if (!b)
      return b.status();
    (std::string(key) == "lr" ? p.lr : p.gradNorm) = b->front();
  }
  if (p.entry->gradScaler) {
    Result<std::vector<const BufferInfo *>> found =
        scalarOutputs(m, Phase::Train, name, {"found_inf"});
    if (!found)
      return found.status();
    p.foundInf = found->front();
  }
  Result<Hypers> hypers = Hypers::bind(m, name, p.settings);
  if (!hypers)
    return hypers.status();
  p.hypers.emplace(hypers.take());
  return Status();
}

} // namespace

Result<TrainPlan> planTraining(const Manifest &m, const CommandLine &cl,
                               int localRanks) {
  TrainPlan p;
  Result<dist::LaunchPlan> launch =
      dist::resolveLaunch(cl.launch, localRanks,
                          [](const char *name) { return std::getenv(name); });
  if (!launch)
    return launch.status();
  p.launch = *launch;
  p.ranks = p.launch.worldSize();
  Result<const TrainInfo *> entry = m.trainEntry(cl.entry);
  if (!entry)
    return entry.status();
  p.entry = *entry;
  const TrainInfo &e = *p.entry;
  Result<RunSettings> settings = resolveSettings(e, cl.sets, cl.seed);
  if (!settings)
    return settings.status();
  p.settings = *settings;
  MODELC_RETURN_IF_ERROR(bindFunctionsAndOutputs(m, p));

  Result<BoundData> data = BoundData::open(m, e.data, cl.data, "--data",
                                           Phase::Train, e.name, e.batch);
  if (!data)
    return data.status();
  p.data.emplace(data.take());

  MODELC_RETURN_IF_ERROR(resolveCheckpoints(e, cl, p.settings, p.checkpoint));
  MODELC_RETURN_IF_ERROR(resolveAccumulation(e, cl, p));
  p.globalBatch = e.batch * p.accumulate * p.ranks;
  p.stepsPerEpoch = BatchOrder(p.data->numSamples(), p.globalBatch,
                               p.settings.shuffle, p.settings.seed)
                        .batchesPerEpoch();
  if (p.stepsPerEpoch == 0)
    return Status::error(fmt::format(
        "data set '{}' has {} samples, fewer than one step's batch {} x "
        "accumulate {} x ranks {} = {}",
        p.data->name(), p.data->numSamples(), e.batch, p.accumulate, p.ranks,
        p.globalBatch));
  Result<int64_t> total = runLength(e, cl, p.stepsPerEpoch);
  if (!total)
    return total.status();
  p.totalSteps = *total;
  // A run of epochs ends with its last epoch: after a batch change its
  // steps before the change counted other batches (a run of `steps` keeps
  // its count).
  if (p.batchChange)
    rebaseCursor(p);
  bool byEpochs = !cl.steps && (cl.epochs || e.steps <= 0);
  if (byEpochs && p.cursorShift != 0)
    p.totalSteps = std::max<int64_t>(p.totalSteps - p.cursorShift, 1);
  const std::string &schedule = e.schedule.kind;
  if (schedules::hasWarmup(schedule) && p.settings.warmup >= p.totalSteps)
    return Status::error(fmt::format(
        "the {} schedule's warmup ({} steps) must be shorter than the run "
        "({} steps)",
        schedule, p.settings.warmup, p.totalSteps));

  if (!e.evalData.empty()) {
    Result<Evaluator> evaluator =
        Evaluator::open(m, e, cl.evalData, cl.data, false);
    if (!evaluator)
      return evaluator.status();
    p.evaluator.emplace(evaluator.take());
  } else if (!cl.evalData.empty()) {
    return Status::error("--eval-data: train entry '" + e.name +
                         "' has no eval");
  }
  p.tensors = {parameterBuffers(m), stateBuffers(m, e.name)};
  if (e.zero) {
    Result<ZeroShards> zero = ZeroShards::plan(m, e, 1);
    if (!zero)
      return zero.status();
    p.shardedStateBytes = zero->totalBytes();
  }
  return p;
}

} // namespace modelc::rt
