// The evaluation loop shared by training (`eval { ... }`) and the eval
// command.
#include "runtime/driver/Evaluate.h"

#include "runtime/driver/Devices.h"

#include "runtime/driver/Weights.h"

#include <fmt/format.h>

#include <numeric>

namespace modelc::rt {

Result<Evaluator> Evaluator::open(const Manifest &manifest,
                                  const TrainInfo &entry,
                                  const std::vector<FieldPath> &evalOverrides,
                                  const std::vector<FieldPath> &dataOverrides,
                                  bool allowFallback) {
  modelc_fn fn = manifest.function(FunctionKind::Eval, entry.name);
  bool fallback = !fn;
  if (fallback) {
    if (!allowFallback || !entry.evalData.empty())
      return Status::error("internal error: train entry '" + entry.name +
                               "' has no eval function",
                           kExitInternal);
    fn = manifest.function(FunctionKind::FwdBwd, entry.name);
    if (!fn)
      return Status::error("internal error: train entry '" + entry.name +
                               "' has no fwd_bwd function",
                           kExitInternal);
  }
  bool evalData = !entry.evalData.empty();
  if (!evalData && !evalOverrides.empty())
    return Status::error("--eval-data: train entry '" + entry.name +
                         "' declares no eval data; use --data");
  Phase phase = fallback ? Phase::Train : Phase::Eval;
  Result<BoundData> data = BoundData::open(
      manifest, evalData ? entry.evalData : entry.data,
      evalData ? evalOverrides : dataOverrides,
      evalData ? "--eval-data" : "--data", phase, entry.name, entry.batch);
  if (!data)
    return data.status();
  if (data->numSamples() < entry.batch)
    return Status::error(
        fmt::format("data set '{}' has {} samples, fewer than one batch of {}",
                    data->name(), data->numSamples(), entry.batch));
  Result<std::vector<const BufferInfo *>> outputs =
      scalarOutputs(manifest, phase, entry.name, entry.outputs);
  if (!outputs)
    return outputs.status();
  Evaluator e(data.take());
  e.batch_ = entry.batch;
  e.fn_ = fn;
  e.outputs_ = outputs.take();
  return e;
}

int64_t Evaluator::batches(int64_t steps) const {
  int64_t full = data_.numSamples() / batch_;
  return steps > 0 ? std::min(steps, full) : full;
}

Result<std::vector<double>> Evaluator::run(Arena &arena, int64_t steps,
                                           int rank,
                                           dist::Communicator *comm) const {
  std::vector<double> sums(outputs_.size(), 0.0);
  std::vector<int64_t> indices(static_cast<size_t>(batch_));
  int64_t n = batches(steps);
  int64_t ranks = comm ? comm->size() : 1;
  for (int64_t b = rank; b < n; b += ranks) {
    std::iota(indices.begin(), indices.end(), b * batch_);
    data_.load(indices.data(), arena);
    MODELC_RETURN_IF_ERROR(arena.call(fn_));
    for (size_t i = 0; i < outputs_.size(); ++i)
      sums[i] += arena.readScalar(*outputs_[i]);
  }
  if (ranks > 1)
    MODELC_RETURN_IF_ERROR(comm->allReduceSum(sums.data(), sums.size()));
  for (double &s : sums)
    s /= double(n);
  return sums;
}

Status runEvaluation(const Manifest &m, const CommandLine &cl, ProgramIO &io) {
  Result<const TrainInfo *> entry = m.trainEntry(cl.entry);
  if (!entry)
    return entry.status();
  const TrainInfo &e = **entry;
  Result<RunSettings> settings = resolveSettings(e, cl.sets, cl.seed);
  if (!settings)
    return settings.status();
  Result<DeviceChoice> device = chooseDevice(cl, m);
  if (!device)
    return device.status();
  Result<Evaluator> evaluator =
      Evaluator::open(m, e, cl.evalData, cl.data, true);
  if (!evaluator)
    return evaluator.status();
  Result<Hypers> hypers = Hypers::bind(m, e.name, *settings);
  if (!hypers)
    return hypers.status();
  Result<RunLog> log = RunLog::open(io, cl.log, false, 0, e.outputs, false);
  if (!log)
    return log.status();
  Result<Arena> arena = Arena::allocate(m.arenaBytes);
  if (!arena)
    return arena.status();
  MODELC_RETURN_IF_ERROR(loadWeights(cl.weights, m, *arena));
  hypers->write(StepCounters(), *arena);
  MODELC_RETURN_IF_ERROR(useDevice(*device, m, *arena, io));
  io.err << fmt::format("eval {}: {}, data set '{}', {} batches of {}\n",
                        e.name, deviceText(*arena), evaluator->dataName(),
                        evaluator->batches(settings->evalSteps), e.batch);
  Result<std::vector<double>> averages =
      evaluator->run(*arena, settings->evalSteps);
  if (!averages)
    return averages.status();
  log->eval(std::nullopt, *averages);
  return log->close();
}

} // namespace modelc::rt
