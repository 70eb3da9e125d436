// --mdl-serialize-gpu: the kernels, lowered to NVVM part by part (the
// stage mdl-kernels-to-gpu, codegen/Pipeline.cpp), go through LLVM's NVPTX
// backend (the #nvvm.target serialiser of gpu-module-to-binary, libdevice
// linked) to PTX for each part and architecture, those in parallel; each
// part becomes a gpu.binary, and the kernel table, the step lists and the
// PTX images land in one module attribute (kGpuProgramAttrName) that
// --mdl-assemble-gpu adds cubins to and the manifest writer reads.
#include "codegen/Passes.h"
#include "codegen/gpu/GpuTarget.h"
#include "codegen/gpu/Ptxas.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Threading.h"
#include "llvm/Support/MathExtras.h"

namespace modelc {
#define GEN_PASS_DEF_MDLSERIALIZEGPU
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

/// The cuBLASLt workspace after the CPU plan, and its alignment.
constexpr uint64_t kWorkspaceBytes = uint64_t(32) << 20;
constexpr uint64_t kWorkspaceAlignment = 256;

/// The gpu.modules of --mdl-lower-to-gpu, by part number.
FailureOr<SmallVector<gpu::GPUModuleOp>> collectParts(ModuleOp module) {
  SmallVector<gpu::GPUModuleOp> parts;
  for (auto part : module.getOps<gpu::GPUModuleOp>()) {
    auto number = part->getAttrOfType<IntegerAttr>(modelc::kGpuPartAttrName);
    if (!number)
      continue;
    size_t index = size_t(number.getInt());
    if (index >= parts.size())
      parts.resize(index + 1);
    if (parts[index])
      return part.emitError("two gpu.modules of part ") << index;
    parts[index] = part;
  }
  if (parts.empty())
    return emitError(module.getLoc(),
                     "no gpu.module @modelc_kernels: run --mdl-lower-to-gpu "
                     "first");
  for (auto [index, part] : llvm::enumerate(parts))
    if (!part)
      return emitError(module.getLoc(), "no gpu.module of part ") << index;
  return parts;
}

/// The steps of each program function, in the function table's order:
/// {kind = "launch", kernel = index, args = [...]}, {kind = "gemm", gemm =
/// {...}} or {kind = "all_reduce", all_reduce = {bucket}}, with `writes`
/// when the bytes written are known (an all-reduce's buffers, always).
LogicalResult collectFunctions(ModuleOp module,
                               const llvm::StringMap<int64_t> &kernelIndex,
                               SmallVectorImpl<Attribute> &functions) {
  Builder builder(module.getContext());
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func->hasAttr("mdl.function"))
      continue;
    auto steps = func->getAttrOfType<ArrayAttr>("mdl.gpu_steps");
    if (!steps)
      return func.emitError("no mdl.gpu_steps: run --mdl-lower-to-gpu first");
    SmallVector<Attribute> described;
    for (auto step : steps.getAsRange<DictionaryAttr>()) {
      NamedAttrList fields;
      if (Attribute writes = step.get("writes"))
        fields.append("writes", writes);
      if (auto gemm = step.getAs<DictionaryAttr>("gemm")) {
        fields.append("kind", builder.getStringAttr("gemm"));
        fields.append("gemm", gemm);
      } else if (auto bucket = step.getAs<DictionaryAttr>("all_reduce")) {
        fields.append("kind", builder.getStringAttr("all_reduce"));
        fields.append("all_reduce", bucket);
      } else {
        auto launch = step.getAs<SymbolRefAttr>("launch");
        auto index = launch ? kernelIndex.find(launch.getLeafReference())
                            : kernelIndex.end();
        if (index == kernelIndex.end())
          return func.emitError("a GPU step that is neither a launch of a "
                                "kernel of @modelc_kernels, a gemm nor an "
                                "all-reduce");
        fields.append("kind", builder.getStringAttr("launch"));
        fields.append("kernel", builder.getI64IntegerAttr(index->second));
        if (Attribute args = step.get("args"))
          fields.append("args", args);
      }
      described.push_back(fields.getDictionary(module.getContext()));
    }
    functions.push_back(builder.getArrayAttr(described));
  }
  return success();
}

struct MdlSerializeGpuPass
    : modelc::impl::MdlSerializeGpuBase<MdlSerializeGpuPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    modelc::registerGpuDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    Builder builder(context);
    FailureOr<SmallVector<gpu::GPUModuleOp>> parts = collectParts(module);
    auto kernels =
        module->getAttrOfType<ArrayAttr>(modelc::kGpuKernelsAttrName);
    if (failed(parts) || !kernels) {
      if (succeeded(parts))
        emitError(module.getLoc(), "no kernel table (")
            << modelc::kGpuKernelsAttrName << "): run --mdl-lower-to-gpu first";
      return signalPassFailure();
    }
    llvm::StringMap<int64_t> kernelIndex;
    for (auto [index, kernel] :
         llvm::enumerate(kernels.getAsRange<DictionaryAttr>()))
      kernelIndex[kernel.getAs<StringAttr>("name").getValue()] = index;
    SmallVector<Attribute> functions;
    if (failed(collectFunctions(module, kernelIndex, functions)))
      return signalPassFailure();

    SmallVector<std::string> requested(archs.begin(), archs.end());
    if (requested.empty())
      requested = {"sm_80", "sm_90"};
    SmallVector<Attribute> targets;
    for (const std::string &arch : requested) {
      if (llvm::Error error = modelc::checkGpuArch(arch)) {
        emitError(module.getLoc(), llvm::toString(std::move(error)));
        return signalPassFailure();
      }
      targets.push_back(
          NVVM::NVVMTargetAttr::get(context, 2, "nvptx64-nvidia-cuda", arch));
    }
    for (gpu::GPUModuleOp part : *parts)
      part.setTargetsAttr(builder.getArrayAttr(targets));

    // Job j: part j % parts of architecture j / parts.
    size_t partCount = parts->size();
    SmallVector<std::string> ptx(targets.size() * partCount);
    if (failed(compile(*parts, targets, ptx)))
      return signalPassFailure();

    SmallVector<Attribute> images;
    for (auto [job, text] : llvm::enumerate(ptx)) {
      StringRef arch =
          cast<NVVM::NVVMTargetAttr>(targets[job / partCount]).getChip();
      images.push_back(builder.getDictionaryAttr(
          {builder.getNamedAttr("arch", builder.getStringAttr(arch)),
           builder.getNamedAttr("kind", builder.getStringAttr("ptx")),
           builder.getNamedAttr(
               "part", builder.getI64IntegerAttr(int64_t(job % partCount))),
           builder.getNamedAttr("data", builder.getStringAttr(text))}));
    }
    // As gpu-module-to-binary leaves them: a gpu.binary per part.
    for (auto [index, part] : llvm::enumerate(*parts)) {
      SmallVector<Attribute> objects;
      for (auto [t, target] : llvm::enumerate(targets))
        objects.push_back(gpu::ObjectAttr::get(
            context, target, gpu::CompilationTarget::Assembly,
            builder.getStringAttr(ptx[t * partCount + index]), nullptr));
      OpBuilder binaryBuilder(part);
      auto binary = binaryBuilder.create<gpu::BinaryOp>(
          part.getLoc(), part.getName(), nullptr, objects);
      binary->setAttr(modelc::kGpuPartAttrName,
                      builder.getI64IntegerAttr(index));
      part.erase();
    }

    auto arena = module->getAttrOfType<IntegerAttr>("mdl.arena_bytes");
    if (!arena) {
      emitError(module.getLoc(), "no memory plan: run --mdl-plan-memory first");
      return signalPassFailure();
    }
    uint64_t workspace = llvm::alignTo(arena.getInt(), kWorkspaceAlignment);
    NamedAttrList program;
    program.append("arena_bytes",
                   builder.getI64IntegerAttr(workspace + kWorkspaceBytes));
    program.append("workspace_offset", builder.getI64IntegerAttr(workspace));
    program.append("workspace_bytes",
                   builder.getI64IntegerAttr(kWorkspaceBytes));
    program.append("kernels", kernels);
    program.append("functions", builder.getArrayAttr(functions));
    program.append("images", builder.getArrayAttr(images));
    module->setAttr(modelc::kGpuProgramAttrName,
                    program.getDictionary(context));
    module->removeAttr(modelc::kGpuKernelsAttrName);
  }

private:
  /// LLVM's NVPTX backend (libdevice linked) on each part for each target,
  /// all in parallel on the context's threads (modelc -j): each a whole
  /// LLVM compilation of its kernels.
  LogicalResult compile(ArrayRef<gpu::GPUModuleOp> parts,
                        ArrayRef<Attribute> targets,
                        MutableArrayRef<std::string> ptx) {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // libdevice comes with the toolkit of the option, else with the one
    // that ptxas is in when no variable names one.
    std::string toolkit =
        cudaToolkit.empty() ? modelc::findCudaToolkit(modelc::findPtxas("auto"))
                            : std::string(cudaToolkit);
    gpu::TargetOptions options(toolkit, {}, "",
                               gpu::CompilationTarget::Assembly,
                               [&]() { return &symbols; });
    auto jobs = llvm::to_vector(llvm::seq<size_t>(0, ptx.size()));
    LogicalResult compiled = failableParallelForEach(
        &getContext(), jobs, [&](size_t job) -> LogicalResult {
          auto target =
              cast<gpu::TargetAttrInterface>(targets[job / parts.size()]);
          std::optional<SmallVector<char, 0>> object =
              target.serializeToObject(parts[job % parts.size()], options);
          if (!object)
            return failure();
          // The schema's PTX has no trailing NUL; the serialiser adds one.
          ptx[job] = StringRef(object->data(), object->size()).rtrim('\0');
          return success();
        });
    if (failed(compiled))
      return emitError(module.getLoc(),
                       "the GPU kernels did not compile to PTX");
    for (const std::string &text : ptx)
      if (text.find(".extern .func") != std::string::npos &&
          text.find("__nv_") != std::string::npos)
        return emitError(
            module.getLoc(),
            "the kernels call libdevice (exp, tanh, ...), which was not "
            "found: set CUDA_HOME to a CUDA toolkit with "
            "nvvm/libdevice/libdevice.10.bc");
    return success();
  }
};

} // namespace
