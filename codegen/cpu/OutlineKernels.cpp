// Each loop nest of a program function moves into a function of its own
// that takes the arena, so that LLVM optimises many small functions rather
// than one huge one: loop passes such as IndVarSimplify grow faster than
// linearly with a function's size (char_gpt's fwd_bwd spent 37 s of a 50 s
// -O3 in IndVarSimplify as one function).
#include "codegen/cpu/CpuLowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace modelc {

namespace {

/// What a kernel needs from its program function: the ops to clone into it
/// (views of the arena, constants, globals), and the scalars it takes as
/// arguments after the arena.
struct KernelInputs {
  llvm::SetVector<Operation *> clones;
  llvm::SetVector<Value> scalars;
};

class KernelOutliner {
public:
  KernelOutliner(func::FuncOp function, SmallVectorImpl<std::string> &names)
      : function(function), arena(function.getArgument(0)), names(names) {}

  void run() {
    SmallVector<Operation *> kernels;
    // An op with results (an scf.for carrying a scalar) stays: a kernel
    // returns nothing.
    for (Operation &op : function.getBody().front())
      if (op.getNumRegions() > 0 && op.getNumResults() == 0)
        kernels.push_back(&op);
    for (Operation *op : kernels) {
      KernelInputs inputs;
      if (collectInputs(op, inputs))
        outline(op, inputs);
    }
  }

private:
  /// Whether the kernel can rebuild `value` from the arena: a side-effect
  /// free, region-free op of the function's body whose operands it can
  /// rebuild too (memref.view of the arena, subviews, constants, ...).
  bool addClone(Value value, KernelInputs &inputs) {
    if (value == arena)
      return true;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != &function.getBody().front() ||
        def->getNumRegions() > 0 || !isMemoryEffectFree(def))
      return false;
    if (inputs.clones.contains(def))
      return true;
    for (Value operand : def->getOperands())
      if (!addClone(operand, inputs))
        return false;
    inputs.clones.insert(def);
    return true;
  }

  /// Sorts what `op` uses from outside into clones and scalar arguments;
  /// false when it uses a memref the kernel cannot rebuild.
  bool collectInputs(Operation *op, KernelInputs &inputs) {
    llvm::SetVector<Value> used(op->getOperands().begin(),
                                op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    for (Value value : used) {
      if (addClone(value, inputs))
        continue;
      if (!value.getType().isIntOrIndexOrFloat())
        return false;
      inputs.scalars.insert(value);
    }
    return true;
  }

  void outline(Operation *op, const KernelInputs &inputs) {
    std::string name =
        function.getSymName().str() + "_k" + std::to_string(names.size());
    names.push_back(name);
    SmallVector<Type> argumentTypes = {arena.getType()};
    SmallVector<Value> arguments = {arena};
    for (Value scalar : inputs.scalars) {
      argumentTypes.push_back(scalar.getType());
      arguments.push_back(scalar);
    }
    OpBuilder builder(function);
    auto kernel = builder.create<func::FuncOp>(
        op->getLoc(), name, builder.getFunctionType(argumentTypes, {}));
    kernel.setPrivate();
    // The same promises as the program function's arena.
    if (DictionaryAttr arenaAttrs = function.getArgAttrDict(0))
      for (NamedAttribute attr : arenaAttrs)
        kernel.setArgAttr(0, attr.getName(), attr.getValue());

    Block *entry = kernel.addEntryBlock();
    IRMapping mapping;
    mapping.map(arguments, entry->getArguments());
    builder.setInsertionPointToStart(entry);
    // Clones in the function's order, so that each follows its operands.
    for (Operation &candidate : function.getBody().front())
      if (inputs.clones.contains(&candidate))
        builder.clone(candidate, mapping);
    builder.clone(*op, mapping);
    builder.create<func::ReturnOp>(op->getLoc());

    builder.setInsertionPoint(op);
    builder.create<func::CallOp>(op->getLoc(), kernel, arguments);
    op->erase();
  }

  func::FuncOp function;
  Value arena;
  SmallVectorImpl<std::string> &names;
};

} // namespace

SmallVector<std::string> outlineKernels(ArrayRef<ProgramFunction> functions) {
  SmallVector<std::string> names;
  for (const ProgramFunction &fn : functions)
    KernelOutliner(fn.op, names).run();
  return names;
}

void markKernelsInternal(ModuleOp module, ArrayRef<std::string> names) {
  for (const std::string &name : names)
    if (auto kernel = module.lookupSymbol<LLVM::LLVMFuncOp>(name)) {
      kernel.setLinkage(LLVM::Linkage::Internal);
      // LLVM would inline a function called once, and undo the split.
      kernel.setNoInline(true);
    }
}

} // namespace modelc
