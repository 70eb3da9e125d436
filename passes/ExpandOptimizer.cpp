// --mdl-expand-optimizer: builds each train entry's `update` function: the
// scheduled learning rate, f16's unscaling and inf/NaN check
// (torch.amp.GradScaler), the global gradient norm and clipping, and the
// sgd/adam/adamw step of every parameter, exactly as torch.optim computes
// them, on run-time hyperparameters. docs/passes/expand-optimizer.md.
#include "passes/EntryUtils.h"
#include "passes/OptimizerUtils.h"
#include "passes/Passes.h"

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
  /// SGD keeps momentum buffers when the settings ask for momentum; a
  /// run-time `momentum` cannot add them later.
  bool momentumBuffers = false;
  /// f16: the gradients arrive multiplied by the `loss_scale` hyper.
  bool lossScaling = false;
};

/// A parameter being updated and its gradient, as loaded and clipped.
struct ParamGrad {
  mdl::ParamOp param;
  Value grad;
};

/// What one optimizer step reads and writes: a parameter (or ZeRO-1's
/// window, a chunk of any parameter), its type, the symbol of its state
/// buffer of each kind (`m`, `v`, `momentum`), and its gradient.
struct StepTarget {
  std::string param;
  RankedTensorType type;
  std::function<std::string(StringRef kind)> state;
  Value grad;
};

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
  if (config.kind != "sgd" && config.kind != "adam" && config.kind != "adamw")
    return train.emitError("unknown optimizer '") << config.kind << "'";
  auto nesterov = optimizer.getAs<BoolAttr>("nesterov");
  config.nesterov = nesterov && nesterov.getValue();
  auto momentum = optimizer.getAs<FloatAttr>("momentum");
  config.momentumBuffers =
      config.kind == "sgd" &&
      (config.nesterov || (momentum && momentum.getValueAsDouble() != 0.0));
  auto schedule = settings.getAs<DictionaryAttr>("schedule");
  auto scheduleKind =
      schedule ? schedule.getAs<StringAttr>("kind") : StringAttr();
  config.schedule = scheduleKind ? scheduleKind.getValue() : "constant";
  if (!llvm::is_contained({"constant", "warmup_cosine", "linear", "step_lr"},
                          config.schedule))
    return train.emitError("unknown schedule '") << config.schedule << "'";
  return config;
}

/// The state each parameter keeps: `m.P`, `v.P` or `momentum.P`.
SmallVector<StringRef, 2> getStateKinds(const OptimizerConfig &config) {
  if (config.kind != "sgd")
    return {"m", "v"};
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

  /// Loads every gradient (with loss scaling: unscales them and stores
  /// whether any was inf or NaN), stores their global norm, and scales them
  /// as `torch.nn.utils.clip_grad_norm_` does when the hyper grad_clip > 0.
  SmallVector<ParamGrad> loadClippedGrads(const OptimizerConfig &config,
                                          ArrayRef<mdl::ParamOp> params);
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
  void unscale(SmallVector<ParamGrad> &grads);
  /// `updated`, or with loss scaling `old` when the step is skipped.
  Value unlessSkipped(Value updated, Value old) {
    return skip ? math.select(skip, old, updated) : updated;
  }
  Value sgd(const OptimizerConfig &config, const StepTarget &target,
            Value lr);
  Value adam(const OptimizerConfig &config, const StepTarget &target,
             Value lr);
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

void UpdateBuilder::unscale(SmallVector<ParamGrad> &grads) {
  // torch._amp_foreach_non_finite_check_and_unscale_: found_inf when any
  // value of the scaled gradients is inf or NaN, then grad *= inv_scale,
  // inv_scale = f32(1 / f64(scale)). g * 0 is 0 for a finite g and NaN for
  // inf or NaN, so the sum of those over all gradients is NaN exactly when
  // one is not finite (and never overflows).
  Type f32 = builder.getF32Type();
  SmallVector<Value> probes;
  for (ParamGrad &grad : grads) {
    auto type = cast<RankedTensorType>(grad.grad.getType());
    Value zeros =
        math.mul(grad.grad, scalarFor(math.constant(0.0), grad.param.getType()));
    if (type.getRank() > 0) {
      SmallVector<int64_t> axes(type.getRank());
      std::iota(axes.begin(), axes.end(), 0);
      zeros = builder.create<mdl::SumOp>(loc, zeros, axes);
    }
    probes.push_back(builder.create<mdl::ReshapeOp>(
        loc, math.cast(zeros, f32), ArrayRef<int64_t>{1}));
  }
  Value probe;
  if (probes.empty()) {
    probe = math.constant(0.0, f32);
  } else {
    Value stacked = builder.create<mdl::ConcatOp>(loc, probes, 0);
    probe = builder.create<mdl::SumOp>(loc, stacked, ArrayRef<int64_t>{0});
  }
  skip = math.compare(mdl::CmpPredicate::ne, probe, probe);
  store(math.select(skip, math.constant(1.0, f32), math.constant(0.0, f32)),
        getBufferSymbol(entry, "out", "found_inf"));
  Value inverse = math.cast(
      math.div(math.constant(1.0), hyper("loss_scale")), f32);
  for (ParamGrad &grad : grads)
    grad.grad = math.mul(grad.grad, scalarFor(inverse, grad.param.getType()));
}

SmallVector<ParamGrad>
UpdateBuilder::loadClippedGrads(const OptimizerConfig &config,
                                ArrayRef<mdl::ParamOp> params) {
  SmallVector<ParamGrad> grads;
  for (mdl::ParamOp param : params)
    grads.push_back(
        {param, load(getGradSymbol(param.getSymName()), param.getType())});
  if (config.lossScaling)
    unscale(grads);
  // torch.nn.utils.clip_grad_norm_(norm_type=2): the norm of the
  // per-gradient norms, each computed in the gradient's dtype.
  Type f32 = builder.getF32Type();
  SmallVector<Value> squaredNorms;
  for (ParamGrad &paramGrad : grads) {
    RankedTensorType type = paramGrad.param.getType();
    Value grad = paramGrad.grad;
    Value squares = math.mul(grad, grad);
    if (type.getRank() > 0) {
      SmallVector<int64_t> axes(type.getRank());
      std::iota(axes.begin(), axes.end(), 0);
      squares = builder.create<mdl::SumOp>(loc, squares, axes);
    }
    Value norm = math.cast(math.sqrt(squares), f32);
    Value squaredNorm = math.mul(norm, norm);
    squaredNorms.push_back(
        builder.create<mdl::ReshapeOp>(loc, squaredNorm, ArrayRef<int64_t>{1}));
  }
  Value totalNorm;
  if (squaredNorms.empty()) {
    totalNorm = math.constant(0.0, f32);
  } else {
    Value stacked = builder.create<mdl::ConcatOp>(loc, squaredNorms, 0);
    Value sum = builder.create<mdl::SumOp>(loc, stacked, ArrayRef<int64_t>{0});
    totalNorm = math.sqrt(sum);
  }
  store(totalNorm, getBufferSymbol(entry, "out", "grad_norm"));

  // clip_coef = max_norm / (total_norm + 1e-6), which torch evaluates as
  // reciprocal(total_norm + 1e-6) * max_norm in f32, then clamped to 1.
  // grad_clip = 0 (off) multiplies by exactly 1 instead.
  Value gradClip = hyper("grad_clip");
  Value one = math.constant(1.0, f32);
  Value guardedNorm = math.add(totalNorm, math.constant(1e-6, f32));
  Value reciprocal = math.div(one, guardedNorm);
  Value coefficient = math.mul(reciprocal, math.cast(gradClip, f32));
  coefficient = math.min(coefficient, one);
  Value clipping =
      math.compare(mdl::CmpPredicate::gt, gradClip, math.constant(0.0));
  coefficient = math.select(clipping, coefficient, one);
  for (ParamGrad &grad : grads)
    grad.grad =
        math.mul(grad.grad, scalarFor(coefficient, grad.param.getType()));
  return grads;
}

Value UpdateBuilder::step(const OptimizerConfig &config,
                          const StepTarget &target, Value lr) {
  return config.kind == "sgd" ? sgd(config, target, lr)
                              : adam(config, target, lr);
}

Value UpdateBuilder::sgd(const OptimizerConfig &config,
                         const StepTarget &target, Value lr) {
  // torch.optim.SGD with dampening 0: _single_tensor_sgd. Each op is built
  // in its own statement so that the IR's order is the source's.
  RankedTensorType type = target.type;
  Value p = load(target.param, type);
  // grad = grad.add(param, alpha=weight_decay)
  Value weightDecay = scalarFor(hyper("weight_decay"), type);
  Value grad = math.add(target.grad, math.mul(weightDecay, p));
  if (config.momentumBuffers) {
    std::string symbol = target.state("momentum");
    Value oldBuffer = load(symbol, type);
    Value momentum = scalarFor(hyper("momentum"), type);
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
  Value weightDecay = hyper("weight_decay");
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
  Value beta1 = hyper("beta1");
  Value beta2 = hyper("beta2");
  // m = beta1 m + (1 - beta1) g, as torch computes it:
  // exp_avg.lerp_(grad, w = 1 - beta1), whose kernel picks its formula by
  // the weight: m + w (g - m) when w < 0.5, else g - (g - m)(1 - w), which
  // is g + (w - 1)(g - m) exactly.
  Type elementType = type.getElementType();
  Value weight = scalarFor(math.sub(one, beta1), type);
  Value smallWeight = math.compare(mdl::CmpPredicate::lt, weight,
                                   math.constant(0.5, elementType));
  Value weightLessOne = math.sub(weight, math.constant(1.0, elementType));
  Value coefficient = math.select(smallWeight, weight, weightLessOne);
  Value base = math.select(smallWeight, m, grad);
  Value difference = math.sub(grad, m);
  m = math.add(base, math.mul(coefficient, difference));
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
  Value eps = scalarFor(hyper("eps"), type);
  Value correction2Root = scalarFor(math.sqrt(correction2), type);
  Value denom = math.add(math.div(math.sqrt(v), correction2Root), eps);
  // param.addcdiv_(exp_avg, denom, value=-step_size)
  Value numerator = math.mul(scalarFor(stepSize, type), m);
  return unlessSkipped(math.sub(p, math.div(numerator, denom)), oldP);
}

namespace {

struct MdlExpandOptimizerPass
    : modelc::impl::MdlExpandOptimizerBase<MdlExpandOptimizerPass> {
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
  /// Reports the first of `names` that is not declared (when `expected`)
  /// or already is (otherwise).
  LogicalResult checkDeclared(mdl::TrainOp train, ArrayRef<std::string> names,
                              bool expected);

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
  SmallVector<std::pair<std::string, RankedTensorType>> state;
  if (!zero)
    for (mdl::ParamOp param : *params)
      for (StringRef kind : getStateKinds(*config))
        state.push_back(
            {(kind + "." + param.getSymName()).str(), param.getType()});
  SmallVector<ZeroWindow> windows;
  if (zero)
    windows = getZeroWindows(name, *config, *params);
  SmallVector<std::string> created = {getFunctionSymbol(name, "update")};
  for (const auto &[key, type] : state)
    created.push_back(getBufferSymbol(name, "state", key));
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
  SmallVector<ParamGrad> grads = body.loadClippedGrads(*config, *params);
  for (ParamGrad &grad : grads) {
    StringRef param = grad.param.getSymName();
    if (zero) {
      // ZeRO-1: the gradient as the step uses it (unscaled, clipped); the
      // runtime steps the chunks its rank owns through the window, then
      // zeroes every gradient.
      body.store(grad.grad, getGradSymbol(param));
      continue;
    }
    StepTarget target{param.str(), grad.param.getType(),
                      [&](StringRef kind) {
                        return getBufferSymbol(name, "state",
                                               (kind + "." + param).str());
                      },
                      grad.grad};
    body.store(body.step(*config, target, lr), param);
    body.store(math.splat(grad.param.getType(), 0.0), getGradSymbol(param));
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
