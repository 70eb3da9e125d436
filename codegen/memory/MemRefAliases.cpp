// The alias rules of MemRefAliases.h: view chains back to their root, and
// which roots are known to be distinct memory.
#include "codegen/memory/MemRefAliases.h"

#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace modelc {

Value getAliasRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    // memref.transpose is a view without the view interface in MLIR 19.
    if (auto transpose = dyn_cast<memref::TransposeOp>(def)) {
      value = transpose.getIn();
      continue;
    }
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
  }
  return value;
}

namespace {

/// What a root is known to be: a fresh allocation (its own memory), a named
/// arena buffer or a global (memory named by a symbol), or unknown.
enum class RootKind { Allocation, Buffer, Global, Unknown };

RootKind classify(Value root, Attribute &symbol) {
  Operation *def = root.getDefiningOp();
  if (isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(def))
    return RootKind::Allocation;
  if (auto buffer = dyn_cast_or_null<mdlrt::BufferOp>(def)) {
    symbol = buffer.getNameAttr();
    return RootKind::Buffer;
  }
  if (auto global = dyn_cast_or_null<memref::GetGlobalOp>(def)) {
    symbol = global.getNameAttr();
    return RootKind::Global;
  }
  return RootKind::Unknown;
}

} // namespace

bool mayAlias(Value a, Value b) {
  Value rootA = getAliasRoot(a), rootB = getAliasRoot(b);
  if (rootA == rootB)
    return true;
  Attribute symbolA, symbolB;
  RootKind kindA = classify(rootA, symbolA), kindB = classify(rootB, symbolB);
  // A fresh allocation is memory nothing else can name.
  if (kindA == RootKind::Allocation || kindB == RootKind::Allocation)
    return false;
  if (kindA == RootKind::Unknown || kindB == RootKind::Unknown)
    return true;
  return kindA == kindB && symbolA == symbolB;
}

void collectDerivedMemRefs(Value root, SmallVectorImpl<Value> &derived) {
  llvm::SetVector<Value> seen;
  seen.insert(root);
  for (size_t i = 0; i < seen.size(); ++i)
    for (Operation *user : seen[i].getUsers())
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          seen.insert(result);
  derived.append(seen.begin(), seen.end());
}

} // namespace modelc
