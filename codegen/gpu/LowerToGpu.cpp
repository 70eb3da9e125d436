// --mdl-lower-to-gpu: the outlined module (docs/codegen/kernels.md) becomes
// a `gpu.module @modelc_kernels` with one `gpu.func ... kernel` per kernel,
// mapped onto threads by the table of docs/codegen/gpu.md, and each program
// function becomes its list of GPU steps (`mdl.gpu_steps`): kernel launches
// with their arguments (arena offsets of buffers, launch constants) and
// GEMMs with static addresses.
#include "codegen/Passes.h"
#include "codegen/gpu/GpuLowering.h"
#include "codegen/gpu/GpuTarget.h"
#include "codegen/memory/ArenaRanges.h"
#include "codegen/memory/KernelArguments.h"
#include "codegen/memory/KernelForm.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace modelc {
#define GEN_PASS_DEF_MDLLOWERTOGPU
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kKernelModuleName = "modelc_kernels";

/// A kernel's name in PTX: PTX identifiers take letters, digits and `_`.
std::string getPtxName(StringRef name, llvm::StringSet<> &taken) {
  std::string ptxName;
  for (char c : name)
    ptxName += llvm::isAlnum(c) || c == '_' ? c : '_';
  if (ptxName.empty() || llvm::isDigit(ptxName.front()))
    ptxName = "k_" + ptxName;
  std::string unique = ptxName;
  for (unsigned suffix = 1; !taken.insert(unique).second; ++suffix)
    unique = ptxName + "_" + std::to_string(suffix);
  return unique;
}

/// The kernel's one piece of work: its one op without results (the views,
/// constants and scalars it recomputes all have results).
FailureOr<Operation *> findWork(func::FuncOp kernel) {
  Operation *work = nullptr;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    if (op.getNumResults() > 0)
      continue;
    if (work)
      return kernel.emitError("a kernel has one op without results (its "
                              "work), this one has more: run "
                              "--mdl-outline-kernels");
    work = &op;
  }
  if (!work)
    return kernel.emitError("a kernel without work");
  return work;
}

/// The most terms any one result of `work` sums: the largest product of a
/// nested linalg op's reduction loop sizes (dynamic sizes count as 1),
/// times the trip counts of the scf.for loops around it in `work` (a time
/// loop, lstm_scan's, carries each step's rounding into the next); 0 when
/// it reduces nothing; a work op's own `mdl.reduction` when it has one.
/// kernelcheck widens its tolerance by it.
int64_t getReductionLength(Operation *work) {
  // A fused kernel's loops say it themselves (attention's: the keys or
  // queries a row visits times the head size).
  if (auto terms = work->getAttrOfType<IntegerAttr>("mdl.reduction"))
    return terms.getInt();
  int64_t longest = 0;
  work->walk([&](linalg::LinalgOp op) {
    int64_t terms = 1;
    for (Operation *parent = op->getParentOp(); parent;
         parent = parent->getParentOp()) {
      if (auto loop = dyn_cast<scf::ForOp>(parent))
        if (std::optional<int64_t> trips = constantTripCount(
                loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
          terms *= std::max<int64_t>(*trips, 1);
      if (parent == work)
        break;
    }
    bool reduces = false;
    for (auto [size, iterator] : llvm::zip(op.getStaticLoopRanges(),
                                           op.getIteratorTypesArray())) {
      if (iterator != utils::IteratorType::reduction)
        continue;
      reduces = true;
      if (!ShapedType::isDynamic(size))
        terms *= size;
    }
    if (reduces)
      longest = std::max(longest, terms);
  });
  return longest;
}

/// The ranges a step writes, as few as possible: sorted, and those of one
/// element type that overlap or touch merged.
SmallVector<modelc::ArenaRange>
mergeWrites(SmallVector<modelc::ArenaRange> ranges) {
  llvm::sort(ranges, [](const modelc::ArenaRange &a,
                        const modelc::ArenaRange &b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  SmallVector<modelc::ArenaRange> merged;
  for (const modelc::ArenaRange &range : ranges) {
    if (range.end <= range.begin)
      continue;
    if (!merged.empty() && merged.back().element == range.element &&
        range.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, range.end);
      continue;
    }
    merged.push_back(range);
  }
  return merged;
}

class GpuLowering {
public:
  GpuLowering(ModuleOp module, unsigned parts)
      : module(module), builder(module.getContext()), requestedParts(parts) {}

  LogicalResult run() {
    SmallVector<std::pair<int64_t, func::FuncOp>> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (std::optional<int64_t> index = modelc::getKernelIndex(func))
        kernels.push_back({*index, func});
    llvm::sort(kernels, [](auto &a, auto &b) { return a.first < b.first; });

    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    builder.getUnitAttr());
    createPartModules(kernels.size());
    // GpuProgram.kernels[i] is kernel i, as modelc_cpu_kernels[i] is; the
    // parts hold consecutive ranges of kernels.
    for (auto [position, entry] : llvm::enumerate(kernels)) {
      auto &[index, kernel] = entry;
      if (index != int64_t(position))
        return kernel.emitError("kernel indices are 0..n-1, each once; this "
                                "one is ")
               << index << ", expected " << position;
      size_t part = position * partModules.size() / kernels.size();
      if (failed(lowerKernel(kernel, part)))
        return failure();
    }
    module->setAttr(modelc::kGpuKernelsAttrName,
                    builder.getArrayAttr(kernelTable));
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr("mdl.function") && failed(lowerProgramFunction(func)))
        return failure();
    for (auto &[index, kernel] : kernels)
      kernel.erase();
    return success();
  }

private:
  /// The gpu.modules of the parts: `modelc_kernels` (part 0), then
  /// `modelc_kernels_part1`, ..., each marked with its number. An entry or a
  /// data set may have the name: a suffix `_1`, ... then.
  void createPartModules(size_t kernels) {
    size_t parts = modelc::choosePartCount(requestedParts, kernels);
    builder.setInsertionPointToEnd(module.getBody());
    for (size_t part = 0; part < parts; ++part) {
      std::string base = kKernelModuleName.str();
      if (part > 0)
        base += "_part" + std::to_string(part);
      std::string name = base;
      for (unsigned suffix = 1; module.lookupSymbol(name); ++suffix)
        name = base + "_" + std::to_string(suffix);
      auto partModule = builder.create<gpu::GPUModuleOp>(module.getLoc(), name);
      partModule->setAttr(modelc::kGpuPartAttrName,
                          builder.getI64IntegerAttr(part));
      partModules.push_back(partModule);
    }
  }

  LogicalResult lowerKernel(func::FuncOp kernel, size_t part) {
    FunctionType type = kernel.getFunctionType();
    if (!modelc::isKernelSignature(type))
      return kernel.emitError("a kernel takes buffers (static memrefs with "
                              "identity layout) and i64 launch arguments, and "
                              "returns nothing");
    FailureOr<Operation *> work = findWork(kernel);
    if (failed(work))
      return failure();

    std::string name = getPtxName(kernel.getSymName(), ptxNames);
    gpu::GPUModuleOp kernelModule = partModules[part];
    builder.setInsertionPoint(kernelModule.getBody()->getTerminator());
    auto gpuFunc = builder.create<gpu::GPUFuncOp>(kernel.getLoc(), name, type);
    gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                     builder.getUnitAttr());
    kernelNames[kernel.getSymName()] = SymbolRefAttr::get(
        kernelModule.getSymNameAttr(),
        {FlatSymbolRefAttr::get(builder.getContext(), name)});
    if (std::optional<SmallVector<modelc::ArgumentWrite>> writes =
            modelc::getKernelWrites(kernel))
      kernelWrites[kernel.getSymName()] = std::move(*writes);
    int64_t terms = getReductionLength(*work);
    if (terms)
      gpuFunc->setAttr("mdl.reduction", builder.getI64IntegerAttr(terms));

    OpBuilder body = OpBuilder::atBlockBegin(&gpuFunc.getBody().front());
    IRMapping mapping;
    mapping.map(kernel.getArguments(), gpuFunc.getArguments());
    modelc::KernelBuilder kb{body, kernel.getLoc(), mapping};
    FailureOr<modelc::LaunchShape> shape;
    for (Operation &op : kernel.getBody().front().without_terminator()) {
      if (&op != *work) {
        body.clone(op, mapping);
        if (auto global = dyn_cast<memref::GetGlobalOp>(op))
          copyGlobal(global, kernelModule);
        continue;
      }
      kb.loc = op.getLoc();
      shape = modelc::emitKernelWork(kb, &op);
      if (failed(shape))
        return failure();
    }
    body.create<gpu::ReturnOp>(kernel.getLoc());
    // A launch constant defined inside the work (none is today: the
    // outlining passes the function's as arguments) is a constant here.
    modelc::materializeLaunchConstants(gpuFunc);
    gpuFunc->setAttr("mdl.grid", builder.getI64IntegerAttr(shape->grid));
    gpuFunc->setAttr("mdl.block", builder.getI64IntegerAttr(shape->block));
    gpuFunc.setKnownBlockSizeAttr(
        builder.getDenseI32ArrayAttr({int32_t(shape->block), 1, 1}));
    addToKernelTable(name, *shape, type, terms, part);
    return success();
  }

  /// {name, grid, block, params, param_bytes, part[, reduction]}: what the
  /// GPU program says of the kernel, kept apart from the gpu.func, which
  /// the lowering to NVVM replaces.
  void addToKernelTable(StringRef name, const modelc::LaunchShape &shape,
                        FunctionType type, int64_t terms, size_t part) {
    NamedAttrList entry;
    entry.append("name", builder.getStringAttr(name));
    entry.append("grid", builder.getI64IntegerAttr(shape.grid));
    entry.append("block", builder.getI64IntegerAttr(shape.block));
    SmallVector<Attribute> params;
    SmallVector<int64_t> bytes;
    for (Type input : type.getInputs()) {
      auto buffer = dyn_cast<MemRefType>(input);
      params.push_back(builder.getStringAttr(buffer ? "buffer" : "u64"));
      bytes.push_back(buffer ? modelc::getBufferBytes(buffer) : 8);
    }
    entry.append("params", builder.getArrayAttr(params));
    entry.append("param_bytes", builder.getDenseI64ArrayAttr(bytes));
    entry.append("part", builder.getI64IntegerAttr(part));
    if (terms)
      entry.append("reduction", builder.getI64IntegerAttr(terms));
    kernelTable.push_back(entry.getDictionary(builder.getContext()));
  }

  /// A constant the kernel reads: its gpu.module gets its own copy.
  void copyGlobal(memref::GetGlobalOp get, gpu::GPUModuleOp kernelModule) {
    if (kernelModule.lookupSymbol(get.getName()))
      return;
    auto global = module.lookupSymbol<memref::GlobalOp>(get.getName());
    if (!global)
      return;
    builder.setInsertionPointToStart(kernelModule.getBody());
    builder.clone(*global);
  }

  /// The function's steps, in order, as `mdl.gpu_steps`; its body then has
  /// nothing left to do on the GPU and is emptied.
  LogicalResult lowerProgramFunction(func::FuncOp func) {
    if (func.getNumArguments() != 1)
      return func.emitError("a program function takes only the arena: run "
                            "--mdl-plan-memory first");
    Value arena = func.getArgument(0);
    SmallVector<Attribute> steps;
    Block &body = func.getBody().front();
    for (Operation &op : body.without_terminator()) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        auto name = kernelNames.find(call.getCallee());
        if (name == kernelNames.end())
          return call.emitError("a program function calls only kernels "
                                "(mdl.kernel functions)");
        std::optional<SmallVector<modelc::LaunchArgument>> arguments =
            modelc::getLaunchArguments(call, arena);
        if (!arguments)
          return call.emitError("a kernel's argument is neither a view of the "
                                "arena at a constant offset nor an i64 "
                                "constant");
        NamedAttrList step;
        step.append("launch", name->second);
        SmallVector<int64_t> values;
        for (const modelc::LaunchArgument &argument : *arguments)
          values.push_back(argument.value);
        step.append("args", builder.getDenseI64ArrayAttr(values));
        auto writes = kernelWrites.find(call.getCallee());
        if (writes != kernelWrites.end())
          appendWrites(step, mergeWrites(modelc::placeWrites(writes->second,
                                                             *arguments)));
        steps.push_back(step.getDictionary(builder.getContext()));
        continue;
      }
      if (auto gemm = dyn_cast<mdlrt::GemmOp>(op)) {
        FailureOr<DictionaryAttr> step = modelc::describeGemm(gemm, arena);
        if (failed(step))
          return failure();
        NamedAttrList gemmStep;
        gemmStep.append("gemm", *step);
        if (std::optional<modelc::ArenaRange> writes =
                modelc::getArenaRange(gemm.getC(), arena)) {
          writes->element =
              cast<MemRefType>(gemm.getC().getType()).getElementType();
          appendWrites(gemmStep, {*writes});
        }
        steps.push_back(gemmStep.getDictionary(builder.getContext()));
        continue;
      }
      if (auto bucket = dyn_cast<mdlrt::AllReduceOp>(op)) {
        NamedAttrList reduceStep;
        reduceStep.append("all_reduce",
                          builder.getDictionaryAttr(builder.getNamedAttr(
                              "bucket", bucket.getBucketAttr())));
        SmallVector<modelc::ArenaRange> buffers;
        for (Value buffer : bucket.getBuffers()) {
          std::optional<modelc::ArenaRange> range =
              modelc::getArenaRange(buffer, arena);
          if (!range)
            return bucket.emitError("a bucket's buffer is not a known range "
                                    "of the arena");
          range->element =
              cast<MemRefType>(buffer.getType()).getElementType();
          buffers.push_back(*range);
        }
        appendWrites(reduceStep, buffers);
        steps.push_back(reduceStep.getDictionary(builder.getContext()));
        continue;
      }
      // Views, constants and scalars: each kernel recomputes what it needs.
      if (isMemoryEffectFree(&op) || isa<memref::LoadOp>(op))
        continue;
      return op.emitError("a program function on the GPU is kernel calls, "
                          "GEMMs and all-reduces; this op needs "
                          "--mdl-outline-kernels first");
    }
    func->setAttr("mdl.gpu_steps", builder.getArrayAttr(steps));
    // Users before what they use: from the back.
    while (Operation *op = body.getTerminator()->getPrevNode())
      op->erase();
    return success();
  }

  /// The bytes a step may write, `writes = [{offset, bytes, type}]`, as the
  /// manifest's GpuStep.writes (the runtime's kernelcheck compares them).
  void appendWrites(NamedAttrList &step,
                    ArrayRef<modelc::ArenaRange> ranges) {
    SmallVector<Attribute> writes;
    for (const modelc::ArenaRange &range : ranges) {
      NamedAttrList write;
      write.append("offset", builder.getI64IntegerAttr(range.begin));
      write.append("bytes", builder.getI64IntegerAttr(range.end - range.begin));
      if (range.element)
        write.append("type", TypeAttr::get(range.element));
      writes.push_back(write.getDictionary(builder.getContext()));
    }
    step.append("writes", builder.getArrayAttr(writes));
  }

  ModuleOp module;
  OpBuilder builder;
  unsigned requestedParts;
  SmallVector<gpu::GPUModuleOp> partModules;
  llvm::StringSet<> ptxNames;
  /// Each kernel's gpu.func, as a launch names it.
  llvm::StringMap<SymbolRefAttr> kernelNames;
  SmallVector<Attribute> kernelTable;
  /// What each kernel writes, relative to its buffer arguments.
  llvm::StringMap<SmallVector<modelc::ArgumentWrite>> kernelWrites;
};

struct MdlLowerToGpuPass : modelc::impl::MdlLowerToGpuBase<MdlLowerToGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(GpuLowering(getOperation(), parts).run()))
      signalPassFailure();
  }
};

} // namespace
