// --mdl-outline-kernels: the target-neutral partition of each planned
// program function into kernels (docs/codegen/kernels.md). Every piece of
// work (a loop nest, a copy, a scalar store) moves into a function of its
// own that takes the buffers it touches as arguments and recomputes the
// views and scalars it derives from them, so that a kernel is the same
// piece of the program on every target (the CPU compiles it as a small
// LLVM function, the GPU launches it) and the same computation on other
// buffers is the same kernel (--mdl-dedupe-kernels); a program function
// becomes a list of kernel calls and GEMMs.
#include "codegen/Passes.h"
#include "codegen/manifest/ManifestWriter.h"
#include "codegen/memory/ArenaRanges.h"
#include "codegen/memory/KernelArguments.h"
#include "codegen/memory/KernelForm.h"

#include "dialects/mdlrt/MdlrtOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace modelc {
#define GEN_PASS_DEF_MDLOUTLINEKERNELS
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

/// What a top-level op of a program function becomes.
enum class Role {
  Kernel,       // moves into a kernel of its own
  LibraryCall,  // stays: a GEMM or a collective, a library call everywhere
  KernelCall,   // stays: a call of a kernel of an earlier run
  Recomputable, // cloned into each kernel that uses it
  Terminator,   // stays
  Unknown,      // side effects the partition cannot place: an error
};

/// The kernels already in the module, by name: the pass may run on its own
/// output (modelc compiles a planned module that way).
using KernelsByName = llvm::StringMap<func::FuncOp>;

Role classifyOp(Operation *op, const KernelsByName &kernels) {
  if (op->hasTrait<OpTrait::IsTerminator>())
    return Role::Terminator;
  if (isa<mdlrt::GemmOp, mdlrt::AllReduceOp>(op))
    return Role::LibraryCall;
  if (auto call = dyn_cast<func::CallOp>(op))
    if (kernels.contains(call.getCallee()))
      return Role::KernelCall;
  // A scalar load is recomputed too, when nothing in between may write what
  // it reads (checked per kernel).
  if (isa<memref::LoadOp>(op))
    return Role::Recomputable;
  if (op->getNumResults() == 0 &&
      (op->getNumRegions() > 0 || isa<memref::CopyOp, memref::StoreOp>(op)))
    return Role::Kernel;
  // Views, constants, scalar arithmetic, and region ops that only compute
  // values (an scf.for carrying a scalar).
  if (isMemoryEffectFree(op))
    return Role::Recomputable;
  return Role::Unknown;
}

/// Whether `value` is passed to the kernels that use it rather than
/// recomputed in them: the arena, a `memref.view` of it at a constant byte
/// shift (a buffer), or an `mdlrt.launch_constant`.
bool isPassedValue(Value value, Value arena) {
  if (value == arena)
    return true;
  if (auto view = value.getDefiningOp<memref::ViewOp>())
    return view.getSource() == arena &&
           modelc::isBarePointerMemRef(view.getType()) &&
           getConstantIntValue(view.getByteShift());
  return value.getDefiningOp<mdlrt::LaunchConstantOp>() != nullptr;
}

/// Work whose memref operands may have any layout: a direct operand of it
/// can be replaced by a buffer argument of the same shape.
bool takesAnyLayout(Operation *work) {
  return isa<linalg::LinalgOp, memref::CopyOp, memref::StoreOp>(work);
}

/// One argument of a kernel to be: a value of the function passed as it is
/// (the arena, a view of it, a launch constant), or a contiguous
/// operand of the work passed as a view of the arena at `shift` of its own
/// (`type`, identity layout), so that the kernel does not depend on where
/// in a larger buffer its operand lies.
struct PlannedArgument {
  Value value;
  std::optional<int64_t> shift;
  MemRefType type;
};

/// One kernel to be: the work op, its arguments and, in the function's
/// order, the ops to clone before it.
struct KernelPlan {
  Operation *work;
  std::string name;
  SmallVector<Operation *> clones;
  SmallVector<PlannedArgument> arguments;
};

/// Partitions one program function. Plans every kernel first, so that an
/// error leaves the function as it was, then rewrites.
class FunctionPartition {
public:
  FunctionPartition(func::FuncOp function, int64_t firstIndex,
                    const KernelsByName &existingKernels)
      : function(function), body(&function.getBody().front()),
        arena(function.getArgument(0)), firstIndex(firstIndex),
        existingKernels(existingKernels) {}

  /// Finds the kernels and what each clones; `symbols` are the names
  /// taken, to which it adds the kernels'.
  LogicalResult plan(llvm::StringSet<> &symbols);
  /// Creates the kernels before the function, calls them in place of their
  /// work, and erases what the function no longer uses.
  void rewrite();
  size_t numKernels() const { return kernels.size(); }

private:
  LogicalResult collectClones(KernelPlan &kernel, int64_t index);
  LogicalResult traceUses(KernelPlan &kernel, int64_t index,
                          ArrayRef<Value> roots,
                          llvm::SetVector<Operation *> &clones,
                          llvm::SetVector<Value> &passed);
  std::optional<int64_t>
  getOwnBufferShift(Value operand, Operation *work,
                    const llvm::SetVector<Operation *> &clones);
  Value getOwnBuffer(OpBuilder &builder, Location loc,
                     const PlannedArgument &argument);
  LogicalResult checkLoad(memref::LoadOp load, Operation *work, int64_t index);
  Role classify(Operation *op) const { return classifyOp(op, existingKernels); }
  const std::optional<SmallVector<modelc::ArenaRange>> &
  getWrittenRanges(Operation *op);

  func::FuncOp function;
  Block *body;
  Value arena;
  int64_t firstIndex;
  const KernelsByName &existingKernels;
  SmallVector<KernelPlan> kernels;
  /// Position of each top-level op, before the rewrite.
  DenseMap<Operation *, size_t> positions;
  SmallVector<Operation *> order;
  DenseMap<Operation *, std::optional<SmallVector<modelc::ArenaRange>>>
      writtenRanges;
  /// For each load, the position up to which no op may write what it reads:
  /// the ops before it were checked for an earlier kernel.
  DenseMap<Operation *, size_t> loadCheckedUntil;
  /// The views of the arena made for buffers of their own, by byte shift
  /// and type.
  DenseMap<std::pair<int64_t, Type>, Value> ownBuffers;
  /// The last of them, after which the next goes: they stay in order.
  Operation *lastOwnBuffer = nullptr;
};

LogicalResult FunctionPartition::plan(llvm::StringSet<> &symbols) {
  for (Operation &op : *body) {
    positions[&op] = order.size();
    order.push_back(&op);
    switch (classify(&op)) {
    case Role::Kernel: {
      int64_t index = firstIndex + kernels.size();
      std::string name = (function.getSymName() + "_k" + Twine(index)).str();
      if (!symbols.insert(name).second)
        return op.emitError("the name of kernel ")
               << index << ", '" << name << "', is taken";
      kernels.push_back({&op, name, {}});
      break;
    }
    case Role::Unknown:
      return op.emitError("the kernel partition cannot place this op: it has "
                          "side effects, and is neither work for a kernel "
                          "(an op with regions and no results, memref.copy, "
                          "memref.store) nor mdlrt.gemm");
    default:
      break;
    }
  }
  for (auto [ordinal, kernel] : llvm::enumerate(kernels))
    if (failed(collectClones(kernel, firstIndex + ordinal)))
      return failure();
  return success();
}

/// The ops to clone for `kernel.work` and the values it reaches from
/// outside (each in pending order): what `roots` and the regions of the
/// work use, followed through the ops that compute them, up to the passed
/// values. Fails on a scalar load that a write in between makes invalid.
LogicalResult FunctionPartition::traceUses(KernelPlan &kernel, int64_t index,
                                           ArrayRef<Value> roots,
                                           llvm::SetVector<Operation *> &clones,
                                           llvm::SetVector<Value> &passed) {
  llvm::SetVector<Value> pending(roots.begin(), roots.end());
  getUsedValuesDefinedAbove(kernel.work->getRegions(), pending);
  for (size_t i = 0; i < pending.size(); ++i) {
    Value value = pending[i];
    if (isPassedValue(value, arena)) {
      passed.insert(value);
      continue;
    }
    // The function's only argument is the arena, and every top-level op
    // with results is recomputable or an error of plan().
    Operation *def = value.getDefiningOp();
    assert(def && def->getBlock() == body &&
           classify(def) == Role::Recomputable);
    if (!clones.insert(def))
      continue;
    if (auto load = dyn_cast<memref::LoadOp>(def))
      if (failed(checkLoad(load, kernel.work, index)))
        return failure();
    pending.insert(def->operand_begin(), def->operand_end());
    getUsedValuesDefinedAbove(def->getRegions(), pending);
  }
  return success();
}

/// The byte offset at which `operand` of the work can be passed as a buffer
/// of its own: a contiguous static memref at a known place in the arena,
/// which the work uses directly and nothing else in the kernel uses.
std::optional<int64_t> FunctionPartition::getOwnBufferShift(
    Value operand, Operation *work,
    const llvm::SetVector<Operation *> &clones) {
  auto type = dyn_cast<MemRefType>(operand.getType());
  if (!type || !takesAnyLayout(work) || modelc::isBarePointerMemRef(type) ||
      !memref::isStaticShapeAndContiguousRowMajor(type))
    return std::nullopt;
  // Its own offset and strides static, so that the range found is its own
  // (a dynamic one would be bounded by an ancestor's).
  if (!modelc::hasStaticLayout(type))
    return std::nullopt;
  for (Operation *user : operand.getUsers())
    if (user != work && (clones.contains(user) || work->isAncestor(user)))
      return std::nullopt;
  std::optional<modelc::ArenaRange> range =
      modelc::getArenaRange(operand, arena);
  if (!range ||
      range->end - range->begin != modelc::getBufferBytes(MemRefType::get(
                                       type.getShape(), type.getElementType())))
    return std::nullopt;
  return range->begin;
}

LogicalResult FunctionPartition::collectClones(KernelPlan &kernel,
                                               int64_t index) {
  // First every operand as it is, to learn which ops use which values;
  // then the contiguous operands only the work uses become buffers of
  // their own, and what only they needed is not cloned.
  SmallVector<Value> operands(kernel.work->getOperands());
  llvm::SetVector<Operation *> clones;
  llvm::SetVector<Value> passed;
  if (failed(traceUses(kernel, index, operands, clones, passed)))
    return failure();
  SmallVector<Value> roots;
  llvm::SmallDenseSet<Value> own;
  for (Value operand : operands) {
    if (own.contains(operand))
      continue;
    std::optional<int64_t> shift =
        getOwnBufferShift(operand, kernel.work, clones);
    if (!shift) {
      roots.push_back(operand);
      continue;
    }
    own.insert(operand);
    kernel.arguments.push_back(
        {operand, shift,
         MemRefType::get(
             cast<MemRefType>(operand.getType()).getShape(),
             cast<MemRefType>(operand.getType()).getElementType())});
  }
  if (!own.empty()) {
    clones.clear();
    passed.clear();
    if (failed(traceUses(kernel, index, roots, clones, passed)))
      return failure();
  }
  for (Value value : passed)
    kernel.arguments.push_back({value, std::nullopt, nullptr});
  kernel.clones = clones.takeVector();
  llvm::sort(kernel.clones, [&](Operation *a, Operation *b) {
    return positions[a] < positions[b];
  });
  return success();
}

const std::optional<SmallVector<modelc::ArenaRange>> &
FunctionPartition::getWrittenRanges(Operation *op) {
  auto [it, inserted] = writtenRanges.try_emplace(op);
  if (!inserted)
    return it->second;
  auto call = dyn_cast<func::CallOp>(op);
  if (!call) {
    it->second = modelc::getWrittenArenaRanges(op, arena);
    return it->second;
  }
  // A kernel writes what its body writes, relative to its arguments, which
  // the call places in the arena.
  func::FuncOp kernel = existingKernels.lookup(call.getCallee());
  std::optional<SmallVector<modelc::ArgumentWrite>> writes =
      modelc::getKernelWrites(kernel);
  std::optional<SmallVector<modelc::LaunchArgument>> arguments =
      modelc::getLaunchArguments(call, arena);
  if (writes && arguments)
    it->second = modelc::placeWrites(*writes, *arguments);
  return it->second;
}

/// The kernel loads again what the function loaded earlier: no kernel or
/// GEMM in between may write the bytes it reads.
LogicalResult FunctionPartition::checkLoad(memref::LoadOp load, Operation *work,
                                           int64_t index) {
  std::optional<modelc::ArenaRange> read =
      modelc::getArenaRange(load.getMemRef(), arena);
  size_t &checked = loadCheckedUntil[load];
  checked = std::max(checked, positions[load] + 1);
  for (size_t end = positions[work]; checked < end; ++checked) {
    Operation *between = order[checked];
    Role role = classify(between);
    if (role != Role::Kernel && role != Role::LibraryCall && role != Role::KernelCall)
      continue;
    const std::optional<SmallVector<modelc::ArenaRange>> &written =
        getWrittenRanges(between);
    if (read && written &&
        llvm::none_of(*written, [&](const modelc::ArenaRange &range) {
          return range.overlaps(*read);
        }))
      continue;
    InFlightDiagnostic diag = load.emitError()
                              << "cannot recompute this scalar inside kernel "
                              << index << ": ";
    if (!read)
      diag << "the bytes it loads are not a known range of the arena, and "
           << between->getName() << " writes to the arena before the kernel";
    else if (!written)
      diag << between->getName()
           << " may write anywhere in the arena before the kernel";
    else
      diag << between->getName()
           << " may write the bytes it loads before the kernel";
    diag.attachNote(between->getLoc()) << "written here";
    diag.attachNote(work->getLoc()) << "kernel " << index;
    return diag;
  }
  return success();
}

/// A view of the arena at the argument's shift and of its type, made once
/// per function at its start.
Value FunctionPartition::getOwnBuffer(OpBuilder &builder, Location loc,
                                      const PlannedArgument &argument) {
  Value &view = ownBuffers[{*argument.shift, argument.type}];
  if (view)
    return view;
  OpBuilder::InsertionGuard guard(builder);
  if (lastOwnBuffer)
    builder.setInsertionPointAfter(lastOwnBuffer);
  else
    builder.setInsertionPointToStart(body);
  Value shift = builder.create<arith::ConstantIndexOp>(loc, *argument.shift);
  auto created = builder.create<memref::ViewOp>(loc, argument.type, arena,
                                                shift, ValueRange());
  lastOwnBuffer = created;
  view = created;
  return view;
}

void FunctionPartition::rewrite() {
  OpBuilder builder(function);
  for (auto [ordinal, kernelPlan] : llvm::enumerate(kernels)) {
    int64_t index = firstIndex + ordinal;
    Operation *work = kernelPlan.work;
    SmallVector<Type> types;
    for (const PlannedArgument &argument : kernelPlan.arguments)
      types.push_back(argument.shift ? Type(argument.type)
                                     : argument.value.getType());
    builder.setInsertionPoint(function);
    auto kernel = builder.create<func::FuncOp>(
        work->getLoc(), kernelPlan.name, builder.getFunctionType(types, {}));
    kernel.setPrivate();
    kernel->setAttr(modelc::kKernelAttrName, builder.getI64IntegerAttr(index));

    Block *entry = kernel.addEntryBlock();
    IRMapping mapping;
    SmallVector<Value> operands;
    for (auto [argument, planned] :
         llvm::zip(entry->getArguments(), kernelPlan.arguments)) {
      mapping.map(planned.value, argument);
      operands.push_back(planned.shift
                             ? getOwnBuffer(builder, work->getLoc(), planned)
                             : planned.value);
    }
    OpBuilder kernelBuilder = OpBuilder::atBlockEnd(entry);
    for (Operation *clone : kernelPlan.clones)
      kernelBuilder.clone(*clone, mapping);
    kernelBuilder.clone(*work, mapping);
    kernelBuilder.create<func::ReturnOp>(work->getLoc());

    builder.setInsertionPoint(work);
    builder.create<func::CallOp>(work->getLoc(), kernel, operands);
    work->erase();
  }
  // What only the kernels used: users come after their operands, so one
  // backward sweep erases whole chains.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (op.use_empty() && classify(&op) == Role::Recomputable)
      op.erase();
}

/// `(memref<Nxi8>) -> ()` with one block: what --mdl-plan-memory makes of a
/// program function.
bool isPlannedFunction(func::FuncOp function) {
  return modelc::isArenaSignature(function.getFunctionType()) &&
         llvm::hasSingleElement(function.getBody());
}

struct MdlOutlineKernelsPass
    : modelc::impl::MdlOutlineKernelsBase<MdlOutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The manifest's function table order, so that kernel indices follow
    // the functions' indices.
    FailureOr<std::vector<modelc::ProgramFunction>> functions =
        modelc::collectProgramFunctions(module);
    if (failed(functions))
      return signalPassFailure();
    for (modelc::ProgramFunction &fn : *functions)
      if (!isPlannedFunction(fn.op)) {
        fn.op.emitError("a program function takes only the arena "
                        "(memref<Nxi8>): run --mdl-plan-memory first");
        return signalPassFailure();
      }

    llvm::StringSet<> symbols;
    for (Operation &op : *module.getBody())
      if (auto name =
              op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
        symbols.insert(name.getValue());
    // Kernels of an earlier run keep their indices; new ones follow.
    KernelsByName existingKernels;
    int64_t nextIndex = 0;
    for (auto function : module.getOps<func::FuncOp>())
      if (std::optional<int64_t> index = modelc::getKernelIndex(function)) {
        existingKernels[function.getSymName()] = function;
        nextIndex = std::max(nextIndex, *index + 1);
      }
    std::vector<FunctionPartition> partitions;
    for (const modelc::ProgramFunction &fn : *functions) {
      partitions.emplace_back(fn.op, nextIndex, existingKernels);
      if (failed(partitions.back().plan(symbols)))
        return signalPassFailure();
      nextIndex += partitions.back().numKernels();
    }
    for (FunctionPartition &partition : partitions)
      partition.rewrite();
  }
};

} // namespace
