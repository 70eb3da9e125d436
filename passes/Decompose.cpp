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
  return isa<mdl::AttentionOp, mdl::RmsNormOp>(op);
}

namespace {

/// `torch.nn.functional.scaled_dot_product_attention` as its documentation
/// writes it: `softmax(q @ k^T * scale + mask, -1) @ v`, where the causal
/// mask is -inf above the diagonal (`ones(t, s).tril(0)`: key j is visible
/// to query i when j <= i).
Value decomposeAttention(OpBuilder &builder, mdl::AttentionOp attention) {
  Location loc = attention.getLoc();
  auto queryType = cast<RankedTensorType>(attention.getQuery().getType());
  int64_t rank = queryType.getRank();
  SmallVector<int64_t> swapLastTwo(rank);
  std::iota(swapLastTwo.begin(), swapLastTwo.end(), 0);
  std::swap(swapLastTwo[rank - 2], swapLastTwo[rank - 1]);
  Value keyT =
      builder.create<mdl::TransposeOp>(loc, attention.getKey(), swapLastTwo);
  Value scores = builder.create<mdl::MatmulOp>(loc, attention.getQuery(), keyT);
  auto scalarType = RankedTensorType::get({}, queryType.getElementType());
  Value scale = builder.create<mdl::ConstantOp>(
      loc, scalarType, attention.getScale().convertToDouble());
  scores = builder.create<mdl::MulOp>(loc, scores, scale);
  if (attention.getCausal()) {
    auto scoresType = cast<RankedTensorType>(scores.getType());
    int64_t queries = scoresType.getDimSize(rank - 2);
    int64_t keys = scoresType.getDimSize(rank - 1);
    // [t, 1] against [1, s] broadcasts to the [t, s] mask, which broadcasts
    // against the scores' batch and head axes in the where. Positions are
    // i32, or i64 when one passes 2^31.
    Type position = std::max(queries, keys) > INT32_MAX ? builder.getI64Type()
                                                        : builder.getI32Type();
    auto arange = [&](int64_t size) -> Value {
      return builder.create<mdl::ArangeOp>(
          loc, RankedTensorType::get({size}, position));
    };
    Value rows = builder.create<mdl::ReshapeOp>(loc, arange(queries),
                                                ArrayRef<int64_t>{queries, 1});
    Value columns = builder.create<mdl::ReshapeOp>(loc, arange(keys),
                                                   ArrayRef<int64_t>{1, keys});
    Value visible = builder.create<mdl::CompareOp>(loc, mdl::CmpPredicate::le,
                                                   columns, rows);
    Value minusInf = builder.create<mdl::ConstantOp>(
        loc, scalarType, -std::numeric_limits<double>::infinity());
    scores = builder.create<mdl::WhereOp>(loc, visible, scores, minusInf);
  }
  auto softmax = builder.create<mdl::SoftmaxOp>(loc, scores, rank - 1);
  softmax->setAttr(kAttentionSoftmaxAttrName, builder.getUnitAttr());
  Value probs = softmax;
  return builder.create<mdl::MatmulOp>(loc, probs, attention.getValue());
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
  Value x = is16Bit ? b.cast(input, builder.getF32Type()) : input;
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

/// The expansion of a composite op (isComposite).
Value decomposeComposite(OpBuilder &builder, Operation *op) {
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](mdl::AttentionOp attention) {
        return decomposeAttention(builder, attention);
      })
      .Case([&](mdl::RmsNormOp norm) { return decomposeRmsNorm(builder, norm); })
      .Default([](Operation *) -> Value {
        llvm_unreachable("isComposite and decomposeComposite disagree");
      });
}

struct MdlDecomposePass : modelc::impl::MdlDecomposeBase<MdlDecomposePass> {
  void runOnOperation() override;

private:
  /// Rewrites the dropouts of `func`; active (masks) in training only.
  LogicalResult decomposeDropouts(func::FuncOp func);

  /// The next dropout mask id; ids are unique in the module.
  int64_t nextDropoutId = 0;
};

} // namespace

LogicalResult MdlDecomposePass::decomposeDropouts(func::FuncOp func) {
  SmallVector<mdl::DropoutOp> dropouts;
  func.walk([&](mdl::DropoutOp dropout) { dropouts.push_back(dropout); });
  if (dropouts.empty())
    return success();
  auto kind = func->getAttrOfType<StringAttr>(kFunctionAttrName);
  bool training = kind && kind.getValue() == "fwd_bwd";
  // The seed and the micro-batch counter are read once, at the top, where
  // nothing has stored to them yet.
  Value seed, counter;
  auto isActive = [](mdl::DropoutOp dropout) {
    return dropout.getP().convertToDouble() != 0.0;
  };
  if (training && llvm::any_of(dropouts, isActive)) {
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
  for (mdl::DropoutOp dropout : dropouts) {
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
  module.walk([&](mdl::DropoutMaskOp mask) {
    nextDropoutId = std::max(nextDropoutId, mask.getId() + 1);
  });
  // Only program functions: the mdl.train and mdl.infer bodies are kept as
  // declarations and are not lowered.
  for (auto func : module.getOps<func::FuncOp>()) {
    SmallVector<Operation *> composites;
    func.walk([&](Operation *op) {
      if (isComposite(op))
        composites.push_back(op);
    });
    for (Operation *op : composites) {
      OpBuilder builder(op);
      op->replaceAllUsesWith(ValueRange{decomposeComposite(builder, op)});
      op->erase();
    }
    if (failed(decomposeDropouts(func)))
      return signalPassFailure();
  }
}
