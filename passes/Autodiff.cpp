// --mdl-autodiff: reverse-mode differentiation of the fwd_bwd functions.
//
// For each function marked `mdl.autodiff = {loss = @SYM, scale = F}`, the
// loss is the value the function stores to @SYM. The pass finds the ops on a
// path from a parameter to the loss, appends their vector-Jacobian products
// (DifferentiableOpInterface) in reverse program order, seeded with
// dLoss = scale (times the scalar buffer `loss_scale` names, when it is
// there: f16's dynamic loss scaling), and adds each parameter's gradient
// into its `grad:P` buffer. See docs/passes/autodiff.md.
#include "passes/Passes.h"

#include "dialects/mdl/MdlOps.h"
#include "dialects/mdl/VJPBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#include <string>

namespace modelc {
#define GEN_PASS_DEF_MDLAUTODIFF
#include "passes/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace mlir::mdl;

namespace {

constexpr llvm::StringLiteral kAutodiffAttrName = "mdl.autodiff";

/// What `mdl.autodiff` asks for.
struct AutodiffRequest {
  FlatSymbolRefAttr loss;
  double scale;
  /// An f64 scalar buffer that also multiplies the seed (f16's loss scale),
  /// or null.
  FlatSymbolRefAttr lossScale;
};

/// Remembers every op a builder creates, so that the ones nothing uses can
/// be erased at the end: buildVJP also builds the adjoints of operands that
/// do not depend on a parameter.
struct CreatedOpsListener : OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) final {
    created.push_back(op);
  }
  SmallVector<Operation *> created;
};

FailureOr<AutodiffRequest> parseRequest(func::FuncOp func) {
  auto dict = func->getAttrOfType<DictionaryAttr>(kAutodiffAttrName);
  auto loss = dict ? dict.getAs<FlatSymbolRefAttr>("loss") : nullptr;
  auto scale = dict ? dict.getAs<FloatAttr>("scale") : nullptr;
  if (!loss || !scale)
    return func.emitError() << "'" << kAutodiffAttrName
                            << "' must be a dictionary with a symbol 'loss' "
                               "and a float 'scale'";
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitError("a function to differentiate must have a body of "
                          "one block");
  auto lossScale = dict.get("loss_scale");
  if (lossScale && !isa<FlatSymbolRefAttr>(lossScale))
    return func.emitError() << "'" << kAutodiffAttrName
                            << "' has a 'loss_scale' that is not a symbol";
  return AutodiffRequest{loss, scale.getValueAsDouble(),
                         cast_or_null<FlatSymbolRefAttr>(lossScale)};
}

/// The last store to `loss` in `body`, or null.
StoreOp findLossStore(Block &body, FlatSymbolRefAttr loss) {
  StoreOp found;
  for (auto store : body.getOps<StoreOp>())
    if (store.getNameAttr() == loss)
      found = store;
  return found;
}

/// The values before `lossStore` through which the stored loss depends on a
/// parameter: float tensors computed from an mdl.param_ref ("varied") that
/// the loss is computed from ("useful"). Integer and bool values are never
/// active, so comparisons, argmax and casts to integers cut the path.
DenseSet<Value> findActiveValues(StoreOp lossStore) {
  DenseSet<Value> varied;
  Block *body = lossStore->getBlock();
  for (Operation &op :
       llvm::make_range(body->begin(), lossStore->getIterator())) {
    bool dependsOnParameter =
        isa<ParamRefOp>(op) || llvm::any_of(op.getOperands(), [&](Value v) {
          return varied.contains(v);
        });
    if (!dependsOnParameter)
      continue;
    for (Value result : op.getResults())
      if (isDifferentiableType(result.getType()))
        varied.insert(result);
  }

  DenseSet<Value> active;
  Value loss = lossStore.getValue();
  if (!varied.contains(loss))
    return active;
  active.insert(loss);
  for (Operation *op = lossStore->getPrevNode(); op; op = op->getPrevNode()) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return active.contains(r); }))
      continue;
    for (Value operand : op->getOperands())
      if (varied.contains(operand))
        active.insert(operand);
  }
  return active;
}

/// The op after which gradient buffers are declared: the last mdl.param or
/// gradient buffer of the module, so that gradients follow the parameters
/// in parameter order.
Operation *findGradDeclarationPoint(ModuleOp module) {
  Operation *point = nullptr;
  for (Operation &op : module.getBody()->getOperations()) {
    auto buffer = dyn_cast<BufferOp>(op);
    if (isa<ParamOp>(op) || (buffer && buffer.getRole() == "grad"))
      point = &op;
  }
  return point;
}

/// Builds the backward pass of one function.
class FunctionDifferentiator {
public:
  FunctionDifferentiator(func::FuncOp func, SymbolTable &symbols)
      : func(func), symbols(symbols), builder(func.getContext(), &listener) {}

  LogicalResult run();

private:
  /// Declares `grad:P` for every parameter with an active mdl.param_ref, in
  /// parameter order, and records each one's first active reference.
  LogicalResult declareGradBuffers(const DenseSet<Value> &active);
  /// `existing + adjoint`, or `adjoint` when there is nothing yet.
  Value addAdjoint(Location loc, Value existing, Value adjoint);
  /// `store(load(@"grad:P") + adjoint of P, @"grad:P")`.
  void emitGradientUpdate(ParamRefOp ref);
  LogicalResult differentiateOp(Operation *op, const DenseSet<Value> &active);
  /// Erases the created ops that nothing uses, users first.
  void eraseUnusedCreatedOps();
  /// Gives each use of a dropout mask after `lossStore` (in the backward)
  /// its own copy of the mask op, computed where it is used: the mask is
  /// a pure hash of its operands, so recomputing it is exact, and the
  /// forward's mask is not kept alive until the backward (as f32 tensors
  /// they are among a 16-bit model's largest saved activations). The
  /// copies carry `mdl.recomputed`, so that CSE does not merge them back.
  void rematerializeDropoutMasks(Operation *lossStore);

  func::FuncOp func;
  SymbolTable &symbols;
  CreatedOpsListener listener;
  OpBuilder builder;
  DenseMap<Value, Value> adjoints;
  /// Per parameter symbol: its gradient so far, its buffer, and the
  /// reference after whose VJP the gradient is complete (the first active
  /// one in program order, reached last by the reverse walk).
  DenseMap<StringAttr, Value> paramAdjoints;
  DenseMap<StringAttr, BufferOp> gradBuffers;
  DenseMap<StringAttr, Operation *> firstActiveRefs;
};

LogicalResult FunctionDifferentiator::run() {
  FailureOr<AutodiffRequest> request = parseRequest(func);
  if (failed(request))
    return failure();
  Block &body = func.getBody().front();
  StoreOp lossStore = findLossStore(body, request->loss);
  if (!lossStore)
    return func.emitError()
           << "'" << kAutodiffAttrName << "' names the loss " << request->loss
           << " but the function never stores to it";
  Value loss = lossStore.getValue();
  auto lossType = cast<RankedTensorType>(loss.getType());
  if (lossType.getRank() != 0 || !isDifferentiableType(lossType))
    return lossStore.emitError()
           << "the loss must be a 0-d float tensor, got " << lossType;

  DenseSet<Value> active = findActiveValues(lossStore);
  if (failed(declareGradBuffers(active)))
    return failure();
  builder.setInsertionPoint(body.getTerminator());
  if (active.contains(loss)) {
    Location loc = lossStore.getLoc();
    Value seed = builder.create<ConstantOp>(loc, lossType, request->scale);
    if (request->lossScale) {
      // dLoss = scale * loss_scale in the loss's type: GradScaler's
      // scale(loss) on the loss already divided by `accumulate`.
      auto f64 = RankedTensorType::get({}, builder.getF64Type());
      Value lossScale = builder.create<LoadOp>(
          loc, f64, request->lossScale.getValue());
      Value cast = builder.create<CastOp>(loc, lossScale,
                                          lossType.getElementType());
      seed = builder.create<MulOp>(loc, seed, cast);
    }
    adjoints[loss] = seed;
  }
  for (Operation *op = lossStore->getPrevNode(); op; op = op->getPrevNode())
    if (failed(differentiateOp(op, active)))
      return failure();
  eraseUnusedCreatedOps();
  rematerializeDropoutMasks(lossStore);
  func->removeAttr(kAutodiffAttrName);
  return success();
}

LogicalResult
FunctionDifferentiator::declareGradBuffers(const DenseSet<Value> &active) {
  for (auto ref : func.getBody().front().getOps<ParamRefOp>())
    if (active.contains(ref.getResult()))
      firstActiveRefs.try_emplace(ref.getNameAttr().getAttr(), ref);
  auto module = func->getParentOfType<ModuleOp>();
  for (auto param : module.getOps<ParamOp>()) {
    if (!firstActiveRefs.count(param.getSymNameAttr()))
      continue;
    std::string symbol = ("grad:" + param.getSymName()).str();
    Operation *existing = symbols.lookup(symbol);
    auto buffer = dyn_cast_or_null<BufferOp>(existing);
    if (existing && (!buffer || buffer.getType() != param.getType() ||
                     buffer.getRole() != "grad"))
      return existing->emitError()
             << "the symbol @\"" << symbol
             << "\" is taken, but not by the gradient buffer of parameter @\""
             << param.getSymName() << "\"";
    if (!buffer) {
      OpBuilder declarations(module.getContext());
      if (Operation *point = findGradDeclarationPoint(module))
        declarations.setInsertionPointAfter(point);
      else
        declarations.setInsertionPointToStart(module.getBody());
      buffer = declarations.create<BufferOp>(
          param.getLoc(), symbol, param.getType(), /*role=*/"grad",
          /*phase=*/"shared", /*key=*/param.getSymName(), /*entry=*/"");
      symbols.insert(buffer);
    }
    gradBuffers[param.getSymNameAttr()] = buffer;
  }
  return success();
}

Value FunctionDifferentiator::addAdjoint(Location loc, Value existing,
                                         Value adjoint) {
  if (!existing)
    return adjoint;
  return builder.create<AddOp>(loc, existing, adjoint);
}

void FunctionDifferentiator::emitGradientUpdate(ParamRefOp ref) {
  StringAttr name = ref.getNameAttr().getAttr();
  Value gradient = paramAdjoints.lookup(name);
  if (!gradient)
    return;
  BufferOp buffer = gradBuffers.lookup(name);
  auto symbol = FlatSymbolRefAttr::get(buffer.getSymNameAttr());
  Location loc = ref.getLoc();
  Value old = builder.create<LoadOp>(loc, buffer.getType(), symbol);
  Value sum = builder.create<AddOp>(loc, old, gradient);
  builder.create<StoreOp>(loc, sum, symbol);
}

LogicalResult
FunctionDifferentiator::differentiateOp(Operation *op,
                                        const DenseSet<Value> &active) {
  if (llvm::none_of(op->getResults(),
                    [&](Value r) { return active.contains(r); }))
    return success();

  if (auto ref = dyn_cast<ParamRefOp>(op)) {
    StringAttr name = ref.getNameAttr().getAttr();
    if (Value adjoint = adjoints.lookup(ref.getResult()))
      paramAdjoints[name] =
          addAdjoint(ref.getLoc(), paramAdjoints.lookup(name), adjoint);
    if (firstActiveRefs.lookup(name) == op)
      emitGradientUpdate(ref);
    return success();
  }

  auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
  if (!differentiable) {
    InFlightDiagnostic diag =
        op->emitError() << "'" << op->getName()
                        << "' is on the path from the parameters to the loss "
                           "but has no gradient";
    if (modelc::isComposite(op) || isa<DropoutOp>(op))
      diag << "; run --mdl-decompose before --mdl-autodiff";
    return diag;
  }

  SmallVector<Value> resultAdjoints;
  for (Value result : op->getResults())
    resultAdjoints.push_back(adjoints.lookup(result));
  if (llvm::all_of(resultAdjoints, [](Value adjoint) { return !adjoint; }))
    return success();

  SmallVector<Value> operandAdjoints =
      differentiable.buildVJP(builder, resultAdjoints);
  // Both checks guard the VJP implementations' contract, so that a wrong
  // VJP is reported here instead of as a verifier error on a later op.
  if (operandAdjoints.size() != op->getNumOperands())
    return op->emitError() << "internal error: the VJP of '" << op->getName()
                           << "' returned " << operandAdjoints.size()
                           << " adjoints for " << op->getNumOperands()
                           << " operands";
  for (auto [index, operand, adjoint] :
       llvm::enumerate(op->getOperands(), operandAdjoints)) {
    if (!adjoint || !active.contains(operand))
      continue;
    if (adjoint.getType() != operand.getType())
      return op->emitError()
             << "internal error: the VJP of '" << op->getName()
             << "' gives operand #" << index << " an adjoint of type "
             << adjoint.getType() << ", not " << operand.getType();
    adjoints[operand] =
        addAdjoint(operand.getLoc(), adjoints.lookup(operand), adjoint);
  }
  return success();
}

void FunctionDifferentiator::rematerializeDropoutMasks(Operation *lossStore) {
  Block *body = lossStore->getBlock();
  for (auto mask : llvm::to_vector(body->getOps<DropoutMaskOp>())) {
    if (!mask->isBeforeInBlock(lossStore))
      continue;
    for (OpOperand &use : llvm::make_early_inc_range(mask->getUses())) {
      Operation *user = use.getOwner();
      if (user->getBlock() != body || user->isBeforeInBlock(lossStore))
        continue;
      OpBuilder before(user);
      Operation *copy = before.clone(*mask);
      copy->setAttr("mdl.recomputed", before.getUnitAttr());
      use.set(copy->getResult(0));
    }
  }
}

void FunctionDifferentiator::eraseUnusedCreatedOps() {
  // Every op is created after the ops defining its operands, so visiting
  // them newest first erases users before what they use.
  for (Operation *op : llvm::reverse(listener.created))
    if (isOpTriviallyDead(op))
      op->erase();
}

struct MdlAutodiffPass : modelc::impl::MdlAutodiffBase<MdlAutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kAutodiffAttrName))
        functions.push_back(func);
    SymbolTable symbols(module);
    for (func::FuncOp func : functions)
      if (failed(FunctionDifferentiator(func, symbols).run()))
        return signalPassFailure();
  }
};

} // namespace
