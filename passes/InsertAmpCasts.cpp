// --mdl-insert-amp-casts: automatic mixed precision, as torch.autocast. In
// the fwd_bwd and eval functions of a train entry whose `precision` is bf16
// or f16, GEMM-shaped ops take 16-bit operands (f32 parameters included,
// cast from their f32 masters), ops that need range or accuracy run in f32,
// and the rest run in the widest type of their inputs. It runs before
// --mdl-autodiff, so the gradients flow back through the casts: a
// parameter's gradient is cast back to f32 and the master, its gradient and
// the optimizer state stay f32. docs/passes/amp.md has the op lists beside
// torch.autocast's.
#include "passes/EntryUtils.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace modelc {
#define GEN_PASS_DEF_MDLINSERTAMPCASTS
#include "passes/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace mlir::mdl;

namespace {

/// What autocast does with an op.
enum class AmpClass {
  /// Runs in the 16-bit type: every f32 float operand cast to it (torch's
  /// "lower precision" list).
  Lower,
  /// Runs in f32: every 16-bit float operand cast to f32 (torch's "float32"
  /// list).
  F32,
  /// Runs in the widest float type of its operands (torch's promotion).
  Promote,
  /// Left as written: explicit casts, and ops without float operands whose
  /// results are sources (parameters, loads, constants, masks).
  Keep,
  /// scaled_dot_product_attention: 16-bit query, key, value and output,
  /// softmax statistics in f32.
  Attention,
  /// On torch's float32 list, but its lowering reads 16-bit operands
  /// extended to f32 exactly and computes in f32 what torch computes on an
  /// f32 copy: cross_entropy keeps 16-bit logits (no f32 copy of them; its
  /// loss is f32, its gradient rounded once to the logits' type, as torch's
  /// f32 gradient is when it flows back through the cast).
  F32Inside,
};

AmpClass classify(Operation *op) {
  // conv2d_grad_input before autodiff is conv_transpose2d's expansion, on
  // torch.autocast's lower-precision list as conv_transpose2d.
  if (isa<MatmulOp, Conv2dOp, Conv2dGradInputOp>(op))
    return AmpClass::Lower;
  // Attention (SDPA) is on the lower-precision list too; its f64 seed and
  // counter and its f32 log-sum-exp keep their types (rewriteAttention).
  if (isa<AttentionForwardOp>(op))
    return AmpClass::Attention;
  if (isa<CrossEntropyOp>(op))
    return AmpClass::F32Inside;
  if (isa<ExpOp, LogOp, PowOp, RsqrtOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp,
          MseLossOp, SumOp, MeanOp, AccuracyOp, LstmScanOp, GruScanOp>(op))
    return AmpClass::F32;
  if (isa<CastOp, ConstantOp, ParamRefOp, LoadOp, StoreOp, DropoutMaskOp,
          ArangeOp>(op))
    return AmpClass::Keep;
  return AmpClass::Promote;
}

bool is16Bit(Type type) { return type.isBF16() || type.isF16(); }

/// The element type of a float tensor, else null.
FloatType getFloatElementType(Value value) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  return tensor ? dyn_cast<FloatType>(tensor.getElementType()) : FloatType();
}

/// torch's promotion of two float types: the wider, and f32 for f16 with
/// bf16.
FloatType promote(FloatType a, FloatType b) {
  if (!a || a == b)
    return b;
  if (!b)
    return a;
  if (a.getWidth() != b.getWidth())
    return a.getWidth() > b.getWidth() ? a : b;
  return Float32Type::get(a.getContext());
}

class AmpRewriter {
public:
  AmpRewriter(func::FuncOp func, FloatType lowType)
      : func(func), lowType(lowType),
        f32(Float32Type::get(func.getContext())) {}

  void run() {
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (op != func.getOperation())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto store = dyn_cast<StoreOp>(op)) {
        castStoredValue(store);
        continue;
      }
      switch (classify(op)) {
      case AmpClass::Lower:
        rewriteLower(op);
        break;
      case AmpClass::F32:
        castOperands(op, [&](FloatType type) {
          return is16Bit(type) ? FloatType(f32) : type;
        });
        break;
      case AmpClass::Promote:
        rewritePromote(op);
        break;
      case AmpClass::Keep:
      case AmpClass::F32Inside:
        break;
      case AmpClass::Attention:
        rewriteAttention(cast<AttentionForwardOp>(op));
        break;
      }
    }
  }

private:
  /// The float type `value` had before this pass.
  FloatType originalType(Value value) {
    if (FloatType type = original.lookup(value))
      return type;
    return getFloatElementType(value);
  }

  /// The float type the op's float operands had before this pass (they all
  /// had one, which its verifier checked), or null.
  FloatType originalOperandType(Operation *op) {
    for (Value operand : op->getOperands())
      if (FloatType type = originalType(operand))
        return type;
    return {};
  }

  Value castTo(OpBuilder &builder, Value value, FloatType type) {
    if (getFloatElementType(value) == type)
      return value;
    // A transpose is cast before it is transposed (the same values): the
    // GEMM that takes it then reads the 16-bit tensor transposed instead
    // of a copy (nn.linear's `x @ transpose(w)` casts w once, no transpose
    // kernel), and the gradient flows back the same way.
    if (auto transpose = value.getDefiningOp<TransposeOp>())
      return builder.create<TransposeOp>(
          transpose.getLoc(), castTo(builder, transpose.getInput(), type),
          transpose.getPerm());
    // A splat constant is made again in the new type (an f32 literal cast
    // to bf16 rounds once, as the cast would).
    if (auto constant = value.getDefiningOp<ConstantOp>())
      if (auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue()))
        if (dense.isSplat()) {
          auto tensor = cast<RankedTensorType>(value.getType());
          return builder.create<ConstantOp>(
              value.getLoc(), tensor.clone(type),
              dense.getSplatValue<APFloat>().convertToDouble());
        }
    return builder.create<CastOp>(value.getLoc(), value, type);
  }

  /// Casts each float operand of `op` to `target(its type)`.
  void castOperands(Operation *op,
                    function_ref<FloatType(FloatType)> target) {
    OpBuilder builder(op);
    for (OpOperand &operand : op->getOpOperands()) {
      FloatType type = getFloatElementType(operand.get());
      if (!type)
        continue;
      FloatType wanted = target(type);
      if (wanted != type)
        operand.set(castTo(builder, operand.get(), wanted));
    }
  }

  /// Gives the results that follow the operands' type (those of the
  /// operands' original type) the element type `type`.
  void retypeResults(Operation *op, FloatType from, FloatType type) {
    for (Value result : op->getResults()) {
      if (getFloatElementType(result) != from || from == type)
        continue;
      original[result] = from;
      auto tensor = cast<RankedTensorType>(result.getType());
      result.setType(tensor.clone(type));
    }
  }

  void rewriteLower(Operation *op) {
    FloatType from = originalOperandType(op);
    // torch.autocast leaves f64 alone; an op with one keeps its types.
    if (!from || llvm::any_of(op->getOperands(), [](Value operand) {
          FloatType type = getFloatElementType(operand);
          return type && type.isF64();
        })) {
      rewritePromote(op);
      return;
    }
    castOperands(op, [&](FloatType) { return lowType; });
    retypeResults(op, from, lowType);
  }

  /// Query, key and value in the 16-bit type, and so the output; f64
  /// attention is left alone, as torch.autocast leaves f64.
  void rewriteAttention(AttentionForwardOp attention) {
    FloatType from = originalType(attention.getQuery());
    if (!from || from.isF64())
      return;
    OpBuilder builder(attention);
    for (OpOperand *operand :
         {&attention.getQueryMutable(), &attention.getKeyMutable(),
          &attention.getValueMutable()})
      operand->set(castTo(builder, operand->get(), lowType));
    Value result = attention.getResult();
    if (from != lowType) {
      original[result] = from;
      result.setType(cast<RankedTensorType>(result.getType()).clone(lowType));
    }
  }

  /// A 0-d operand, or a dropout mask, takes part in promotion weakly, as
  /// a Python scalar does in PyTorch: a bf16 tensor times 0.5 is bf16.
  static bool isWeak(Value value) {
    if (value.getDefiningOp<DropoutMaskOp>())
      return true;
    auto tensor = dyn_cast<RankedTensorType>(value.getType());
    return tensor && tensor.getRank() == 0;
  }

  /// Whether `value` is a parameter, read as it is or through views.
  static bool isParameter(Value value) {
    while (Operation *producer = value.getDefiningOp()) {
      if (isa<ParamRefOp>(producer))
        return true;
      if (!isa<ReshapeOp, TransposeOp, BroadcastToOp>(producer))
        return false;
      value = producer->getOperand(0);
    }
    return false;
  }

  /// The bias add of a linear layer (`x @ transpose(w) + b`, as the stdlib
  /// writes nn.linear): 16-bit like the matmul, as F.linear is one op in
  /// torch's lower-precision list, bias included.
  bool isLinearBias(Operation *op) {
    if (!isa<AddOp>(op))
      return false;
    auto isLowered = [&](Value value) {
      return value.getDefiningOp<MatmulOp>() &&
             getFloatElementType(value) == lowType;
    };
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    return (isLowered(lhs) && isParameter(rhs)) ||
           (isLowered(rhs) && isParameter(lhs));
  }

  void rewritePromote(Operation *op) {
    FloatType from = originalOperandType(op);
    if (!from)
      return;
    if (isLinearBias(op)) {
      castOperands(op, [&](FloatType) { return lowType; });
      retypeResults(op, from, lowType);
      return;
    }
    FloatType strong, any;
    bool weakDiffers = false;
    for (Value operand : op->getOperands())
      if (FloatType type = getFloatElementType(operand)) {
        any = promote(any, type);
        if (!isWeak(operand))
          strong = promote(strong, type);
      }
    FloatType type = strong ? strong : any;
    for (Value operand : op->getOperands())
      if (FloatType operandType = getFloatElementType(operand))
        weakDiffers |= isWeak(operand) && operandType != type;
    if (weakDiffers && is16Bit(type)) {
      // PyTorch computes a 16-bit op with a scalar in f32 (its opmath
      // type, the scalar unrounded) and rounds the result once: so here.
      castOperands(op, [&](FloatType) { return FloatType(f32); });
      retypeResults(op, from, f32);
      castResultsAfter(op, type);
      return;
    }
    castOperands(op, [&](FloatType) { return type; });
    retypeResults(op, from, type);
  }

  /// Casts the float results of `op` to `type` for all of their users.
  void castResultsAfter(Operation *op, FloatType type) {
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    for (Value result : op->getResults()) {
      FloatType resultType = getFloatElementType(result);
      if (!resultType || resultType == type)
        continue;
      auto cast = builder.create<CastOp>(op->getLoc(), result, type);
      original[cast.getResult()] = original.lookup(result)
                                       ? original.lookup(result)
                                       : resultType;
      result.replaceAllUsesExcept(cast.getResult(), cast);
    }
  }

  /// A buffer keeps its declared type: a value computed in another one is
  /// cast to it before it is stored.
  void castStoredValue(StoreOp store) {
    auto module = store->getParentOfType<ModuleOp>();
    auto buffer = module.lookupSymbol<BufferOp>(store.getNameAttr());
    if (!buffer)
      return;
    auto bufferType =
        dyn_cast<FloatType>(cast<RankedTensorType>(buffer.getType())
                                .getElementType());
    FloatType valueType = getFloatElementType(store.getValue());
    if (!bufferType || !valueType || bufferType == valueType)
      return;
    OpBuilder builder(store);
    store.getValueMutable().assign(
        builder.create<CastOp>(store.getLoc(), store.getValue(), bufferType));
  }

  func::FuncOp func;
  FloatType lowType;
  FloatType f32;
  /// The float type of each value this pass retyped, before it did.
  DenseMap<Value, FloatType> original;
};

struct InsertAmpCastsPass
    : modelc::impl::MdlInsertAmpCastsBase<InsertAmpCastsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto train : module.getOps<TrainOp>()) {
      auto precision = train.getSettings().getAs<StringAttr>("precision");
      if (!precision || precision.getValue() == "f32")
        continue;
      FloatType lowType;
      if (precision.getValue() == "bf16")
        lowType = BFloat16Type::get(&getContext());
      else if (precision.getValue() == "f16")
        lowType = Float16Type::get(&getContext());
      else {
        train.emitError("unknown precision '") << precision.getValue() << "'";
        return signalPassFailure();
      }
      for (StringRef function : {"fwd_bwd", "eval"})
        if (func::FuncOp func =
                modelc::lookupEntryFunction(module, train.getSymName(),
                                            function))
          AmpRewriter(func, lowType).run();
    }
  }
};

} // namespace
