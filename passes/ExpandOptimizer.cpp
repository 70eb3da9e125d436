// --mdl-expand-optimizer: builds each train entry's `update` function: the
// scheduled learning rate, f16's unscaling and inf/NaN check
// (torch.amp.GradScaler), the global gradient norm and clipping, and the
// sgd/adam/adamw step of every parameter, exactly as torch.optim computes
// them, on run-time hyperparameters. docs/passes/expand-optimizer.md.
#include "passes/EntryUtils.h"
#include "passes/OptimizerUtils.h"
#include "passes/Passes.h"
#include "schema/Schedules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace modelc {
#define GEN_PASS_DEF_MDLEXPANDOPTIMIZER
#include "passes/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;

namespace {

/// What is fixed at compile time; every number is a run-time hyper.
struct OptimizerConfig {
  StringRef kind;     // sgd, adam, adamw
  StringRef schedule; // constant, warmup_cosine, linear, step_lr
  bool nesterov = false;
  /// SGD and RMSprop keep momentum buffers when the settings ask for
  /// momentum; a run-time `momentum` cannot add them later.
  bool momentumBuffers = false;
  /// RMSprop's `centered`: a running mean of the gradient too.
  bool centered = false;
  /// f16: the gradients arrive multiplied by the `loss_scale` hyper.
  bool lossScaling = false;
};

/// What one optimizer step reads and writes: a parameter (or ZeRO-1's
/// window, a chunk of any parameter), its type, the symbol of its state
/// buffer of each kind (`m`, `v`, `momentum`), and its gradient.
struct StepTarget {
  std::string param;
  RankedTensorType type;
  std::function<std::string(StringRef kind)> state;
  Value grad;
  /// A parameter group's settings (hyper name -> value), which replace
  /// those hypers for this target; null for none.
  const llvm::StringMap<double> *overrides = nullptr;
};

/// What a parameter group sets for its parameters: each of the
/// optimizer's hypers it gives (`weight_decay`, `momentum`, `beta1`, ...)
/// replaces the hyper for them, as a constant. `lr` is the group's base
/// learning rate: the schedule runs from it (as torch's schedulers scale
/// each group's own lr).
struct GroupSettings {
  llvm::StringMap<double> hypers;
  /// The group's index in the setting, for caches, and its name.
  unsigned index = 0;
  std::string name;
};

/// A parameter group of the `param_groups` setting: the parameters whose
/// full name matches one of `match` (shell patterns: `*` any run of
/// characters, `?` one) when given, and whose rank is at most `maxRank`,
/// take `settings` instead of the optimizer's.
struct ParamGroup {
  std::string name;
  SmallVector<std::string> match;
  int64_t maxRank;
  GroupSettings settings;

  bool selects(mdl::ParamOp param) const {
    if (param.getType().getRank() > maxRank)
      return false;
    return match.empty() || llvm::any_of(match, [&](const std::string &p) {
             return globMatches(p, param.getSymName());
           });
  }

  /// `pattern` (`*` any run, `?` any one character) matches all of
  /// `text`. Greedy with backtracking to the last `*` only, which is
  /// enough for these two wildcards: O(|pattern| |text|) at worst, where
  /// plain recursion is exponential in the number of `*`s.
  static bool globMatches(StringRef pattern, StringRef text) {
    size_t p = 0, t = 0;
    size_t star = StringRef::npos, resume = 0;
    while (t < text.size()) {
      if (p < pattern.size() && pattern[p] == '*') {
        star = p++;
        resume = t;
      } else if (p < pattern.size() &&
                 (pattern[p] == '?' || pattern[p] == text[t])) {
        ++p;
        ++t;
      } else if (star != StringRef::npos) {
        // The last `*` takes one more character; retry after it.
        p = star + 1;
        t = ++resume;
      } else {
        return false;
      }
    }
    while (p < pattern.size() && pattern[p] == '*')
      ++p;
    return p == pattern.size();
  }
};

/// What one elementwise step of the optimizer covers: the parameters of
/// one element type and parameter group as one flat view of each of
/// parameters, gradients and state kinds (the multi-tensor update), or a
/// single parameter with its own buffers.
struct Segment {
  SmallVector<mdl::ParamOp> params;
  /// The view's type (1-d), or the parameter's.
  RankedTensorType type;
  /// The symbols the step loads and stores: views or the parameter's own.
  std::string param, grad;
  llvm::StringMap<std::string> state;
  /// The group's settings; null for none.
  const GroupSettings *settings = nullptr;
  /// Whether the symbols are flat views (to declare) of the parameters'.
  bool view = false;
  /// The gradient as loaded, unscaled and clipped.
  Value gradValue;
};

/// Reads the `param_groups` setting of `train` (checked by the frontend).
SmallVector<ParamGroup> readParamGroups(mdl::TrainOp train) {
  SmallVector<ParamGroup> groups;
  auto dict = train.getSettings().getAs<DictionaryAttr>("param_groups");
  if (!dict)
    return groups;
  for (NamedAttribute entry : dict) {
    auto group = dyn_cast<DictionaryAttr>(entry.getValue());
    if (!group)
      continue;
    ParamGroup g;
    g.name = entry.getName().str();
    if (auto match = group.getAs<ArrayAttr>("match"))
      for (Attribute pattern : match)
        if (auto text = dyn_cast<StringAttr>(pattern))
          g.match.push_back(text.str());
    auto maxRank = group.getAs<IntegerAttr>("max_rank");
    g.maxRank = maxRank ? maxRank.getInt() : INT64_MAX;
    for (NamedAttribute setting : group)
      if (auto number = dyn_cast<FloatAttr>(setting.getValue()))
        g.settings.hypers[setting.getName()] = number.getValueAsDouble();
    g.settings.index = groups.size();
    g.settings.name = g.name;
    groups.push_back(std::move(g));
  }
  return groups;
}

/// ZeRO-1's window of one element type: buffers of `type` (a chunk) for
/// a parameter (`param`), its gradient (`grad`) and each state kind, by
/// key and symbol, and the function that steps them.
struct ZeroWindow {
  RankedTensorType type;
  SmallVector<std::pair<std::string, std::string>> buffers;
  std::string function;
};

/// Reads and checks the `optimizer` and `schedule` settings of `train`.
FailureOr<OptimizerConfig> readConfig(mdl::TrainOp train) {
  DictionaryAttr settings = train.getSettings();
  auto optimizer = settings.getAs<DictionaryAttr>("optimizer");
  auto kind = optimizer ? optimizer.getAs<StringAttr>("kind") : StringAttr();
  if (!kind)
    return train.emitError("settings have no 'optimizer' with a 'kind'");
  OptimizerConfig config;
  config.kind = kind.getValue();
  config.lossScaling = usesLossScaling(train);
  if (!optimizers::findKind(config.kind))
    return train.emitError("unknown optimizer '") << config.kind << "'";
  auto centered = optimizer.getAs<BoolAttr>("centered");
  config.centered =
      config.kind == "rmsprop" && centered && centered.getValue();
  auto nesterov = optimizer.getAs<BoolAttr>("nesterov");
  config.nesterov = nesterov && nesterov.getValue();
  auto momentum = optimizer.getAs<FloatAttr>("momentum");
  bool momentumSet = momentum && momentum.getValueAsDouble() != 0.0;
  config.momentumBuffers = (config.kind == "sgd" &&
                            (config.nesterov || momentumSet)) ||
                           (config.kind == "rmsprop" && momentumSet);
  auto schedule = settings.getAs<DictionaryAttr>("schedule");
  auto scheduleKind =
      schedule ? schedule.getAs<StringAttr>("kind") : StringAttr();
  config.schedule = scheduleKind ? scheduleKind.getValue() : "constant";
  if (!schedules::find(config.schedule))
    return train.emitError("unknown schedule '") << config.schedule << "'";
  return config;
}

/// The state each parameter keeps: `m.P`, `v.P` or `momentum.P`.
SmallVector<StringRef, 3> getStateKinds(const OptimizerConfig &config) {
  if (config.kind == "adam" || config.kind == "adamw")
    return {"m", "v"};
  if (config.kind == "rmsprop") {
    // torch.optim.RMSprop's square_avg, momentum_buffer, grad_avg.
    SmallVector<StringRef, 3> kinds = {"square_avg"};
    if (config.momentumBuffers)
      kinds.push_back("momentum");
    if (config.centered)
      kinds.push_back("grad_avg");
    return kinds;
  }
  if (config.kind == "adagrad")
    return {"sum"};
  if (config.kind == "adadelta")
    return {"square_avg", "acc_delta"};
  if (config.momentumBuffers)
    return {"momentum"};
  return {};
}

/// Builds the body of one `update` function.
class UpdateBuilder {
public:
  UpdateBuilder(func::FuncOp update, StringRef entry)
      : builder(OpBuilder::atBlockBegin(&update.front())), loc(update.getLoc()),
        math(builder, loc), entry(entry) {}

  /// The hyper `key`, loaded on first use (nothing here stores hypers).
  Value hyper(StringRef key) {
    Value &value = hypers[key];
    if (!value)
      value = load(getBufferSymbol(entry, "hyper", key),
                   RankedTensorType::get({}, builder.getF64Type()));
    return value;
  }

  Value load(StringRef symbol, Type type) {
    return builder.create<mdl::LoadOp>(loc, type, symbol);
  }

  void store(Value value, StringRef symbol) {
    builder.create<mdl::StoreOp>(loc, value, symbol);
  }

  /// Loads every segment's gradient (with loss scaling: unscales them and
  /// stores whether any value was inf or NaN), stores their global norm,
  /// and scales them as `torch.nn.utils.clip_grad_norm_` does when the
  /// hyper grad_clip > 0.
  void loadClippedGrads(const OptimizerConfig &config,
                        MutableArrayRef<Segment> segments);
  /// The new value of the parameter, and stores of its optimizer state.
  Value step(const OptimizerConfig &config, const StepTarget &target,
             Value lr);
  /// ZeRO-1's chunk update: whether the step is skipped is what `update`
  /// stored to `out:found_inf`.
  void loadSkip() {
    Type f32 = builder.getF32Type();
    Value found = load(getBufferSymbol(entry, "out", "found_inf"),
                       RankedTensorType::get({}, f32));
    skip = math.compare(mdl::CmpPredicate::ne, found, math.constant(0.0, f32));
  }

  UpdateMath &getMath() { return math; }

private:
  /// GradScaler's unscale_: multiplies every gradient by the f32 inverse of
  /// the loss scale and records in `skip` whether any value was inf or NaN.
  void unscale(MutableArrayRef<Segment> segments);
  /// The sum of all elements of `value` (itself when 0-d).
  Value sumAll(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() == 0)
      return value;
    SmallVector<int64_t> axes(type.getRank());
    std::iota(axes.begin(), axes.end(), 0);
    return builder.create<mdl::SumOp>(loc, value, axes);
  }
  /// `updated`, or with loss scaling `old` when the step is skipped.
  Value unlessSkipped(Value updated, Value old) {
    return skip ? math.select(skip, old, updated) : updated;
  }
  Value sgd(const OptimizerConfig &config, const StepTarget &target,
            Value lr);
  Value adam(const OptimizerConfig &config, const StepTarget &target,
             Value lr);
  Value rmsprop(const OptimizerConfig &config, const StepTarget &target,
                Value lr);
  Value adagrad(const StepTarget &target, Value lr);
  Value adadelta(const StepTarget &target, Value lr);
  /// torch's `self.lerp_(end, weight)` (weight an f32 scalar tensor): its
  /// kernel computes `self + w (end - self)` when w < 0.5, else
  /// `end - (end - self)(1 - w)`, which is `end + (w - 1)(end - self)`
  /// exactly.
  Value lerp(Value self, Value end, Value weight, Type elementType);
  /// Hyper `key` (f64) for `target`: its group's constant, else the
  /// hyper's load.
  Value hyperOf(const StepTarget &target, StringRef key) {
    if (target.overrides) {
      auto it = target.overrides->find(key);
      if (it != target.overrides->end())
        return math.constant(it->second);
    }
    return hyper(key);
  }
  /// `grad + weight_decay * param` (torch's L2 penalty).
  Value withWeightDecay(const StepTarget &target, Value p) {
    Value decay = scalarFor(hyperOf(target, "weight_decay"), target.type);
    return math.add(target.grad, math.mul(decay, p));
  }
  /// `x * keep + ((1 - keep) * g) * g`: torch's
  /// `x.mul_(keep).addcmul_(g, g, value=1 - keep)` (1 - keep in f64).
  Value decayedSquare(Value x, Value keep, Value g, RankedTensorType type) {
    Value kept = math.mul(x, scalarFor(keep, type));
    Value rest = scalarFor(math.sub(math.constant(1.0), keep), type);
    Value scaled = math.mul(rest, g);
    return math.add(kept, math.mul(scaled, g));
  }
  /// An f64 scalar as the parameter's element type, where it meets it.
  Value scalarFor(Value scalar, RankedTensorType type) {
    return math.cast(scalar, type.getElementType());
  }

  OpBuilder builder;
  Location loc;
  UpdateMath math;
  StringRef entry;
  llvm::StringMap<Value> hypers;
  /// With loss scaling, the 0-d i1 "some gradient is inf or NaN".
  Value skip;
};

} // namespace

void UpdateBuilder::unscale(MutableArrayRef<Segment> segments) {
  // torch._amp_foreach_non_finite_check_and_unscale_: found_inf when any
  // value of the scaled gradients is inf or NaN, then grad *= inv_scale,
  // inv_scale = f32(1 / f64(scale)). g * 0 is 0 for a finite g and NaN for
  // inf or NaN, so the sum of those over all gradients is NaN exactly when
  // one is not finite (and never overflows).
  Type f32 = builder.getF32Type();
  SmallVector<Value> probes;
  for (Segment &segment : segments) {
    Value zeros = math.mul(segment.gradValue,
                           scalarFor(math.constant(0.0), segment.type));
    probes.push_back(math.cast(sumAll(zeros), f32));
  }
  Value probe =
      probes.empty() ? math.constant(0.0, f32) : math.stackedSum(probes);
  skip = math.compare(mdl::CmpPredicate::ne, probe, probe);
  store(math.select(skip, math.constant(1.0, f32), math.constant(0.0, f32)),
        getBufferSymbol(entry, "out", "found_inf"));
  Value inverse = math.cast(
      math.div(math.constant(1.0), hyper("loss_scale")), f32);
  for (Segment &segment : segments)
    segment.gradValue =
        math.mul(segment.gradValue, scalarFor(inverse, segment.type));
}

void UpdateBuilder::loadClippedGrads(const OptimizerConfig &config,
                                     MutableArrayRef<Segment> segments) {
  for (Segment &segment : segments)
    segment.gradValue = load(segment.grad, segment.type);
  if (config.lossScaling)
    unscale(segments);
  // torch.nn.utils.clip_grad_norm_(norm_type=2) is the norm of all the
  // gradients' elements; torch computes it as the norm of per-gradient
  // norms, here it is the root of the sum of each segment's squares (one
  // reduction over a flat view: the same value up to the rounding of the
  // order of the sum). The sums are in the gradients' dtype; the norm and
  // the coefficient are f32, or f64 for f64 parameters (--widen-f64), as
  // torch stacks the norms in their own dtype.
  Type normType = builder.getF32Type();
  for (const Segment &segment : segments)
    if (segment.type.getElementType().isF64())
      normType = builder.getF64Type();
  SmallVector<Value> squares;
  for (Segment &segment : segments)
    squares.push_back(math.cast(
        sumAll(math.mul(segment.gradValue, segment.gradValue)), normType));
  Value totalNorm = squares.empty() ? math.constant(0.0, normType)
                                    : math.sqrt(math.stackedSum(squares));
  store(math.cast(totalNorm, builder.getF32Type()),
        getBufferSymbol(entry, "out", "grad_norm"));

  // clip_coef = max_norm / (total_norm + 1e-6), which torch evaluates as
  // reciprocal(total_norm + 1e-6) * max_norm in f32 (f64 for f64 parameters),
  // then clamped to 1. grad_clip = 0 (off) multiplies by exactly 1 instead.
  Value gradClip = hyper("grad_clip");
  Value one = math.constant(1.0, normType);
  Value guardedNorm = math.add(totalNorm, math.constant(1e-6, normType));
  Value reciprocal = math.div(one, guardedNorm);
  Value coefficient = math.mul(reciprocal, math.cast(gradClip, normType));
  coefficient = math.min(coefficient, one);
  Value clipping =
      math.compare(mdl::CmpPredicate::gt, gradClip, math.constant(0.0));
  coefficient = math.select(clipping, coefficient, one);
  for (Segment &segment : segments)
    segment.gradValue =
        math.mul(segment.gradValue, scalarFor(coefficient, segment.type));
}

Value UpdateBuilder::step(const OptimizerConfig &config,
                          const StepTarget &target, Value lr) {
  if (config.kind == "sgd")
    return sgd(config, target, lr);
  if (config.kind == "rmsprop")
    return rmsprop(config, target, lr);
  if (config.kind == "adagrad")
    return adagrad(target, lr);
  if (config.kind == "adadelta")
    return adadelta(target, lr);
  return adam(config, target, lr);
}

Value UpdateBuilder::lerp(Value self, Value end, Value weight,
                          Type elementType) {
  Value small = math.compare(mdl::CmpPredicate::lt, weight,
                             math.constant(0.5, elementType));
  Value weightLessOne = math.sub(weight, math.constant(1.0, elementType));
  Value coefficient = math.select(small, weight, weightLessOne);
  Value base = math.select(small, self, end);
  Value difference = math.sub(end, self);
  return math.add(base, math.mul(coefficient, difference));
}

Value UpdateBuilder::rmsprop(const OptimizerConfig &config,
                             const StepTarget &target, Value lr) {
  // torch.optim.RMSprop: _single_tensor_rmsprop. Each op in its own
  // statement, so that the IR's order is the source's.
  RankedTensorType type = target.type;
  Type elementType = type.getElementType();
  Value p = load(target.param, type);
  Value grad = withWeightDecay(target, p);
  std::string squareSymbol = target.state("square_avg");
  Value oldSquare = load(squareSymbol, type);
  Value alpha = hyperOf(target, "alpha");
  // square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
  Value square = decayedSquare(oldSquare, alpha, grad, type);
  store(unlessSkipped(square, oldSquare), squareSymbol);
  Value avg;
  if (config.centered) {
    // grad_avg.lerp_(grad, 1 - alpha);
    // avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
    std::string meanSymbol = target.state("grad_avg");
    Value oldMean = load(meanSymbol, type);
    Value weight = scalarFor(math.sub(math.constant(1.0), alpha), type);
    Value mean = lerp(oldMean, grad, weight, elementType);
    store(unlessSkipped(mean, oldMean), meanSymbol);
    avg = math.sqrt(math.sub(square, math.mul(mean, mean)));
  } else {
    avg = math.sqrt(square);
  }
  avg = math.add(avg, scalarFor(hyperOf(target, "eps"), type));
  Value stepLr = scalarFor(lr, type);
  if (config.momentumBuffers) {
    // buf.mul_(momentum).addcdiv_(grad, avg); param.add_(buf, alpha=-lr)
    std::string bufferSymbol = target.state("momentum");
    Value oldBuffer = load(bufferSymbol, type);
    Value momentum = scalarFor(hyperOf(target, "momentum"), type);
    Value kept = math.mul(oldBuffer, momentum);
    Value quotient = math.div(grad, avg);
    Value buffer = math.add(kept, quotient);
    store(unlessSkipped(buffer, oldBuffer), bufferSymbol);
    return unlessSkipped(math.sub(p, math.mul(stepLr, buffer)), p);
  }
  // param.addcdiv_(grad, avg, value=-lr)
  return unlessSkipped(math.sub(p, math.div(math.mul(stepLr, grad), avg)), p);
}

Value UpdateBuilder::adagrad(const StepTarget &target, Value lr) {
  // torch.optim.Adagrad: _single_tensor_adagrad.
  RankedTensorType type = target.type;
  Value p = load(target.param, type);
  Value grad = withWeightDecay(target, p);
  // clr = lr / (1 + (step - 1) * lr_decay), in f64, the optimizer's step.
  Value step = hyper("optimizer_step");
  Value one = math.constant(1.0);
  Value lrDecay = hyperOf(target, "lr_decay");
  Value decayed = math.mul(math.sub(step, one), lrDecay);
  Value clr = math.div(lr, math.add(one, decayed));
  // The sum starts at initial_accumulator_value (torch.full_like): the
  // buffer is zero until the optimizer's first step, which takes the
  // initial value instead.
  std::string sumSymbol = target.state("sum");
  Value oldSum = load(sumSymbol, type);
  Value first = math.compare(mdl::CmpPredicate::eq, step, one);
  Value initial = scalarFor(hyperOf(target, "initial_accumulator_value"), type);
  Value start = math.select(first, initial, oldSum);
  // state_sum.addcmul_(grad, grad, value=1)
  Value sum = math.add(start, math.mul(grad, grad));
  store(unlessSkipped(sum, oldSum), sumSymbol);
  // std = state_sum.sqrt().add_(eps); param.addcdiv_(grad, std, value=-clr)
  Value eps = scalarFor(hyperOf(target, "eps"), type);
  Value std = math.add(math.sqrt(sum), eps);
  Value numerator = math.mul(scalarFor(clr, type), grad);
  return unlessSkipped(math.sub(p, math.div(numerator, std)), p);
}

Value UpdateBuilder::adadelta(const StepTarget &target, Value lr) {
  // torch.optim.Adadelta: _single_tensor_adadelta.
  RankedTensorType type = target.type;
  Value p = load(target.param, type);
  Value grad = withWeightDecay(target, p);
  Value rho = hyperOf(target, "rho");
  Value eps = scalarFor(hyperOf(target, "eps"), type);
  std::string squareSymbol = target.state("square_avg");
  std::string deltaSymbol = target.state("acc_delta");
  Value oldSquare = load(squareSymbol, type);
  Value oldDelta = load(deltaSymbol, type);
  // square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
  Value square = decayedSquare(oldSquare, rho, grad, type);
  // std = square_avg.add(eps).sqrt_(); delta = acc_delta.add(eps).sqrt_()
  Value std = math.sqrt(math.add(square, eps));
  Value delta = math.sqrt(math.add(oldDelta, eps));
  // delta.div_(std).mul_(grad)
  delta = math.mul(math.div(delta, std), grad);
  // acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
  Value accumulated = decayedSquare(oldDelta, rho, delta, type);
  store(unlessSkipped(square, oldSquare), squareSymbol);
  store(unlessSkipped(accumulated, oldDelta), deltaSymbol);
  // param.add_(delta, alpha=-lr)
  return unlessSkipped(math.sub(p, math.mul(scalarFor(lr, type), delta)), p);
}

Value UpdateBuilder::sgd(const OptimizerConfig &config,
                         const StepTarget &target, Value lr) {
  // torch.optim.SGD with dampening 0: _single_tensor_sgd. Each op is built
  // in its own statement so that the IR's order is the source's.
  RankedTensorType type = target.type;
  Value p = load(target.param, type);
  // grad = grad.add(param, alpha=weight_decay)
  Value weightDecay = scalarFor(hyperOf(target, "weight_decay"), type);
  Value grad = math.add(target.grad, math.mul(weightDecay, p));
  if (config.momentumBuffers) {
    std::string symbol = target.state("momentum");
    Value oldBuffer = load(symbol, type);
    Value momentum = scalarFor(hyperOf(target, "momentum"), type);
    // The optimizer's first step: buf = clone(grad); later:
    // buf.mul_(momentum).add_(grad).
    Value step = hyper("optimizer_step");
    Value firstStep =
        math.compare(mdl::CmpPredicate::eq, step, math.constant(1.0));
    Value accumulated = math.add(math.mul(oldBuffer, momentum), grad);
    Value buffer = math.select(firstStep, grad, accumulated);
    store(unlessSkipped(buffer, oldBuffer), symbol);
    // nesterov: grad = grad.add(buf, alpha=momentum); else grad = buf.
    grad =
        config.nesterov ? math.add(grad, math.mul(momentum, buffer)) : buffer;
  }
  // param.add_(grad, alpha=-lr)
  Value stepLr = scalarFor(lr, type);
  return unlessSkipped(math.sub(p, math.mul(stepLr, grad)), p);
}

Value UpdateBuilder::adam(const OptimizerConfig &config,
                          const StepTarget &target, Value lr) {
  // torch.optim.Adam / AdamW (amsgrad off): _single_tensor_adam(w). Each
  // op is built in its own statement so that the IR's order is the
  // source's.
  RankedTensorType type = target.type;
  Value oldP = load(target.param, type);
  Value p = oldP;
  std::string mSymbol = target.state("m");
  std::string vSymbol = target.state("v");
  Value oldM = load(mSymbol, type);
  Value oldV = load(vSymbol, type);
  Value m = oldM, v = oldV;
  Value one = math.constant(1.0);
  Value weightDecay = hyperOf(target, "weight_decay");
  Value grad = target.grad;
  if (config.kind == "adamw") {
    // Decoupled decay first: param.mul_(1 - lr * weight_decay).
    Value decay = math.sub(one, math.mul(lr, weightDecay));
    p = math.mul(p, scalarFor(decay, type));
  } else {
    // L2 penalty: grad = grad.add(param, alpha=weight_decay).
    Value decay = scalarFor(weightDecay, type);
    grad = math.add(grad, math.mul(decay, p));
  }
  Value beta1 = hyperOf(target, "beta1");
  Value beta2 = hyperOf(target, "beta2");
  // m = beta1 m + (1 - beta1) g, as torch computes it:
  // exp_avg.lerp_(grad, w = 1 - beta1), whose kernel picks its formula by
  // the weight: m + w (g - m) when w < 0.5, else g - (g - m)(1 - w), which
  // is g + (w - 1)(g - m) exactly.
  Value weight = scalarFor(math.sub(one, beta1), type);
  m = lerp(m, grad, weight, type.getElementType());
  // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
  Value vKept = math.mul(v, scalarFor(beta2, type));
  Value gradScaled = math.mul(scalarFor(math.sub(one, beta2), type), grad);
  v = math.add(vKept, math.mul(gradScaled, grad));
  store(unlessSkipped(m, oldM), mSymbol);
  store(unlessSkipped(v, oldV), vSymbol);
  // bias_correction1/2 = 1 - beta1/2 ** step; step_size = lr / bc1, in f64,
  // with the optimizer's own step count.
  Value step = hyper("optimizer_step");
  Value correction1 = math.sub(one, math.pow(beta1, step));
  Value correction2 = math.sub(one, math.pow(beta2, step));
  Value stepSize = math.div(lr, correction1);
  // denom = (exp_avg_sq.sqrt() / sqrt(bc2)).add_(eps)
  Value eps = scalarFor(hyperOf(target, "eps"), type);
  Value correction2Root = scalarFor(math.sqrt(correction2), type);
  Value denom = math.add(math.div(math.sqrt(v), correction2Root), eps);
  // param.addcdiv_(exp_avg, denom, value=-step_size)
  Value numerator = math.mul(scalarFor(stepSize, type), m);
  return unlessSkipped(math.sub(p, math.div(numerator, denom)), oldP);
}

namespace {

struct MdlExpandOptimizerPass
    : modelc::impl::MdlExpandOptimizerBase<MdlExpandOptimizerPass> {
  using MdlExpandOptimizerBase::MdlExpandOptimizerBase;
  void runOnOperation() override;

private:
  LogicalResult expand(mdl::TrainOp train);
  /// ZeRO-1: a window per element type of `params`.
  SmallVector<ZeroWindow> getZeroWindows(StringRef entry,
                                         const OptimizerConfig &config,
                                         ArrayRef<mdl::ParamOp> params);
  /// ZeRO-1: `@"T.update_chunk.TYPE"`, the step of the chunk in `window`.
  void buildChunkUpdate(OpBuilder &builder, mdl::TrainOp train,
                        const OptimizerConfig &config,
                        const ZeroWindow &window);
  /// The parameters `train` updates: those whose gradient buffer its
  /// fwd_bwd function accumulates into, in declaration order.
  FailureOr<SmallVector<mdl::ParamOp>> collectParams(mdl::TrainOp train,
                                                     func::FuncOp fwdBwd);
  /// The settings of each of `params` that a parameter group of `train`
  /// selects; an error when a group selects none of them, or two groups
  /// one, as torch.optim refuses a parameter in two groups, or with ZeRO-1
  /// (whose chunks span parameters).
  FailureOr<llvm::StringMap<GroupSettings>>
  assignParamGroups(mdl::TrainOp train, ArrayRef<mdl::ParamOp> params,
                    bool zero);
  /// Reports the first of `names` that is not declared (when `expected`)
  /// or already is (otherwise).
  LogicalResult checkDeclared(mdl::TrainOp train, ArrayRef<std::string> names,
                              bool expected);
  /// What the step of `params` covers: a flat view per element type and
  /// parameter group, unless another entry's views already hold one of
  /// the parameters or gradients; then each parameter alone.
  SmallVector<Segment>
  planSegments(StringRef entry, const OptimizerConfig &config,
               ArrayRef<mdl::ParamOp> params,
               const llvm::StringMap<GroupSettings> &groups, bool zero);
  /// Declares the flat views of `segment` at `builder`'s point.
  void declareViews(OpBuilder &builder, Location loc, const Segment &segment,
                    const OptimizerConfig &config, StringRef entry, bool zero);

  SymbolTable *symbols = nullptr;
};

} // namespace

FailureOr<SmallVector<mdl::ParamOp>>
MdlExpandOptimizerPass::collectParams(mdl::TrainOp train, func::FuncOp fwdBwd) {
  llvm::StringSet<> stored;
  fwdBwd.walk([&](mdl::StoreOp store) { stored.insert(store.getName()); });
  SmallVector<mdl::ParamOp> params;
  for (auto param : getOperation().getOps<mdl::ParamOp>()) {
    std::string gradSymbol = getGradSymbol(param.getSymName());
    if (!stored.contains(gradSymbol))
      continue;
    auto grad = symbols->lookup<mdl::BufferOp>(gradSymbol);
    if (!grad || grad.getType() != param.getType())
      return train.emitError("@\"")
             << gradSymbol << "\" must be an mdl.buffer of type "
             << param.getType();
    params.push_back(param);
  }
  return params;
}

FailureOr<llvm::StringMap<GroupSettings>>
MdlExpandOptimizerPass::assignParamGroups(mdl::TrainOp train,
                                          ArrayRef<mdl::ParamOp> params,
                                          bool zero) {
  SmallVector<ParamGroup> groups = readParamGroups(train);
  llvm::StringMap<GroupSettings> settings;
  if (groups.empty())
    return settings;
  if (zero)
    return train.emitError("param_groups are not supported with ZeRO-1 "
                           "(parallel { zero = 1 }) yet");
  llvm::StringMap<StringRef> owner;
  for (const ParamGroup &group : groups) {
    bool any = false;
    for (mdl::ParamOp param : params) {
      if (!group.selects(param))
        continue;
      any = true;
      auto [it, inserted] = owner.try_emplace(param.getSymName(), group.name);
      if (!inserted)
        return train.emitError("parameter '")
               << param.getSymName() << "' is in parameter groups '"
               << it->second << "' and '" << group.name
               << "'; a parameter may be in one group only";
      settings[param.getSymName()] = group.settings;
    }
    if (!any)
      return train.emitError("parameter group '")
             << group.name << "' selects none of the trained parameters";
  }
  return settings;
}

LogicalResult MdlExpandOptimizerPass::checkDeclared(mdl::TrainOp train,
                                                    ArrayRef<std::string> names,
                                                    bool expected) {
  for (const std::string &name : names) {
    bool declared = symbols->lookup(name) != nullptr;
    if (declared != expected)
      return train.emitError("@\"")
             << name << (expected ? "\" is not declared" : "\" already exists");
  }
  return success();
}

SmallVector<Segment> MdlExpandOptimizerPass::planSegments(
    StringRef entry, const OptimizerConfig &config,
    ArrayRef<mdl::ParamOp> params, const llvm::StringMap<GroupSettings> &groups,
    bool zero) {
  auto settingsOf = [&](mdl::ParamOp param) -> const GroupSettings * {
    auto it = groups.find(param.getSymName());
    return it == groups.end() ? nullptr : &it->second;
  };
  SmallVector<StringRef, 3> kinds;
  if (!zero)
    kinds = getStateKinds(config);
  llvm::StringSet<> viewed;
  for (auto view : getOperation().getOps<mdl::FlatViewOp>())
    for (Attribute member : view.getMembers())
      viewed.insert(cast<FlatSymbolRefAttr>(member).getValue());
  bool flat = flatViews && llvm::none_of(params, [&](mdl::ParamOp param) {
                return viewed.contains(param.getSymName()) ||
                       viewed.contains(getGradSymbol(param.getSymName()));
              });
  SmallVector<Segment> segments;
  if (!flat) {
    for (mdl::ParamOp param : params) {
      Segment segment;
      segment.params = {param};
      segment.type = param.getType();
      segment.param = param.getSymName().str();
      segment.grad = getGradSymbol(param.getSymName());
      for (StringRef kind : kinds)
        segment.state[kind] = getBufferSymbol(
            entry, "state", (kind + "." + param.getSymName()).str());
      segment.settings = settingsOf(param);
      segments.push_back(std::move(segment));
    }
    return segments;
  }
  for (mdl::ParamOp param : params) {
    Type element = param.getType().getElementType();
    const GroupSettings *settings = settingsOf(param);
    auto it = llvm::find_if(segments, [&](const Segment &segment) {
      // Each parameter has its own copy of its group's settings.
      bool sameGroup = segment.settings && settings
                           ? segment.settings->index == settings->index
                           : segment.settings == settings;
      return segment.type.getElementType() == element && sameGroup;
    });
    if (it == segments.end()) {
      Segment segment;
      segment.view = true;
      segment.settings = settings;
      segment.type = RankedTensorType::get({0}, element);
      segments.push_back(std::move(segment));
      it = std::prev(segments.end());
    }
    it->params.push_back(param);
  }
  for (Segment &segment : segments) {
    SmallVector<RankedTensorType> types;
    for (mdl::ParamOp param : segment.params)
      types.push_back(param.getType());
    Type element = segment.type.getElementType();
    segment.type =
        RankedTensorType::get({mdl::FlatViewOp::layout(types).back()}, element);
    // `.TYPE`, and `.GROUP` for a parameter group's.
    std::string suffix;
    llvm::raw_string_ostream os(suffix);
    os << "." << element;
    if (segment.settings)
      os << "." << segment.settings->name;
    segment.param = getBufferSymbol(entry, "flat", "param" + suffix);
    segment.grad = getBufferSymbol(entry, "flat", "grad" + suffix);
    for (StringRef kind : kinds)
      segment.state[kind] =
          getBufferSymbol(entry, "flat", (kind + suffix).str());
  }
  return segments;
}

void MdlExpandOptimizerPass::declareViews(OpBuilder &builder, Location loc,
                                          const Segment &segment,
                                          const OptimizerConfig &config,
                                          StringRef entry, bool zero) {
  auto declare = [&](StringRef symbol,
                     llvm::function_ref<std::string(StringRef)> member) {
    SmallVector<Attribute> members;
    for (mdl::ParamOp param : segment.params)
      members.push_back(FlatSymbolRefAttr::get(builder.getContext(),
                                               member(param.getSymName())));
    symbols->insert(builder.create<mdl::FlatViewOp>(
        loc, symbol, segment.type, builder.getArrayAttr(members)));
  };
  declare(segment.param, [](StringRef param) { return param.str(); });
  declare(segment.grad, [](StringRef param) { return getGradSymbol(param); });
  if (zero)
    return;
  for (StringRef kind : getStateKinds(config))
    declare(segment.state.lookup(kind), [&](StringRef param) {
      return getBufferSymbol(entry, "state", (kind + "." + param).str());
    });
}

namespace {
/// The learning rate of a parameter in `group` (null: in none): `lr`, the
/// scheduled `lr` hyper, unless the group gives its own base lr; then the
/// schedule again from that constant (the other hypers shared), built once
/// per group into `cache`.
Value groupLearningRate(UpdateBuilder &body, const OptimizerConfig &config,
                        const GroupSettings *group, Value lr,
                        llvm::DenseMap<unsigned, Value> &cache) {
  if (!group || !group->hypers.count("lr"))
    return lr;
  double base = group->hypers.lookup("lr");
  Value &cached = cache[group->index];
  if (!cached) {
    UpdateMath &math = body.getMath();
    cached =
        buildScheduledLearningRate(math, config.schedule, [&](StringRef key) {
          return key == "lr" ? math.constant(base) : body.hyper(key);
        });
  }
  return cached;
}

} // namespace

LogicalResult MdlExpandOptimizerPass::expand(mdl::TrainOp train) {
  FailureOr<OptimizerConfig> config = readConfig(train);
  if (failed(config))
    return failure();
  StringRef name = train.getSymName();
  ModuleOp module = getOperation();
  func::FuncOp fwdBwd = lookupEntryFunction(module, name, "fwd_bwd");
  if (!fwdBwd)
    return train.emitError("no fwd_bwd function for @")
           << name << "; run --mdl-build-entry-functions first";
  if (fwdBwd->hasAttr(kAutodiffAttrName))
    return fwdBwd.emitError("has no gradients yet; run --mdl-autodiff first");
  FailureOr<SmallVector<mdl::ParamOp>> params = collectParams(train, fwdBwd);
  if (failed(params))
    return failure();

  SmallVector<std::string> required = {
      getBufferSymbol(name, "out", "lr"),
      getBufferSymbol(name, "out", "grad_norm")};
  if (config->lossScaling)
    required.push_back(getBufferSymbol(name, "out", "found_inf"));
  for (StringRef key : getHyperKeys())
    required.push_back(getBufferSymbol(name, "hyper", key));
  // The state buffers, zero-initialised by the runtime: `KIND.PARAM`.
  // ZeRO-1 keeps the state out of the arena (the ranks' shards hold it)
  // and has a window per element type instead.
  bool zero = usesZero(train);
  FailureOr<llvm::StringMap<GroupSettings>> groupSettings =
      assignParamGroups(train, *params, zero);
  if (failed(groupSettings))
    return failure();
  SmallVector<std::pair<std::string, RankedTensorType>> state;
  if (!zero)
    for (mdl::ParamOp param : *params)
      for (StringRef kind : getStateKinds(*config))
        state.push_back(
            {(kind + "." + param.getSymName()).str(), param.getType()});
  SmallVector<ZeroWindow> windows;
  if (zero)
    windows = getZeroWindows(name, *config, *params);
  SmallVector<Segment> segments =
      planSegments(name, *config, *params, *groupSettings, zero);
  SmallVector<std::string> created = {getFunctionSymbol(name, "update")};
  for (const auto &[key, type] : state)
    created.push_back(getBufferSymbol(name, "state", key));
  for (const Segment &segment : segments) {
    if (!segment.view)
      continue;
    created.push_back(segment.param);
    created.push_back(segment.grad);
    for (const auto &entry : segment.state)
      created.push_back(entry.getValue());
  }
  for (const ZeroWindow &window : windows) {
    created.push_back(window.function);
    for (const auto &[key, symbol] : window.buffers)
      created.push_back(symbol);
  }
  if (failed(checkDeclared(train, required, true)) ||
      failed(checkDeclared(train, created, false)))
    return failure();

  // After the entry's last function, so an entry's declarations stay
  // together.
  Operation *insertAfter = train;
  for (auto func : module.getOps<func::FuncOp>())
    if (auto entry = func->getAttrOfType<StringAttr>(kEntryAttrName))
      if (entry.getValue() == name)
        insertAfter = func;
  OpBuilder builder(insertAfter);
  builder.setInsertionPointAfter(insertAfter);
  Location loc = train.getLoc();
  for (const auto &[key, type] : state)
    symbols->insert(createBuffer(builder, loc,
                                 getBufferSymbol(name, "state", key), type,
                                 "state", "train", key, name));
  for (const ZeroWindow &window : windows)
    for (const auto &[key, symbol] : window.buffers)
      symbols->insert(createBuffer(builder, loc, symbol, window.type,
                                   "window", "train", key, name));
  for (const Segment &segment : segments)
    if (segment.view)
      declareViews(builder, loc, segment, *config, name, zero);
  func::FuncOp update = createEntryFunction(builder, loc, name, "update");
  symbols->insert(update);
  if (zero) {
    SmallVector<Attribute> names;
    for (mdl::ParamOp param : *params)
      names.push_back(param.getSymNameAttr());
    update->setAttr(kZeroParamsAttrName, builder.getArrayAttr(names));
  }

  // Loads come before the stores to each symbol: hypers are never stored,
  // all gradients are loaded for the norm before any is zeroed, and each
  // parameter and its state are loaded right before they are stored.
  UpdateBuilder body(update, name);
  UpdateMath &math = body.getMath();
  Value lr = buildScheduledLearningRate(
      math, config->schedule, [&](StringRef key) { return body.hyper(key); });
  body.loadClippedGrads(*config, segments);
  llvm::DenseMap<unsigned, Value> groupLr;
  for (Segment &segment : segments) {
    if (zero) {
      // ZeRO-1: the gradient as the step uses it (unscaled, clipped); the
      // runtime steps the chunks its rank owns through the window, then
      // zeroes every gradient.
      body.store(segment.gradValue, segment.grad);
      continue;
    }
    StepTarget target{
        segment.param, segment.type,
        [&](StringRef kind) { return segment.state.lookup(kind); },
        segment.gradValue};
    if (segment.settings)
      target.overrides = &segment.settings->hypers;
    body.store(body.step(*config, target,
                         groupLearningRate(body, *config, segment.settings, lr,
                                           groupLr)),
               segment.param);
    body.store(math.splat(segment.type, 0.0), segment.grad);
  }
  body.store(math.cast(lr, builder.getF32Type()),
             getBufferSymbol(name, "out", "lr"));
  OpBuilder::atBlockEnd(&update.front()).create<func::ReturnOp>(loc);
  for (const ZeroWindow &window : windows)
    buildChunkUpdate(builder, train, *config, window);
  return success();
}

SmallVector<ZeroWindow>
MdlExpandOptimizerPass::getZeroWindows(StringRef entry,
                                       const OptimizerConfig &config,
                                       ArrayRef<mdl::ParamOp> params) {
  // Chunks of a power of two elements, about 1/64 of all the parameters'
  // (so that up to 64 ranks hold nearly equal shares), from 1024 to 2^20.
  uint64_t total = 0;
  for (mdl::ParamOp param : params)
    total += uint64_t(param.getType().getNumElements());
  uint64_t chunk = std::clamp<uint64_t>(llvm::PowerOf2Ceil((total + 63) / 64),
                                        1024, uint64_t(1) << 20);
  SmallVector<ZeroWindow> windows;
  for (mdl::ParamOp param : params) {
    Type element = param.getType().getElementType();
    if (llvm::any_of(windows,
                     [&](const ZeroWindow &w) { return w.type.getElementType() == element; }))
      continue;
    std::string suffix;
    llvm::raw_string_ostream os(suffix);
    os << "." << element;
    ZeroWindow window;
    window.type = RankedTensorType::get({int64_t(chunk)}, element);
    window.function = getFunctionSymbol(entry, "update_chunk" + suffix);
    SmallVector<StringRef> keys = {"param", "grad"};
    for (StringRef kind : getStateKinds(config))
      keys.push_back(kind);
    for (StringRef key : keys)
      window.buffers.push_back(
          {key.str(), getBufferSymbol(entry, "zero", (key + suffix).str())});
    windows.push_back(std::move(window));
  }
  return windows;
}

void MdlExpandOptimizerPass::buildChunkUpdate(OpBuilder &builder,
                                              mdl::TrainOp train,
                                              const OptimizerConfig &config,
                                              const ZeroWindow &window) {
  // `update` stored the gradients unscaled and clipped, and found_inf; the
  // learning rate is recomputed from the hypers (the same ops, the same
  // value); the step is the elementwise one of `update` without ZeRO, on
  // whatever chunk the runtime put in the window.
  StringRef name = train.getSymName();
  Location loc = train.getLoc();
  auto func = builder.create<func::FuncOp>(loc, window.function,
                                           builder.getFunctionType({}, {}));
  func->setAttr(kEntryAttrName, builder.getStringAttr(name));
  func->setAttr(kFunctionAttrName, builder.getStringAttr("update_chunk"));
  SmallVector<Attribute> buffers;
  for (const auto &[key, symbol] : window.buffers)
    buffers.push_back(builder.getStringAttr(symbol));
  func->setAttr(kWindowAttrName, builder.getArrayAttr(buffers));
  func.addEntryBlock();
  symbols->insert(func);
  UpdateBuilder body(func, name);
  Value lr = buildScheduledLearningRate(
      body.getMath(), config.schedule,
      [&](StringRef key) { return body.hyper(key); });
  if (config.lossScaling)
    body.loadSkip();
  auto symbolOf = [&](StringRef key) {
    for (const auto &[k, symbol] : window.buffers)
      if (k == key)
        return symbol;
    llvm_unreachable("a window buffer of every kind");
  };
  StepTarget target{symbolOf("param"), window.type, symbolOf,
                    body.load(symbolOf("grad"), window.type)};
  body.store(body.step(config, target, lr), target.param);
  OpBuilder::atBlockEnd(&func.front()).create<func::ReturnOp>(loc);
}

void MdlExpandOptimizerPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbolTable(module);
  symbols = &symbolTable;
  for (auto train : llvm::to_vector(module.getOps<mdl::TrainOp>()))
    if (failed(expand(train)))
      return signalPassFailure();
}
