// --mdl-dedupe-kernels: kernels that are the same computation on the same
// shapes, strides and types become one kernel, called with different
// arguments (docs/codegen/kernels.md). A transformer's layers, the forward
// that fwd_bwd, eval and infer share, the optimizer's update of equally
// shaped parameters: each distinct piece of work is compiled once, however
// often the program runs it.
//
// Equality is structural, never by name: a hash over the body (each op's
// name, attributes, result types and which earlier values its operands
// are, by position) sorts the kernels into buckets, and within a bucket
// OperationEquivalence compares bodies op by op with the kernels'
// arguments matched by position.
#include "codegen/Passes.h"
#include "codegen/memory/KernelForm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

namespace modelc {
#define GEN_PASS_DEF_MDLDEDUPEKERNELS
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

/// A hash of `kernel` that structurally equal kernels share: its type, and
/// per op in pre-order its name, attributes and result types
/// (OperationEquivalence's own hash, values ignored) and the position of
/// each operand in the order values are first seen.
llvm::hash_code hashKernel(func::FuncOp kernel) {
  llvm::hash_code hash =
      llvm::hash_value(kernel.getFunctionType().getAsOpaquePointer());
  DenseMap<Value, unsigned> numbers;
  auto number = [&](Value value) {
    return numbers.try_emplace(value, numbers.size()).first->second;
  };
  for (BlockArgument argument : kernel.getArguments())
    number(argument);
  kernel.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
    for (Value operand : op->getOperands())
      hash = llvm::hash_combine(hash, number(operand));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          number(argument);
    for (Value result : op->getResults())
      number(result);
  });
  return hash;
}

/// Whether `a` and `b` are the same computation: the same signature and
/// argument attributes, and bodies equal op for op.
bool areEquivalentKernels(func::FuncOp a, func::FuncOp b) {
  if (a.getFunctionType() != b.getFunctionType() ||
      a.getAllArgAttrs() != b.getAllArgAttrs())
    return false;
  return OperationEquivalence::isRegionEquivalentTo(
      &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

/// `name` with its index suffix (`_k<digits>`) replaced by `index`; names
/// without one are kept.
std::string renumberedName(StringRef name, int64_t index) {
  size_t at = name.rfind("_k");
  if (at == StringRef::npos || at + 2 == name.size() ||
      !llvm::all_of(name.drop_front(at + 2),
                    [](char c) { return llvm::isDigit(c); }))
    return name.str();
  return (name.take_front(at) + "_k" + llvm::Twine(index)).str();
}

struct MdlDedupeKernelsPass
    : modelc::impl::MdlDedupeKernelsBase<MdlDedupeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<int64_t, func::FuncOp>> kernels;
    for (auto function : module.getOps<func::FuncOp>())
      if (std::optional<int64_t> index = modelc::getKernelIndex(function))
        kernels.push_back({*index, function});
    llvm::sort(kernels, [](auto &a, auto &b) { return a.first < b.first; });

    // The first kernel of each class, in index order, stays.
    DenseMap<llvm::hash_code, SmallVector<func::FuncOp>> classes;
    llvm::StringMap<func::FuncOp> replacement;
    SmallVector<func::FuncOp> kept, merged;
    for (auto &[index, kernel] : kernels) {
      SmallVector<func::FuncOp> &bucket = classes[hashKernel(kernel)];
      auto same = llvm::find_if(bucket, [&](func::FuncOp other) {
        return areEquivalentKernels(other, kernel);
      });
      if (same != bucket.end()) {
        replacement[kernel.getSymName()] = *same;
        merged.push_back(kernel);
        continue;
      }
      bucket.push_back(kernel);
      kept.push_back(kernel);
    }

    // Calls follow their kernel's class; the kept kernels are numbered
    // 0..n-1 in their old order, and their names follow the number.
    Builder builder(&getContext());
    SymbolTable symbols(module);
    llvm::StringMap<std::string> newNames;
    for (auto [index, kernel] : llvm::enumerate(kept)) {
      kernel->setAttr(modelc::kKernelAttrName,
                      builder.getI64IntegerAttr(index));
      std::string name = renumberedName(kernel.getSymName(), index);
      // A symbol that is not a kept kernel (a merged one goes, a kept one
      // is renamed to a lower number first) keeps the old name.
      Operation *holder = symbols.lookup(name);
      bool goes = llvm::any_of(merged, [&](func::FuncOp other) {
        return other.getOperation() == holder;
      });
      if (holder && !goes &&
          !(isa<func::FuncOp>(holder) &&
            modelc::getKernelIndex(cast<func::FuncOp>(holder))))
        name = kernel.getSymName().str();
      newNames[kernel.getSymName()] = name;
    }
    module.walk([&](func::CallOp call) {
      StringRef callee = call.getCallee();
      auto merged = replacement.find(callee);
      if (merged != replacement.end())
        callee = merged->second.getSymName();
      auto name = newNames.find(callee);
      if (name != newNames.end())
        call.setCallee(name->second);
    });
    for (func::FuncOp kernel : merged)
      symbols.erase(kernel);
    // In index order, each kernel's new name is free: the kernel that held
    // it was merged away or renamed already to a lower number.
    for (func::FuncOp kernel : kept) {
      std::string name = newNames[kernel.getSymName()];
      if (name == kernel.getSymName())
        continue;
      symbols.remove(kernel);
      kernel.setSymName(name);
      symbols.insert(kernel);
    }
  }
};

} // namespace
