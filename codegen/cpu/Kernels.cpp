// The kernels of --mdl-outline-kernels on the CPU: found by their index,
// named after the program function that first calls them, told what their
// calls guarantee about their buffers, reachable from the kernel table
// through an entry of one signature, and kept apart from their callers in
// LLVM (internal, never inlined).
#include "codegen/cpu/CpuLowering.h"
#include "codegen/memory/KernelArguments.h"
#include "codegen/memory/KernelForm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace modelc {

FailureOr<SmallVector<func::FuncOp>>
collectKernels(ModuleOp module, ArrayRef<ProgramFunction> functions) {
  SmallVector<func::FuncOp> kernels;
  llvm::StringMap<func::FuncOp> byName;
  for (auto function : module.getOps<func::FuncOp>()) {
    std::optional<int64_t> index = getKernelIndex(function);
    if (!index)
      continue;
    if (*index < 0 || (size_t(*index) < kernels.size() && kernels[*index]))
      return function.emitError("kernel index ") << *index << " is not unique";
    if (size_t(*index) >= kernels.size())
      kernels.resize(*index + 1);
    kernels[*index] = function;
    byName[function.getSymName()] = function;
  }
  for (auto [index, kernel] : llvm::enumerate(kernels))
    if (!kernel)
      return module.emitError("no kernel has index ") << index;

  // `modelc_fn_0_T_fwd_bwd_k3` tells a profile which function kernel 3
  // belongs to; the calls follow the new name.
  for (const ProgramFunction &fn : functions)
    for (auto call : func::FuncOp(fn.op).getBody().getOps<func::CallOp>()) {
      func::FuncOp kernel = byName.lookup(call.getCallee());
      if (!kernel)
        continue;
      if (kernel.getSymName() == call.getCallee())
        kernel.setSymName(fn.symbol + "_k" +
                          std::to_string(*getKernelIndex(kernel)));
      call.setCallee(kernel.getSymName());
    }
  return kernels;
}

namespace {

/// The CPU arena's alignment (ProgramABI.h), the most an offset in it can
/// promise.
constexpr int64_t kArenaAlignment = 64;

int64_t getOffsetAlignment(int64_t offset) {
  return offset == 0 ? kArenaAlignment
                     : std::min(kArenaAlignment, offset & -offset);
}

} // namespace

void addKernelArgumentPromises(ModuleOp module,
                               ArrayRef<ProgramFunction> functions,
                               ArrayRef<func::FuncOp> kernels) {
  // Every call in the module: one that is not a program function's with
  // arguments at known places leaves its kernel without promises.
  DenseMap<Operation *, Value> arenas;
  for (const ProgramFunction &fn : functions)
    arenas[fn.op] = func::FuncOp(fn.op).getArgument(0);
  llvm::StringMap<SmallVector<SmallVector<LaunchArgument>>> calls;
  llvm::StringSet<> unknown;
  module.walk([&](func::CallOp call) {
    auto arena = arenas.find(call->getParentOp());
    std::optional<SmallVector<LaunchArgument>> arguments =
        arena == arenas.end() ? std::nullopt
                              : getLaunchArguments(call, arena->second);
    if (arguments)
      calls[call.getCallee()].push_back(std::move(*arguments));
    else
      unknown.insert(call.getCallee());
  });
  Builder builder(module.getContext());
  for (func::FuncOp kernel : kernels) {
    auto found = calls.find(kernel.getSymName());
    if (found == calls.end() || unknown.contains(kernel.getSymName()))
      continue;
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
      if (!isa<MemRefType>(kernel.getArgument(i).getType()))
        continue;
      int64_t alignment = kArenaAlignment;
      bool alone = true;
      for (const SmallVector<LaunchArgument> &arguments : found->second) {
        const LaunchArgument &mine = arguments[i];
        alignment = std::min(alignment, getOffsetAlignment(mine.value));
        for (auto [j, other] : llvm::enumerate(arguments))
          if (j != i && other.kind == LaunchArgument::Kind::Buffer &&
              mine.bytes > 0 && other.bytes > 0 &&
              mine.value < other.value + other.bytes &&
              other.value < mine.value + mine.bytes)
            alone = false;
      }
      kernel.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        builder.getI64IntegerAttr(alignment));
      if (alone)
        kernel.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                          builder.getUnitAttr());
    }
  }
}

SmallVector<std::string> addKernelEntries(ModuleOp module,
                                          ArrayRef<func::FuncOp> kernels,
                                          MemRefType arenaType) {
  SmallVector<std::string> names;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  Type i64 = builder.getI64Type();
  SymbolTable symbols(module);
  for (func::FuncOp kernel : kernels) {
    Location loc = kernel.getLoc();
    auto argsType = MemRefType::get({int64_t(kernel.getNumArguments())}, i64);
    auto entry = builder.create<func::FuncOp>(
        loc, (kernel.getSymName() + "_entry").str(),
        builder.getFunctionType({arenaType, argsType}, {}));
    // A suffix if a symbol of the program has the name.
    symbols.insert(entry);
    entry.setArgAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                     builder.getI64IntegerAttr(kArenaAlignment));
    Block *body = entry.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockEnd(body);
    SmallVector<Value> operands;
    for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
      Value position = b.create<arith::ConstantIndexOp>(loc, i);
      Value arg = b.create<memref::LoadOp>(loc, body->getArgument(1), position);
      if (!isa<MemRefType>(type)) {
        operands.push_back(arg);
        continue;
      }
      Value offset = b.create<arith::IndexCastOp>(loc, b.getIndexType(), arg);
      operands.push_back(b.create<memref::ViewOp>(
          loc, type, body->getArgument(0), offset, ValueRange()));
    }
    b.create<func::CallOp>(loc, kernel, operands);
    b.create<func::ReturnOp>(loc);
    names.push_back(entry.getSymName().str());
  }
  return names;
}

void markKernelsInternal(ModuleOp module, ArrayRef<std::string> names) {
  llvm::StringSet<> kernels;
  kernels.insert(names.begin(), names.end());
  for (auto function : module.getOps<LLVM::LLVMFuncOp>())
    if (kernels.contains(function.getSymName())) {
      function.setLinkage(LLVM::Linkage::Internal);
      // LLVM would inline a function called once, and undo the split.
      function.setNoInline(true);
    }
}

} // namespace modelc
