// Names and builders shared by the passes that build a program's functions:
// the buffer symbols and function attributes of docs/pipeline.md, stage 1.
#ifndef MODELC_PASSES_ENTRYUTILS_H
#define MODELC_PASSES_ENTRYUTILS_H

#include "dialects/mdl/MdlOps.h"
#include "schema/Optimizers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace modelc {

/// The attributes that mark a program function: the entry it belongs to,
/// its kind (`fwd_bwd`, `update`, `eval`, `infer`) and, on `fwd_bwd` until
/// --mdl-autodiff runs, what to differentiate.
constexpr llvm::StringLiteral kEntryAttrName = "mdl.entry";
constexpr llvm::StringLiteral kFunctionAttrName = "mdl.function";
constexpr llvm::StringLiteral kAutodiffAttrName = "mdl.autodiff";

/// ZeRO-1 (`parallel { zero = 1 }`, docs/runtime/zero.md). The entry's
/// `update` names the parameters it prepares, in order, with
/// `mdl.zero_params`; each `update_chunk` function names its window
/// buffers (a chunk of a parameter, of its gradient and of each state
/// kind, role `window`) with `mdl.window`, in that order.
constexpr llvm::StringLiteral kZeroParamsAttrName = "mdl.zero_params";
constexpr llvm::StringLiteral kWindowAttrName = "mdl.window";

/// Whether `train` shards its optimizer state (ZeRO-1).
inline bool usesZero(mlir::mdl::TrainOp train) {
  auto parallel = train.getSettings().getAs<mlir::DictionaryAttr>("parallel");
  auto zero = parallel ? parallel.getAs<mlir::IntegerAttr>("zero")
                       : mlir::IntegerAttr();
  return zero && zero.getInt() == 1;
}

/// The hyperparameter keys of a train entry, in declaration order: the step
/// counters, the optimizers' hypers (schema/Optimizers.def), then the
/// schedule's, clipping's, dropout's and loss scaling's. Each is the buffer
/// `@"T:hyper:KEY"`, which the runtime fills from the settings (or `--set`)
/// and its step counters before each call. docs/pipeline.md says what each
/// means.
inline llvm::ArrayRef<llvm::StringRef> getHyperKeys() {
  static const llvm::SmallVector<llvm::StringRef> keys = [] {
    llvm::SmallVector<llvm::StringRef> k = {"step", "total_steps"};
    for (const modelc::optimizers::HyperDef &hyper :
         modelc::optimizers::kHypers)
      k.push_back(hyper.key);
    k.append({"grad_clip", "warmup", "min_lr", "every", "gamma", "seed",
              "rng_counter", "optimizer_step", "loss_scale"});
    return k;
  }();
  return keys;
}

/// Whether `train` computes in f16 and so trains with dynamic loss scaling
/// (its fwd_bwd seeds the backward with the `loss_scale` hyper, its update
/// unscales, and skips on an inf/NaN gradient, storing `out:found_inf`).
inline bool usesLossScaling(mlir::mdl::TrainOp train) {
  auto precision = train.getSettings().getAs<mlir::StringAttr>("precision");
  return precision && precision.getValue() == "f16";
}

/// `"ENTRY:KIND:KEY"`, e.g. `"fashion:in:image"` or `"fashion:state:m.w"`.
inline std::string getBufferSymbol(llvm::StringRef entry, llvm::StringRef kind,
                                   llvm::StringRef key) {
  return (entry + ":" + kind + ":" + key).str();
}

/// `"grad:PARAM"`, the gradient buffer of a parameter.
inline std::string getGradSymbol(llvm::StringRef param) {
  return ("grad:" + param).str();
}

/// `"ENTRY.FUNCTION"`, e.g. `"fashion.fwd_bwd"`.
inline std::string getFunctionSymbol(llvm::StringRef entry,
                                     llvm::StringRef function) {
  return (entry + "." + function).str();
}

/// Creates `mdl.buffer @symbol : type {role, phase, key, entry}` at the
/// builder's insertion point.
inline mlir::mdl::BufferOp
createBuffer(mlir::OpBuilder &builder, mlir::Location loc,
             llvm::StringRef symbol, mlir::Type type, llvm::StringRef role,
             llvm::StringRef phase, llvm::StringRef key,
             llvm::StringRef entry) {
  return builder.create<mlir::mdl::BufferOp>(
      loc, builder.getStringAttr(symbol), mlir::TypeAttr::get(type),
      builder.getStringAttr(role), builder.getStringAttr(phase),
      builder.getStringAttr(key), builder.getStringAttr(entry));
}

/// Creates an empty `func.func @"ENTRY.FUNCTION"() -> ()` marked with
/// `mdl.entry` and `mdl.function`, with its entry block, at the builder's
/// insertion point.
inline mlir::func::FuncOp createEntryFunction(mlir::OpBuilder &builder,
                                              mlir::Location loc,
                                              llvm::StringRef entry,
                                              llvm::StringRef function) {
  auto func = builder.create<mlir::func::FuncOp>(
      loc, getFunctionSymbol(entry, function), builder.getFunctionType({}, {}));
  func->setAttr(kEntryAttrName, builder.getStringAttr(entry));
  func->setAttr(kFunctionAttrName, builder.getStringAttr(function));
  func.addEntryBlock();
  return func;
}

/// The function marked `{mdl.entry = entry, mdl.function = function}` in
/// `module`, or null.
inline mlir::func::FuncOp lookupEntryFunction(mlir::ModuleOp module,
                                              llvm::StringRef entry,
                                              llvm::StringRef function) {
  for (auto func : module.getOps<mlir::func::FuncOp>()) {
    auto entryAttr = func->getAttrOfType<mlir::StringAttr>(kEntryAttrName);
    auto functionAttr =
        func->getAttrOfType<mlir::StringAttr>(kFunctionAttrName);
    if (entryAttr && functionAttr && entryAttr.getValue() == entry &&
        functionAttr.getValue() == function)
      return func;
  }
  return {};
}

} // namespace modelc

#endif // MODELC_PASSES_ENTRYUTILS_H
