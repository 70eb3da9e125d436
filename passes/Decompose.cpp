// --mdl-decompose: expands the composite ops (decomposeComposite: each one
// into simpler mdl ops, as PyTorch's reference writes it) and mdl.dropout
// (a multiplication by mdl.dropout_mask in fwd_bwd functions, the identity
// elsewhere) in the program functions. docs/contributing.md says how to add
// a composite op.
#include "passes/EntryUtils.h"
#include "passes/Passes.h"

#include "dialects/mdl/VJPBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>
#include <numeric>

namespace modelc {
#define GEN_PASS_DEF_MDLDECOMPOSE
#include "passes/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;

bool modelc::isComposite(Operation *op) {
  return isa<mdl::AttentionOp, mdl::RmsNormOp, mdl::NllLossOp,
             mdl::BceWithLogitsOp, mdl::BatchNormOp, mdl::ConvTranspose2dOp>(
      op);
}

namespace {

/// `torch.nn.functional.scaled_dot_product_attention` as one fused op,
/// mdl.attention_forward, whose backward recomputes the probabilities
/// (docs/codegen/attention.md): nothing of shape [t, s] is kept. Its
/// dropout draws from the seed and counter that decomposeDropouts gives it
/// in training; elsewhere it is dropped.
Value decomposeAttention(OpBuilder &builder, mdl::AttentionOp attention) {
  auto queryType = cast<RankedTensorType>(attention.getQuery().getType());
  Type element = queryType.getElementType();
  Type opmath = element.isF64() ? element : builder.getF32Type();
  auto lseType =
      RankedTensorType::get(queryType.getShape().drop_back(), opmath);
  auto fused = builder.create<mdl::AttentionForwardOp>(
      attention.getLoc(), TypeRange{attention.getType(), lseType},
      attention.getQuery(), attention.getKey(), attention.getValue(),
      attention.getMask(), /*seed=*/Value(), /*counter=*/Value(),
      attention.getCausalAttr(), attention.getScaleAttr(),
      attention.getDropoutAttr(), /*dropout_id=*/nullptr);
  return fused.getResult();
}

/// `input` in its opmath type: f32 for 16-bit floats, else itself.
Value toOpmath(mdl::VJPBuilder &b, OpBuilder &builder, Value input) {
  auto type = cast<FloatType>(getElementTypeOrSelf(input.getType()));
  return type.getWidth() < 32 ? b.cast(input, builder.getF32Type()) : input;
}

/// `torch.rms_norm` over the last axis as ATen's composite writes it: a
/// 16-bit input is extended to f32 (opmath), `x * rsqrt(mean(x^2) + eps)`
/// is rounded back to the input's type (`type_as`), then multiplied by the
/// weight. eps is first rounded to the input's type, as ATen keeps it.
Value decomposeRmsNorm(OpBuilder &builder, mdl::RmsNormOp norm) {
  mdl::VJPBuilder b(builder, norm.getLoc());
  Value input = norm.getInput();
  auto inputType = cast<RankedTensorType>(input.getType());
  auto elementType = cast<FloatType>(inputType.getElementType());
  bool is16Bit = elementType.getWidth() < 32;
  Value x = toOpmath(b, builder, input);
  APFloat eps(norm.getEps().convertToDouble());
  bool losesInfo;
  eps.convert(elementType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &losesInfo);
  eps.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
              &losesInfo);
  Value meanSquare =
      b.mean(b.pow(x, b.scalar(2.0, x)), {inputType.getRank() - 1},
             /*keepdim=*/true);
  Value result =
      b.mul(x, b.rsqrt(b.add(meanSquare, b.scalar(eps.convertToDouble(), x))));
  if (is16Bit)
    result = b.cast(result, elementType);
  if (Value weight = norm.getWeight())
    result = b.mul(result, weight);
  return result;
}

/// All the axes of `value`'s type: the axes of a full reduction.
SmallVector<int64_t> allAxes(Value value) {
  SmallVector<int64_t> axes(cast<RankedTensorType>(value.getType()).getRank());
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

/// The sum of all elements of `value` (itself when it is 0-d).
Value sumAll(mdl::VJPBuilder &b, Value value) {
  SmallVector<int64_t> axes = allAxes(value);
  return axes.empty() ? value : b.sum(value, axes);
}

/// `torch.nn.functional.nll_loss` with the class axis last, mean over the
/// positions whose label is not ignore_index (nan when there is none, as
/// torch's 0 / 0). The label picks its class through a one-hot mask, so
/// the gradient is the mask (scaled), with no scatter. With label
/// smoothing, torch's `cross_entropy_loss_label_smoothing` after its
/// log_softmax: `(1 - e) * nll + e / C * sum(-sum(lp, -1) over kept) /
/// kept`.
Value decomposeNllLoss(OpBuilder &builder, mdl::NllLossOp loss) {
  mdl::VJPBuilder b(builder, loss.getLoc());
  Value logProbs = toOpmath(b, builder, loss.getLogProbs());
  auto type = cast<RankedTensorType>(logProbs.getType());
  int64_t classAxis = type.getRank() - 1;
  int64_t classes = type.getShape().back();
  Value labels = loss.getLabels();
  auto labelsType = cast<RankedTensorType>(labels.getType());
  if (!labelsType.getElementType().isInteger(64))
    labels = b.cast(labels, builder.getI64Type());
  SmallVector<int64_t> column(labelsType.getShape());
  column.push_back(1);
  Value classIds = builder.create<mdl::ArangeOp>(
      loss.getLoc(), RankedTensorType::get({classes}, builder.getI64Type()));
  Value oneHot = b.compare(mdl::CmpPredicate::eq, b.reshape(labels, column),
                           classIds);
  Value zero = b.scalar(0.0, logProbs);
  Value picked = b.sum(b.where(oneHot, logProbs, zero), {classAxis});
  Value kept = b.compare(mdl::CmpPredicate::ne, labels,
                         b.scalar(double(loss.getIgnoreIndex()), labels));
  Value count = sumAll(b, b.cast(kept, type.getElementType()));
  Value result = b.div(b.neg(sumAll(b, b.where(kept, picked, zero))), count);
  double smoothing = loss.getLabelSmoothing().convertToDouble();
  if (smoothing > 0) {
    Value negSum = b.neg(b.sum(logProbs, {classAxis}));
    Value smooth = b.div(sumAll(b, b.where(kept, negSum, zero)), count);
    // One op per statement, so that the order of the ops is the source's.
    Value mixedNll = b.mul(result, b.scalar(1 - smoothing, result));
    Value mixedSmooth = b.mul(smooth, b.scalar(smoothing / classes, smooth));
    result = b.add(mixedNll, mixedSmooth);
  }
  Type resultElement = loss.getType().getElementType();
  return getElementTypeOrSelf(result.getType()) == resultElement
             ? result
             : b.cast(result, resultElement);
}

/// `log(1 + u)` for `u >= 0` to within an ulp without a log1p op
/// (Goldberg's trick): `w = 1 + u`; `u` where `w` rounds to 1, else
/// `log(w) * u / (w - 1)`. The divisor is kept nonzero in both branches,
/// so neither the value nor the gradient of the unused one is nan.
Value log1p(mdl::VJPBuilder &b, Value u) {
  Value one = b.scalar(1.0, u);
  Value w = b.add(one, u);
  Value exact = b.compare(mdl::CmpPredicate::eq, w, one);
  Value divisor = b.where(exact, one, b.sub(w, one));
  return b.where(exact, u, b.div(b.mul(b.log(w), u), divisor));
}

/// `torch.nn.functional.binary_cross_entropy_with_logits`, mean reduction,
/// as ATen writes it: `(1 - t) * x - w * log_sigmoid(x)` with `w =
/// (pos_weight - 1) * t + 1`, and `log_sigmoid(x) = min(x, 0) -
/// log1p(exp(-|x|))`, in f32 for 16-bit inputs; the mean in the input's
/// type.
Value decomposeBceWithLogits(OpBuilder &builder, mdl::BceWithLogitsOp loss) {
  Location loc = loss.getLoc();
  mdl::VJPBuilder b(builder, loc);
  Value x = toOpmath(b, builder, loss.getInput());
  Value target = toOpmath(b, builder, loss.getTarget());
  Value zero = b.scalar(0.0, x);
  Value negative = b.compare(mdl::CmpPredicate::lt, x, zero);
  Value minWithZero = b.where(negative, x, zero);
  Value tail = b.exp(b.neg(builder.create<mdl::AbsOp>(loc, x)));
  Value logSigmoid = b.sub(minWithZero, log1p(b, tail));
  if (Value posWeight = loss.getPosWeight()) {
    Value one = b.scalar(1.0, x);
    Value weight = b.add(
        b.mul(b.sub(toOpmath(b, builder, posWeight), one), target), one);
    logSigmoid = b.mul(logSigmoid, weight);
  }
  Value elementwise =
      b.sub(b.mul(b.sub(b.scalar(1.0, target), target), x), logSigmoid);
  SmallVector<int64_t> axes = allAxes(elementwise);
  Value mean = axes.empty() ? elementwise : b.mean(elementwise, axes);
  Type resultElement = loss.getType().getElementType();
  return getElementTypeOrSelf(mean.getType()) == resultElement
             ? mean
             : b.cast(mean, resultElement);
}

/// `torch.nn.functional.conv_transpose2d`: the gradient of a conv2d with
/// respect to its input (mdl.conv2d_grad_input, whose result type carries
/// the output padding), plus the bias over the channel axis.
Value decomposeConvTranspose2d(OpBuilder &builder,
                               mdl::ConvTranspose2dOp conv) {
  mdl::VJPBuilder b(builder, conv.getLoc());
  Value result = builder.create<mdl::Conv2dGradInputOp>(
      conv.getLoc(), conv.getType(), conv.getInput(), conv.getWeight(),
      conv.getStrideAttr(), conv.getPaddingAttr(), conv.getDilationAttr(),
      conv.getGroupsAttr());
  if (Value bias = conv.getBias()) {
    int64_t channels = conv.getType().getDimSize(1);
    result = b.add(result, b.reshape(bias, {1, channels, 1, 1}));
  }
  return result;
}

/// The expansion of a composite op (isComposite).
Value decomposeComposite(OpBuilder &builder, Operation *op) {
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](mdl::AttentionOp attention) {
        return decomposeAttention(builder, attention);
      })
      .Case([&](mdl::RmsNormOp norm) { return decomposeRmsNorm(builder, norm); })
      .Case([&](mdl::ConvTranspose2dOp conv) {
        return decomposeConvTranspose2d(builder, conv);
      })
      .Case([&](mdl::NllLossOp loss) { return decomposeNllLoss(builder, loss); })
      .Case([&](mdl::BceWithLogitsOp loss) {
        return decomposeBceWithLogits(builder, loss);
      })
      .Default([](Operation *) -> Value {
        llvm_unreachable("isComposite and decomposeComposite disagree");
      });
}

/// The buffer that `read` (an operand of `user`, which updates it) reads,
/// or an error: training stores the update there.
FailureOr<FlatSymbolRefAttr> updatedBuffer(Operation *user, Value read,
                                           StringRef what) {
  auto load = read.getDefiningOp<mdl::LoadOp>();
  auto param = load ? SymbolTable::lookupNearestSymbolFrom<mdl::ParamOp>(
                          user, load.getNameAttr())
                    : mdl::ParamOp();
  if (!param || !param.getBuffer())
    return user->emitOpError()
           << what << " must be read from a buffer (`buffer` in a block), "
           << "where training stores its update";
  return load.getNameAttr();
}

/// Stores `value` to the buffer `read` reads (updatedBuffer); `updated`
/// holds the buffers the function already stores to: a second update of
/// one buffer in one step is refused (PyTorch would apply both, one after
/// the other).
LogicalResult storeUpdate(OpBuilder &builder, Operation *user, Value read,
                          Value value, StringRef what,
                          llvm::StringSet<> &updated) {
  FailureOr<FlatSymbolRefAttr> buffer = updatedBuffer(user, read, what);
  if (failed(buffer))
    return failure();
  if (!updated.insert(buffer->getValue()).second)
    return user->emitOpError()
           << "updates the buffer " << *buffer
           << " a second time in one step; give each update its own buffer "
              "(a batch norm: `as` another scope)";
  builder.create<mdl::StoreOp>(user->getLoc(), value, *buffer);
  return success();
}

/// `value` as a 0-d tensor of `elementType`: an f64 constant cast to it, so
/// that it is exact under --widen-f64 (which makes the cast an identity)
/// and rounded once otherwise.
Value castConstant(OpBuilder &builder, Location loc, double value,
                   Type elementType) {
  Value c = builder.create<mdl::ConstantOp>(
      loc, RankedTensorType::get({}, builder.getF64Type()), value);
  if (elementType.isF64())
    return c;
  return mdl::VJPBuilder(builder, loc).cast(c, elementType);
}

/// Training's update of the running statistics of `norm` from the batch
/// `mean` and the sum of squared deviations `squares` of n values per
/// channel: `momentum * batch + (1 - momentum) * running`, with the
/// unbiased variance (squares / (n - 1)), and num_batches_tracked + 1
/// (storeUpdate, with `updated`).
LogicalResult storeRunningStatistics(OpBuilder &builder, mdl::BatchNormOp norm,
                                     Value mean, Value squares, int64_t n,
                                     llvm::StringSet<> &updated) {
  Location loc = norm.getLoc();
  mdl::VJPBuilder b(builder, loc);
  Type elementType = getElementTypeOrSelf(mean.getType());
  auto constant = [&](double value) {
    return castConstant(builder, loc, value, elementType);
  };
  double momentum = norm.getMomentum().convertToDouble();
  auto blend = [&](Value running, Value batch) {
    Value fresh = b.mul(constant(momentum), batch);
    Value kept = b.mul(constant(1.0 - momentum), running);
    return b.add(fresh, kept);
  };
  SmallVector<std::pair<Value, Value>> stores = {
      {norm.getRunningMean(), blend(norm.getRunningMean(), mean)},
      {norm.getRunningVar(),
       blend(norm.getRunningVar(), b.div(squares, constant(double(n - 1))))}};
  if (Value tracked = norm.getNumBatchesTracked())
    stores.push_back({tracked, b.add(tracked, b.scalar(1.0, tracked))});
  StringRef names[] = {"running_mean", "running_var", "num_batches_tracked"};
  for (auto [i, store] : llvm::enumerate(stores))
    if (failed(storeUpdate(builder, norm, store.first, store.second, names[i],
                           updated)))
      return failure();
  return success();
}

/// `torch.nn.functional.batch_norm` as ATen's CPU kernel computes it. In
/// training (a fwd_bwd function): the batch mean and biased variance over
/// every axis but the channel axis normalise the input, `invstd = rsqrt(var
/// + eps)`, and the running statistics are updated
/// (storeRunningStatistics). Elsewhere the running statistics normalise and
/// nothing is stored.
FailureOr<Value> decomposeBatchNorm(mdl::BatchNormOp norm, bool training,
                                    llvm::StringSet<> &updated) {
  OpBuilder builder(norm);
  mdl::VJPBuilder b(builder, norm.getLoc());
  Value x = norm.getInput();
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  int64_t channels = type.getDimSize(1);
  SmallVector<int64_t> axes, perChannel(rank, 1);
  perChannel[1] = channels;
  for (int64_t axis = 0; axis < rank; ++axis)
    if (axis != 1)
      axes.push_back(axis);
  auto broadcastable = [&](Value v) { return b.reshape(v, perChannel); };
  Value eps = castConstant(builder, norm.getLoc(),
                           norm.getEps().convertToDouble(),
                           type.getElementType());
  Value centered, invstd;
  if (!training) {
    centered = b.sub(x, broadcastable(norm.getRunningMean()));
    invstd = b.rsqrt(b.add(norm.getRunningVar(), eps));
  } else {
    int64_t n = type.getNumElements() / channels;
    if (n <= 1)
      return norm.emitOpError()
             << "needs more than one value per channel in training (as "
                "PyTorch), got an input of shape "
             << type;
    Value mean = b.mean(x, axes);
    centered = b.sub(x, broadcastable(mean));
    Value squares = b.sum(b.mul(centered, centered), axes);
    Value var = b.div(squares, castConstant(builder, norm.getLoc(), double(n),
                                            type.getElementType()));
    invstd = b.rsqrt(b.add(var, eps));
    if (failed(storeRunningStatistics(builder, norm, mean, squares, n,
                                      updated)))
      return failure();
  }
  Value normalized = b.mul(centered, broadcastable(invstd));
  Value scaled = b.mul(normalized, broadcastable(norm.getWeight()));
  return b.add(scaled, broadcastable(norm.getBias()));
}

struct MdlDecomposePass : modelc::impl::MdlDecomposeBase<MdlDecomposePass> {
  void runOnOperation() override;

private:
  /// Rewrites the dropouts of `func`; active (masks) in training only.
  LogicalResult decomposeDropouts(func::FuncOp func);

  /// Expands the batch norms and buffer updates of `func`: batch
  /// statistics and stores to the buffers in training only.
  LogicalResult decomposeStateUpdates(func::FuncOp func);

  /// The next dropout mask id; ids are unique in the module.
  int64_t nextDropoutId = 0;
};

} // namespace

LogicalResult MdlDecomposePass::decomposeStateUpdates(func::FuncOp func) {
  auto kind = func->getAttrOfType<StringAttr>(kFunctionAttrName);
  bool training = kind && kind.getValue() == "fwd_bwd";
  llvm::StringSet<> updated;
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isa<mdl::BatchNormOp, mdl::UpdateBufferOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    if (auto norm = dyn_cast<mdl::BatchNormOp>(op)) {
      FailureOr<Value> result = decomposeBatchNorm(norm, training, updated);
      if (failed(result))
        return failure();
      norm.replaceAllUsesWith(*result);
    } else if (training) {
      auto update = cast<mdl::UpdateBufferOp>(op);
      OpBuilder builder(update);
      if (failed(storeUpdate(builder, update, update.getBuffer(),
                             update.getValue(), "the buffer operand", updated)))
        return failure();
    }
    op->erase();
  }
  return success();
}

LogicalResult MdlDecomposePass::decomposeDropouts(func::FuncOp func) {
  // The dropouts and the attentions that drop, in program order: the ids
  // follow it, whichever kind each site is.
  SmallVector<Operation *> sites;
  func.walk([&](Operation *op) {
    if (isa<mdl::DropoutOp>(op))
      sites.push_back(op);
    if (auto attention = dyn_cast<mdl::AttentionForwardOp>(op))
      if (attention.getDropout().convertToDouble() != 0.0 &&
          !attention.getSeed())
        sites.push_back(op);
  });
  if (sites.empty())
    return success();
  auto kind = func->getAttrOfType<StringAttr>(kFunctionAttrName);
  bool training = kind && kind.getValue() == "fwd_bwd";
  auto isActive = [](Operation *site) {
    auto dropout = dyn_cast<mdl::DropoutOp>(site);
    return !dropout || dropout.getP().convertToDouble() != 0.0;
  };
  // The seed and the micro-batch counter are read once, at the top, where
  // nothing has stored to them yet.
  Value seed, counter;
  if (training && llvm::any_of(sites, isActive)) {
    auto entry = func->getAttrOfType<StringAttr>(kEntryAttrName);
    if (!entry)
      return func.emitError("a fwd_bwd function needs '")
             << kEntryAttrName << "' to find its seed and rng_counter";
    OpBuilder builder = OpBuilder::atBlockBegin(&func.front());
    auto module = func->getParentOfType<ModuleOp>();
    auto loadHyper = [&](StringRef key) -> Value {
      std::string symbol = getBufferSymbol(entry.getValue(), "hyper", key);
      if (!SymbolTable::lookupSymbolIn(module, symbol)) {
        func.emitError("dropout needs the hyper buffer @\"") << symbol << "\"";
        return {};
      }
      return builder.create<mdl::LoadOp>(
          func.getLoc(), RankedTensorType::get({}, builder.getF64Type()),
          symbol);
    };
    if (!(seed = loadHyper("seed")) || !(counter = loadHyper("rng_counter")))
      return failure();
  }
  for (Operation *site : sites) {
    // Attention drops its probabilities inside the fused op, from the same
    // stream as a mask of the scores' shape would.
    if (auto attention = dyn_cast<mdl::AttentionForwardOp>(site)) {
      if (!training) {
        attention.setDropout(APFloat(0.0));
        continue;
      }
      attention.getSeedMutable().assign(seed);
      attention.getCounterMutable().assign(counter);
      attention.setDropoutId(nextDropoutId++);
      continue;
    }
    auto dropout = cast<mdl::DropoutOp>(site);
    Value result = dropout.getInput();
    if (training && isActive(dropout)) {
      OpBuilder builder(dropout);
      Value mask = builder.create<mdl::DropoutMaskOp>(
          dropout.getLoc(), dropout.getType(), seed, counter,
          dropout.getPAttr(), builder.getI64IntegerAttr(nextDropoutId++));
      result = builder.create<mdl::MulOp>(dropout.getLoc(), dropout.getInput(),
                                          mask);
    }
    dropout.replaceAllUsesWith(result);
    dropout.erase();
  }
  return success();
}

void MdlDecomposePass::runOnOperation() {
  ModuleOp module = getOperation();
  // Ids continue after any mask already in the module, so they stay unique.
  nextDropoutId = 0;
  module.walk([&](Operation *op) {
    if (auto mask = dyn_cast<mdl::DropoutMaskOp>(op))
      nextDropoutId = std::max(nextDropoutId, mask.getId() + 1);
    if (auto attention = dyn_cast<mdl::AttentionForwardOp>(op))
      if (attention.getSeed())
        nextDropoutId = std::max(nextDropoutId, attention.getDropoutId() + 1);
  });
  // Only program functions: the mdl.train and mdl.infer bodies are kept as
  // declarations and are not lowered.
  for (auto func : module.getOps<func::FuncOp>()) {
    SmallVector<Operation *> composites;
    func.walk([&](Operation *op) {
      if (isComposite(op) && !isa<mdl::BatchNormOp>(op))
        composites.push_back(op);
    });
    for (Operation *op : composites) {
      OpBuilder builder(op);
      op->replaceAllUsesWith(ValueRange{decomposeComposite(builder, op)});
      op->erase();
    }
    if (failed(decomposeStateUpdates(func)) || failed(decomposeDropouts(func)))
      return signalPassFailure();
  }
}
