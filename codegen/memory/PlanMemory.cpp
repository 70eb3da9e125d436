// --mdl-plan-memory: one arena per program. Parameters and buffers get fixed
// offsets in its persistent region, each function's temporaries offsets in
// the scratch region after it (first fit, reusing space whose liveness has
// ended), and every function takes the arena as its only argument. The
// members of an mdl.flat_view are placed together, where the first of them
// would be, as the view lays them out.
#include "codegen/Passes.h"
#include "codegen/memory/MemRefAliases.h"

#include "dialects/mdl/MdlOps.h"
#include "dialects/mdlrt/MdlrtDialect.h"
#include "dialects/mdlrt/MdlrtOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/Support/MathExtras.h"

namespace modelc {
#define GEN_PASS_DEF_MDLPLANMEMORY
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

/// Every offset in the arena is a multiple of this (a cache line, and the
/// widest vector load), and so is the arena itself.
constexpr uint64_t kAlignment = 64;

/// The largest arena (4 EiB, past any machine): below it, every offset and
/// sum of the plan fits in 64 bits, and the arena in an int64 memref.
constexpr uint64_t kMaxArenaBytes = uint64_t(1) << 62;

/// The error of a program whose memory does not fit the limit.
InFlightDiagnostic emitTooLarge(Operation *op) {
  return op->emitError(modelc::kProgramLimitPrefix)
         << "its memory plan needs more than 2^62 bytes (4 EiB)";
}

/// The bytes of a static shape of `elementType`, or nullopt for a dynamic
/// shape or a non-scalar element type; kMaxArenaBytes + 1 when larger than
/// kMaxArenaBytes. Booleans take a byte each, as LLVM stores i1.
std::optional<uint64_t> byteSize(ArrayRef<int64_t> shape, Type elementType) {
  if (!elementType.isIntOrFloat())
    return std::nullopt;
  int64_t bytes = (elementType.getIntOrFloatBitWidth() + 7) / 8;
  if (llvm::is_contained(shape, 0))
    return 0;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    if (llvm::MulOverflow(bytes, dim, bytes) ||
        uint64_t(bytes) > kMaxArenaBytes)
      return kMaxArenaBytes + 1;
  }
  return uint64_t(bytes);
}

/// Whether a memref of `used` elements can view a tensor declared with
/// `declared` elements: the same type, or integers of one width (the
/// lowering makes `ui8` data signless `i8`).
bool isSameStorage(Type used, Type declared) {
  if (used == declared)
    return true;
  auto usedInt = dyn_cast<IntegerType>(used);
  auto declaredInt = dyn_cast<IntegerType>(declared);
  return usedInt && declaredInt && usedInt.getWidth() == declaredInt.getWidth();
}

/// A temporary of one function and its live range, in positions of the
/// function's top-level ops.
struct Temporary {
  Operation *alloc;
  uint64_t bytes;
  size_t start, end;
  uint64_t offset = 0;
};

/// First fit in order of definition: each temporary takes the lowest
/// aligned offset that does not overlap a temporary still live. Returns the
/// scratch bytes the function needs, or nullopt past kMaxArenaBytes (each
/// temporary is at most that large, so the sums below cannot wrap).
std::optional<uint64_t> placeFirstFit(MutableArrayRef<Temporary> temporaries) {
  SmallVector<Temporary *> live;
  uint64_t peak = 0;
  for (Temporary &temp : temporaries) {
    llvm::erase_if(live, [&](Temporary *t) { return t->end < temp.start; });
    llvm::sort(
        live, [](Temporary *x, Temporary *y) { return x->offset < y->offset; });
    uint64_t candidate = 0;
    for (Temporary *other : live) {
      if (candidate + temp.bytes <= other->offset)
        break;
      candidate = std::max(
          candidate, llvm::alignTo(other->offset + other->bytes, kAlignment));
    }
    temp.offset = candidate;
    peak = std::max(peak, candidate + temp.bytes);
    if (peak > kMaxArenaBytes)
      return std::nullopt;
    live.push_back(&temp);
  }
  return llvm::alignTo(peak, kAlignment);
}

struct MdlPlanMemoryPass : modelc::impl::MdlPlanMemoryBase<MdlPlanMemoryPass> {
  void runOnOperation() override;

private:
  LogicalResult placePersistent(Operation *decl, Type type);
  /// Places `decl`, or, when it is the member of a flat view, the view
  /// with all its members (the first time one of them is reached).
  LogicalResult placeDeclaration(Operation *decl, Type type);
  /// Records each flat view by its members; a member of two views is an
  /// error.
  LogicalResult collectFlatViews(ModuleOp module);
  /// An error when `func` uses a flat view and one of its members.
  LogicalResult checkFlatViewUses(func::FuncOp func);
  FailureOr<uint64_t> planFunction(func::FuncOp func,
                                   SmallVectorImpl<Temporary> &temporaries);
  LogicalResult rewriteFunction(func::FuncOp func, uint64_t arenaBytes,
                                ArrayRef<Temporary> temporaries);

  /// The persistent region: each declaration's offset by symbol name.
  llvm::DenseMap<StringAttr, uint64_t> persistentOffsets;
  llvm::DenseMap<StringAttr, RankedTensorType> persistentTypes;
  uint64_t persistentBytes = 0;
  /// The flat view each member belongs to.
  llvm::DenseMap<StringAttr, mlir::mdl::FlatViewOp> viewOfMember;
};

LogicalResult MdlPlanMemoryPass::placePersistent(Operation *decl, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  std::optional<uint64_t> bytes =
      byteSize(tensor.getShape(), tensor.getElementType());
  if (!bytes)
    return decl->emitError("the memory plan cannot size ") << type;
  uint64_t offset = llvm::alignTo(persistentBytes, kAlignment);
  if (*bytes > kMaxArenaBytes - offset)
    return emitTooLarge(decl);
  auto name = decl->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
  persistentOffsets[name] = offset;
  persistentTypes[name] = tensor;
  decl->setAttr("offset",
                IntegerAttr::get(IntegerType::get(&getContext(), 64), offset));
  persistentBytes = offset + *bytes;
  return success();
}

LogicalResult MdlPlanMemoryPass::collectFlatViews(ModuleOp module) {
  static_assert(mlir::mdl::FlatViewOp::kMemberAlignment == kAlignment,
                "a flat view lays its members out at the plan's alignment");
  for (auto view : module.getOps<mlir::mdl::FlatViewOp>())
    for (Attribute member : view.getMembers()) {
      StringAttr name = cast<FlatSymbolRefAttr>(member).getAttr();
      auto [it, inserted] = viewOfMember.try_emplace(name, view);
      if (!inserted)
        return view.emitError("@")
               << name.getValue() << " is already a member of @"
               << it->second.getSymName();
    }
  return success();
}

LogicalResult MdlPlanMemoryPass::placeDeclaration(Operation *decl, Type type) {
  auto name = decl->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
  if (persistentOffsets.count(name))
    return success();
  auto view = viewOfMember.lookup(name);
  if (!view)
    return placePersistent(decl, type);
  // The members back to back from the view's (aligned) start, each at the
  // offset the view's layout gives it; padding between them stays zero.
  ModuleOp module = getOperation();
  SmallVector<RankedTensorType> types;
  SmallVector<Operation *> members;
  for (Attribute member : view.getMembers()) {
    Operation *op = SymbolTable::lookupSymbolIn(
        module, cast<FlatSymbolRefAttr>(member).getAttr());
    if (!op)
      return view.emitError("no member named ") << member;
    members.push_back(op);
    // The verifier admits parameters and buffers as members.
    if (auto param = dyn_cast<mlir::mdl::ParamOp>(op))
      types.push_back(param.getType());
    else
      types.push_back(cast<mlir::mdl::BufferOp>(op).getType());
  }
  if (failed(placePersistent(view, view.getType())))
    return failure();
  uint64_t start = persistentOffsets[view.getSymNameAttr()];
  uint64_t width = view.getType().getElementTypeBitWidth() / 8;
  SmallVector<int64_t> offsets = mlir::mdl::FlatViewOp::layout(types);
  auto i64 = IntegerType::get(&getContext(), 64);
  for (auto [op, type, offset] : llvm::zip(members, types, offsets)) {
    auto member =
        op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (persistentOffsets.count(member))
      return view.emitError("@")
             << member.getValue() << " was placed before its flat view";
    uint64_t at = start + uint64_t(offset) * width;
    persistentOffsets[member] = at;
    persistentTypes[member] = type;
    op->setAttr("offset", IntegerAttr::get(i64, at));
  }
  return success();
}

LogicalResult MdlPlanMemoryPass::checkFlatViewUses(func::FuncOp func) {
  llvm::DenseSet<StringAttr> used;
  func.walk(
      [&](mdlrt::BufferOp op) { used.insert(op.getNameAttr().getAttr()); });
  for (StringAttr name : used) {
    auto view = viewOfMember.lookup(name);
    if (view && used.contains(view.getSymNameAttr()))
      return func.emitError("uses both the flat view @")
             << view.getSymName() << " and its member @" << name.getValue();
  }
  return success();
}

/// The temporaries live together at the position where most bytes are,
/// summed by element type: what fills a function's scratch region at its
/// fullest (first fit may need more room than this, never less).
struct LivePeak {
  uint64_t bytes = 0;
  SmallVector<std::pair<Type, uint64_t>> byType;
};

LivePeak findLivePeak(ArrayRef<Temporary> temporaries) {
  size_t positions = 0;
  for (const Temporary &temp : temporaries)
    positions = std::max(positions, temp.end + 1);
  // Bytes starting and ending at each position; a running sum finds the
  // fullest one.
  std::vector<int64_t> delta(positions + 1, 0);
  for (const Temporary &temp : temporaries) {
    delta[temp.start] += int64_t(temp.bytes);
    delta[temp.end + 1] -= int64_t(temp.bytes);
  }
  int64_t live = 0, most = -1;
  size_t fullest = 0;
  for (size_t i = 0; i < positions; ++i) {
    live += delta[i];
    if (live > most) {
      most = live;
      fullest = i;
    }
  }
  LivePeak peak;
  for (const Temporary &temp : temporaries) {
    if (temp.start > fullest || temp.end < fullest)
      continue;
    Type type =
        cast<MemRefType>(temp.alloc->getResult(0).getType()).getElementType();
    auto *entry = llvm::find_if(peak.byType,
                                [&](const auto &e) { return e.first == type; });
    if (entry == peak.byType.end())
      peak.byType.push_back({type, temp.bytes});
    else
      entry->second += temp.bytes;
    peak.bytes += temp.bytes;
  }
  return peak;
}

/// Collects the function's allocations with their live ranges and places
/// them; returns its scratch bytes.
FailureOr<uint64_t>
MdlPlanMemoryPass::planFunction(func::FuncOp func,
                                SmallVectorImpl<Temporary> &temporaries) {
  if (!func.getBody().hasOneBlock())
    return func.emitError("the memory plan needs a straight-line function "
                          "body (one block)");
  Block &body = func.getBody().front();
  llvm::DenseMap<Operation *, size_t> position;
  for (auto [index, op] : llvm::enumerate(body))
    position[&op] = index;

  WalkResult walk = func.walk([&](Operation *op) {
    if (!isa<memref::AllocOp, memref::AllocaOp>(op))
      return WalkResult::advance();
    auto type = cast<MemRefType>(op->getResult(0).getType());
    std::optional<uint64_t> bytes =
        byteSize(type.getShape(), type.getElementType());
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        type.getMemorySpace() || !bytes) {
      op->emitError("the memory plan needs a static shape with the identity "
                    "layout in the default memory space, got ")
          << type;
      return WalkResult::interrupt();
    }
    auto alignment = op->getAttrOfType<IntegerAttr>("alignment");
    if (alignment && alignment.getInt() > int64_t(kAlignment)) {
      op->emitError("the arena is aligned to ")
          << kAlignment << " bytes, not " << alignment.getInt();
      return WalkResult::interrupt();
    }
    // Live from the definition to the last use of the allocation or of any
    // view of it. Positions are those of the top-level ops: a use inside a
    // region counts at the op holding the region, and an allocation inside
    // a loop is live for the whole loop, one place for all iterations.
    size_t start = position[body.findAncestorOpInBlock(*op)], end = start;
    SmallVector<Value> derived;
    modelc::collectDerivedMemRefs(op->getResult(0), derived);
    for (Value value : derived)
      for (Operation *user : value.getUsers()) {
        // One place for all iterations is wrong for a value one iteration
        // hands to the next: the next one's allocation would overwrite it.
        if (op->getBlock() != &body &&
            user->hasTrait<OpTrait::IsTerminator>() &&
            isa<LoopLikeOpInterface>(user->getParentOp())) {
          op->emitError("the memory plan cannot place a temporary carried "
                        "from one loop iteration to the next; the loop "
                        "should update its tensor in place");
          return WalkResult::interrupt();
        }
        end = std::max(end, position[body.findAncestorOpInBlock(*user)]);
      }
    temporaries.push_back({op, *bytes, start, end});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (const Temporary &temp : temporaries)
    if (temp.bytes > kMaxArenaBytes)
      return emitTooLarge(temp.alloc);
  std::optional<uint64_t> bytes = placeFirstFit(temporaries);
  if (!bytes)
    return emitTooLarge(func);
  return *bytes;
}

/// Gives `func` the arena argument and replaces each buffer and temporary
/// with its view of the arena.
LogicalResult
MdlPlanMemoryPass::rewriteFunction(func::FuncOp func, uint64_t arenaBytes,
                                   ArrayRef<Temporary> temporaries) {
  MLIRContext *context = &getContext();
  auto arenaType =
      MemRefType::get({int64_t(arenaBytes)}, IntegerType::get(context, 8));
  func.insertArgument(0, arenaType, DictionaryAttr(), func.getLoc());
  Value arena = func.getArgument(0);
  OpBuilder builder(context);
  auto view = [&](Operation *op, uint64_t offset) {
    builder.setInsertionPoint(op);
    Value at = builder.create<arith::ConstantIndexOp>(op->getLoc(), offset);
    Value result = builder.create<memref::ViewOp>(
        op->getLoc(), op->getResult(0).getType(), arena, at, ValueRange());
    op->replaceAllUsesWith(ValueRange(result));
    op->erase();
  };

  // The deallocations only ever free temporaries, which now live in the
  // arena.
  func.walk([](memref::DeallocOp dealloc) { dealloc.erase(); });
  for (const Temporary &temp : temporaries)
    view(temp.alloc, persistentBytes + temp.offset);

  SmallVector<mdlrt::BufferOp> buffers;
  func.walk([&](mdlrt::BufferOp op) { buffers.push_back(op); });
  for (mdlrt::BufferOp op : buffers) {
    StringAttr name = op.getNameAttr().getAttr();
    auto offset = persistentOffsets.find(name);
    if (offset == persistentOffsets.end())
      return op.emitError("no mdl.param, mdl.buffer or mdl.flat_view named @")
             << name.getValue();
    MemRefType type = op.getType();
    RankedTensorType declared = persistentTypes[name];
    if (type.getShape() != declared.getShape() ||
        !isSameStorage(type.getElementType(), declared.getElementType()) ||
        !type.getLayout().isIdentity() || type.getMemorySpace())
      return op.emitError("the memref type ")
             << type << " does not match @" << name.getValue() << " : "
             << declared;
    view(op, offset->second);
  }
  return success();
}

void MdlPlanMemoryPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(collectFlatViews(module)))
    return signalPassFailure();
  for (auto param : module.getOps<mlir::mdl::ParamOp>())
    if (failed(placeDeclaration(param, param.getType())))
      return signalPassFailure();
  for (auto buffer : module.getOps<mlir::mdl::BufferOp>())
    if (failed(placeDeclaration(buffer, buffer.getType())))
      return signalPassFailure();
  persistentBytes = llvm::alignTo(persistentBytes, kAlignment);

  // Functions never run at the same time, so they share the scratch region.
  SmallVector<std::pair<func::FuncOp, SmallVector<Temporary>>> functions;
  uint64_t scratchBytes = 0;
  func::FuncOp largest;
  LivePeak largestPeak;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func->hasAttr("mdl.function"))
      continue;
    if (func.getNumArguments() != 0 || func.getNumResults() != 0) {
      func.emitError("a program function takes no arguments and returns "
                     "nothing before the memory plan");
      return signalPassFailure();
    }
    if (failed(checkFlatViewUses(func)))
      return signalPassFailure();
    functions.emplace_back(func, SmallVector<Temporary>());
    FailureOr<uint64_t> bytes = planFunction(func, functions.back().second);
    if (failed(bytes))
      return signalPassFailure();
    func->setAttr(
        "mdl.scratch_bytes",
        IntegerAttr::get(IntegerType::get(&getContext(), 64), *bytes));
    if (*bytes > scratchBytes || !largest) {
      largest = func;
      largestPeak = findLivePeak(functions.back().second);
    }
    scratchBytes = std::max(scratchBytes, *bytes);
  }

  // Each part is at most kMaxArenaBytes, so the sum fits; the whole must too.
  uint64_t arenaBytes = persistentBytes + scratchBytes;
  if (arenaBytes > kMaxArenaBytes) {
    emitTooLarge(module);
    return signalPassFailure();
  }
  for (auto &[func, temporaries] : functions)
    if (failed(rewriteFunction(func, arenaBytes, temporaries)))
      return signalPassFailure();
  WalkResult leftover = module.walk([](mdlrt::BufferOp op) {
    op.emitError("mdlrt.buffer outside a program function (one marked "
                 "mdl.function)");
    return WalkResult::interrupt();
  });
  if (leftover.wasInterrupted())
    return signalPassFailure();

  auto i64 = IntegerType::get(&getContext(), 64);
  module->setAttr("mdl.arena_bytes", IntegerAttr::get(i64, arenaBytes));
  module->setAttr("mdl.persistent_bytes",
                  IntegerAttr::get(i64, persistentBytes));
  // What fills the scratch region at its fullest, for `describe`.
  if (largest) {
    Builder b(&getContext());
    SmallVector<Attribute> byType;
    for (auto [type, bytes] : largestPeak.byType)
      byType.push_back(b.getArrayAttr(
          {TypeAttr::get(type), IntegerAttr::get(i64, bytes)}));
    module->setAttr(
        "mdl.scratch_peak",
        b.getDictionaryAttr(
            {b.getNamedAttr("function", largest.getSymNameAttr()),
             b.getNamedAttr("live_bytes",
                            IntegerAttr::get(i64, largestPeak.bytes)),
             b.getNamedAttr("by_type", b.getArrayAttr(byType))}));
  }
}

} // namespace
