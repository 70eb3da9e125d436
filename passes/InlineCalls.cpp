// --mdl-inline-calls: inlines the block functions that MLIRGen emits into
// the entry points (and into each other), then erases them, so that every
// later pass sees each entry as one straight-line body.
#include "passes/Passes.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/InliningUtils.h"

#include "llvm/ADT/DenseMap.h"

namespace modelc {
#define GEN_PASS_DEF_MDLINLINECALLS
#include "passes/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

/// Asks each dialect as usual (func's extension handles `func.return`, the
/// mdl dialect allows its ops), but also accepts the bodies of `mdl.train`
/// and `mdl.infer` as destinations: they are not callables, so no dialect
/// interface is asked about them otherwise and the default refuses.
struct EntryInliner : InlinerInterface {
  using InlinerInterface::InlinerInterface;

  bool isLegalToInline(Region *dest, Region *src, bool wouldBeCloned,
                       IRMapping &valueMapping) const override {
    if (isa<mdl::TrainOp, mdl::InferOp>(dest->getParentOp()))
      return true;
    return InlinerInterface::isLegalToInline(dest, src, wouldBeCloned,
                                             valueMapping);
  }
};

/// The `func.call`s directly or nestedly inside `op`.
SmallVector<func::CallOp> collectCalls(Operation *op) {
  SmallVector<func::CallOp> calls;
  op->walk([&](func::CallOp call) { calls.push_back(call); });
  return calls;
}

struct MdlInlineCallsPass
    : modelc::impl::MdlInlineCallsBase<MdlInlineCallsPass> {
  void runOnOperation() override;

private:
  /// The functions of the module, each after every function it calls, or
  /// failure after reporting a call that cannot be inlined. Iterative, so a
  /// deep chain of blocks cannot overflow the stack.
  FailureOr<SmallVector<func::FuncOp>> orderCalleesFirst();
  /// Inlines every call in `op`, whose callees contain no calls any more.
  LogicalResult inlineCallsIn(Operation *op);

  SymbolTable *symbols = nullptr;
};

} // namespace

FailureOr<SmallVector<func::FuncOp>> MdlInlineCallsPass::orderCalleesFirst() {
  enum class State { Unvisited, OnStack, Done };
  llvm::DenseMap<Operation *, State> states;
  SmallVector<func::FuncOp> order;
  // Each stack entry is a function and whether its callees were pushed.
  SmallVector<std::pair<func::FuncOp, bool>> stack;
  for (auto root : getOperation().getOps<func::FuncOp>()) {
    if (states.lookup(root) != State::Unvisited)
      continue;
    stack.push_back({root, false});
    while (!stack.empty()) {
      auto [func, expanded] = stack.back();
      // A function pushed on two paths may be done when its other copy pops.
      if (!expanded && states.lookup(func) == State::Done) {
        stack.pop_back();
        continue;
      }
      if (expanded) {
        stack.pop_back();
        states[func] = State::Done;
        order.push_back(func);
        continue;
      }
      stack.back().second = true;
      states[func] = State::OnStack;
      for (func::CallOp call : collectCalls(func)) {
        auto callee = symbols->lookup<func::FuncOp>(call.getCallee());
        if (!callee)
          return call.emitError("cannot inline call to @")
                 << call.getCallee() << ": no such function";
        State calleeState = states.lookup(callee);
        if (calleeState == State::Unvisited)
          stack.push_back({callee, false});
        else if (calleeState == State::OnStack)
          return call.emitError("cannot inline recursive call to @")
                 << call.getCallee();
      }
    }
  }
  return order;
}

LogicalResult MdlInlineCallsPass::inlineCallsIn(Operation *op) {
  EntryInliner inliner(&getContext());
  for (func::CallOp call : collectCalls(op)) {
    auto callee = symbols->lookup<func::FuncOp>(call.getCallee());
    if (!callee)
      return call.emitError("cannot inline call to @")
             << call.getCallee() << ": no such function";
    if (callee.isExternal())
      return call.emitError("cannot inline call to @")
             << call.getCallee() << ": it has no body";
    // The callee's `mdl.param` argument attributes need no handling: the
    // caller passes the `mdl.param_ref` values for those arguments.
    if (failed(inlineCall(inliner, cast<CallOpInterface>(call.getOperation()),
                          cast<CallableOpInterface>(callee.getOperation()),
                          &callee.getBody())))
      return call.emitError("failed to inline call to @") << call.getCallee();
    call.erase();
  }
  return success();
}

void MdlInlineCallsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbolTable(module);
  symbols = &symbolTable;

  // Callees first: each function is flattened once, and inlining it later
  // copies no calls.
  FailureOr<SmallVector<func::FuncOp>> order = orderCalleesFirst();
  if (failed(order))
    return signalPassFailure();
  for (func::FuncOp func : *order)
    if (failed(inlineCallsIn(func)))
      return signalPassFailure();
  for (Operation &op : module.getOps())
    if (isa<mdl::TrainOp, mdl::InferOp>(op) && failed(inlineCallsIn(&op)))
      return signalPassFailure();

  // The blocks' functions are private and now unused.
  for (func::FuncOp func :
       llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (func.isPrivate() && !func.isExternal() &&
        SymbolTable::symbolKnownUseEmpty(func, module))
      symbolTable.erase(func);
}
