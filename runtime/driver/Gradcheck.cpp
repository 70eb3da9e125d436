// `OUT gradcheck`: fwd_bwd's gradients on the first batch, against
// (L(p + h) - L(p - h)) / 2h per checked element, with every hyper fixed so
// that dropout masks are the same in every evaluation.
#include "runtime/driver/Gradcheck.h"

#include "runtime/driver/Bindings.h"
#include "runtime/driver/Initializers.h"
#include "runtime/driver/Weights.h"
#include "runtime/io/Shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace modelc::rt {

namespace {

Status internal(const std::string &what) {
  return Status::error("internal error: " + what, kExitInternal);
}

// Calls fwd_bwd on the loaded batch with the hypers already written, and
// reads and perturbs the parameters.
class GradientProbe {
public:
  GradientProbe(const Manifest &m, Arena &arena, modelc_fn fwdBwd,
                const BufferInfo &loss, int64_t accumulate)
      : m_(m), arena_(arena), fwdBwd_(fwdBwd), loss_(loss),
        accumulate_(accumulate),
        grads_(m.buffersOf(Role::Grad, Phase::Shared, "")) {}

  // Gradient checks run on the CPU, whose calls cannot fail.
  double loss() {
    (void)arena_.call(fwdBwd_);
    return arena_.readScalar(loss_);
  }

  // fwd_bwd accumulates into the gradients: they start from zero.
  void zeroGradients() {
    for (const BufferInfo *g : grads_)
      std::memset(arena_.at(*g), 0, size_t(g->bytes));
  }

  // The compiled gradient at `at` after one fwd_bwd call, times accumulate
  // (fwd_bwd scales it by 1/accumulate); zero without a gradient buffer.
  std::vector<double> analytic(const ParamInfo &p,
                               const std::vector<uint64_t> &at) const {
    std::vector<double> g(at.size(), 0.0);
    if (const BufferInfo *b = m_.gradBuffer(p))
      for (size_t k = 0; k < at.size(); ++k)
        g[k] = double(accumulate_) * arena_.readElement(*b, at[k]);
    return g;
  }

  // Central differences at `at`. The step is the difference of the two
  // values actually stored, which for f32 parameters is not exactly 2h.
  Result<std::vector<double>> numeric(const ParamInfo &p,
                                      const std::vector<uint64_t> &at,
                                      double stepSize) {
    const BufferInfo &b = m_.paramBuffer(p);
    std::vector<double> g;
    for (uint64_t i : at) {
      double value = arena_.readElement(b, i);
      double h = stepSize * std::max(1.0, std::fabs(value));
      arena_.writeElement(b, i, value + h);
      double up = arena_.readElement(b, i);
      double lossUp = loss();
      arena_.writeElement(b, i, value - h);
      double down = arena_.readElement(b, i);
      double lossDown = loss();
      arena_.writeElement(b, i, value);
      if (!(up > down))
        return Status::error(fmt::format(
            "--step-size {}: too small to change {} (element {}, {} value {})",
            stepSize, p.name, i, dtypeName(p.dtype), value));
      g.push_back((lossUp - lossDown) / (up - down));
    }
    zeroGradients();
    return g;
  }

private:
  const Manifest &m_;
  Arena &arena_;
  modelc_fn fwdBwd_;
  const BufferInfo &loss_;
  int64_t accumulate_;
  std::vector<const BufferInfo *> grads_;
};

double norm(const std::vector<double> &v) {
  double sum = 0;
  for (double x : v)
    sum += x * x;
  return std::sqrt(sum);
}

// Parameters are f32 or f64; f32 ones cannot reach the default tolerance.
Status checkParameterTypes(const Manifest &m, ProgramIO &io) {
  std::vector<std::string> narrow;
  for (const ParamInfo &p : m.params) {
    if (!p.trainable)
      continue;
    if (p.dtype == DType::F32)
      narrow.push_back(p.name);
    else if (p.dtype != DType::F64)
      return internal(fmt::format("parameter {} is {}, not f32 or f64", p.name,
                                  dtypeName(p.dtype)));
  }
  if (!narrow.empty())
    io.err << fmt::format(
        "warning: {} of {} parameters are f32 (the first: {}); finite "
        "differences in f32 cannot reach a relative error of 1e-6; rebuild "
        "the program with modelc --widen-f64\n",
        narrow.size(), m.params.size(), narrow.front());
  return Status();
}

// Prints one line per parameter; returns how many failed. The probe's
// gradients are those of one fwd_bwd call from zero.
Result<size_t> compareGradients(const Manifest &m, const CommandLine &cl,
                                GradientProbe &probe, ProgramIO &io) {
  // Module buffers (running statistics) have no gradient.
  std::vector<const ParamInfo *> trainable;
  for (const ParamInfo &p : m.params)
    if (p.trainable)
      trainable.push_back(&p);
  std::vector<std::vector<uint64_t>> at;
  std::vector<std::vector<double>> analytic;
  for (const ParamInfo *p : trainable) {
    at.push_back(checkedElements(checkedElementCount(p->shape).value_or(0),
                                 cl.maxElements));
    analytic.push_back(probe.analytic(*p, at.back()));
  }
  probe.zeroGradients();

  size_t failed = 0;
  for (size_t i = 0; i < trainable.size(); ++i) {
    const ParamInfo &p = *trainable[i];
    Result<std::vector<double>> numeric = probe.numeric(p, at[i], cl.stepSize);
    if (!numeric)
      return numeric.status();
    double maxAbsGrad = 0; // NaN stays NaN
    for (double g : analytic[i])
      if (!(std::fabs(g) <= maxAbsGrad))
        maxAbsGrad = std::fabs(g);
    double relError = relativeGradientError(analytic[i], *numeric);
    bool ok = relError <= cl.tolerance;
    failed += ok ? 0 : 1;
    io.out << fmt::format("gradcheck {} elements={} max_abs_grad={:.3e} "
                          "rel_error={:.3e} {}\n",
                          p.name, at[i].size(), maxAbsGrad, relError,
                          ok ? "ok" : "FAILED");
  }
  return failed;
}

} // namespace

std::vector<uint64_t> checkedElements(uint64_t count, int64_t limit) {
  uint64_t n = std::min(count, uint64_t(std::max<int64_t>(limit, 0)));
  std::vector<uint64_t> at(n);
  for (uint64_t k = 0; k < n; ++k)
    at[k] = uint64_t(static_cast<unsigned __int128>(k) * count / n);
  return at;
}

double relativeGradientError(const std::vector<double> &analytic,
                             const std::vector<double> &numeric) {
  std::vector<double> diff(analytic.size());
  for (size_t k = 0; k < diff.size(); ++k)
    diff[k] = analytic[k] - numeric[k];
  return norm(diff) / std::max({norm(analytic), norm(numeric), double(1e-12)});
}

Status runGradcheck(const Manifest &m, const CommandLine &cl, ProgramIO &io) {
  Result<const TrainInfo *> entry = m.trainEntry(cl.entry);
  if (!entry)
    return entry.status();
  const TrainInfo &e = **entry;
  Result<RunSettings> settings = resolveSettings(e, {}, cl.seed);
  if (!settings)
    return settings.status();
  modelc_fn fwdBwd = m.function(FunctionKind::FwdBwd, e.name);
  if (!fwdBwd)
    return internal("train entry '" + e.name + "' has no fwd_bwd function");
  Result<std::vector<const BufferInfo *>> loss =
      scalarOutputs(m, Phase::Train, e.name, {"loss"});
  if (!loss)
    return loss.status();
  Result<Hypers> hypers = Hypers::bind(m, e.name, *settings);
  if (!hypers)
    return hypers.status();
  Result<BoundData> data = BoundData::open(m, e.data, cl.data, "--data",
                                           Phase::Train, e.name, e.batch);
  if (!data)
    return data.status();
  if (data->numSamples() < e.batch)
    return Status::error(
        fmt::format("data set '{}' has {} samples, fewer than one batch of {}",
                    data->name(), data->numSamples(), e.batch));
  MODELC_RETURN_IF_ERROR(checkParameterTypes(m, io));

  Result<Arena> arena = Arena::allocate(m.arenaBytes);
  if (!arena)
    return arena.status();
  MODELC_RETURN_IF_ERROR(initializeParameters(m, settings->seed, *arena));
  if (!cl.init.empty())
    MODELC_RETURN_IF_ERROR(
        loadTensors(cl.init, parameterBuffers(m), *arena, "parameters"));
  std::vector<int64_t> firstBatch(size_t(e.batch));
  std::iota(firstBatch.begin(), firstBatch.end(), 0);
  data->load(firstBatch.data(), *arena);
  hypers->write({1, 1, 1, 1}, *arena); // step 1 of 1, rng_counter 1

  io.err << fmt::format(
      "gradcheck {}: the first batch of {} samples of data set '{}', seed {}, "
      "step size {}, tolerance {}, at most {} elements per parameter\n",
      e.name, e.batch, data->name(), settings->seed, cl.stepSize, cl.tolerance,
      cl.maxElements);
  if (e.accumulate > 1)
    io.err << fmt::format("accumulate {}: only the first micro-batch is used; "
                          "its gradients are multiplied by {}\n",
                          e.accumulate, e.accumulate);

  GradientProbe probe(m, *arena, fwdBwd, *loss->front(), e.accumulate);
  probe.zeroGradients();
  double baseLoss = probe.loss();
  if (!std::isfinite(baseLoss))
    return Status::error(fmt::format("gradcheck: the loss of the first batch "
                                     "is {} at these parameters",
                                     baseLoss),
                         kExitDiverged);
  Result<size_t> failed = compareGradients(m, cl, probe, io);
  if (!failed)
    return failed.status();
  if (*failed == 0) {
    io.out << "gradcheck passed\n";
    return Status();
  }
  io.out << fmt::format("gradcheck failed ({} parameters)\n", *failed);
  return Status::error(
      fmt::format("gradcheck: the compiled gradients of {} of {} parameters "
                  "disagree with finite differences",
                  *failed,
                  std::count_if(m.params.begin(), m.params.end(),
                                [](const ParamInfo &p) { return p.trainable; })),
      kExitInternal);
}

} // namespace modelc::rt
