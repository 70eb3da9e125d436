// --mdl-serialize-gpu: the output of --mdl-lower-to-gpu becomes the GPU
// program: the gpu.module goes to NVVM and through LLVM's NVPTX backend
// (the #nvvm.target serialiser of gpu-module-to-binary, libdevice linked) to
// PTX for each architecture, ptxas (when found) makes a cubin of each, and
// the kernels, step lists and images land in one module attribute
// (kGpuProgramAttrName) that the manifest writer reads.
#include "codegen/Passes.h"
#include "codegen/gpu/GpuTarget.h"
#include "codegen/gpu/Ptxas.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/Threading.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/Sequence.h"
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

/// gpu.module to NVVM and the LLVM dialect, ready for gpu-module-to-binary.
void buildKernelsToNVVMPipeline(OpPassManager &pm) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(arith::createArithExpandOpsPass());
  kernels.addPass(createConvertSCFToCFPass());
  // libdevice and NVVM's math patterns are f32/f64 only: a 16-bit math op
  // (gelu's tanh or erf on bf16, say) computes in f32 and rounds, as the CPU
  // target's LLVM promotion and PyTorch's opmath do.
  kernels.addPass(math::createMathLegalizeToF32());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  // Each buffer argument is one .u64 kernel parameter, its pointer.
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // What NVVM's patterns leave (integer math such as absi, ctpop) as LLVM
  // intrinsics, which NVPTX has.
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

struct MdlSerializeGpuPass
    : modelc::impl::MdlSerializeGpuBase<MdlSerializeGpuPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    modelc::registerGpuDialects(registry);
    OpPassManager pm(ModuleOp::getOperationName());
    buildKernelsToNVVMPipeline(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // --mdl-lower-to-gpu's one gpu.module (modelc_kernels, unless a symbol
    // of the program took the name).
    auto kernelModules = module.getOps<gpu::GPUModuleOp>();
    gpu::GPUModuleOp kernelModule =
        kernelModules.empty() ? nullptr : *kernelModules.begin();
    if (!kernelModule) {
      emitError(module.getLoc(),
                "no gpu.module @modelc_kernels: run --mdl-lower-to-gpu "
                "first");
      return signalPassFailure();
    }
    Builder builder(&getContext());
    SmallVector<Attribute> kernels, functions, images;
    if (failed(collectKernels(kernelModule, kernels)) ||
        failed(collectFunctions(module, functions)))
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
      targets.push_back(NVVM::NVVMTargetAttr::get(&getContext(), 2,
                                                  "nvptx64-nvidia-cuda", arch));
    }
    kernelModule.setTargetsAttr(builder.getArrayAttr(targets));

    OpPassManager pm(ModuleOp::getOperationName());
    buildKernelsToNVVMPipeline(pm);
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();

    std::string ptxas = modelc::findPtxas(ptxasSetting);
    SmallVector<ArchImages> archImages(targets.size());
    if (failed(compileArchs(kernelModule, targets, ptxas, archImages)))
      return signalPassFailure();
    // As gpu-module-to-binary leaves it, with the cubins as `bin` objects.
    SmallVector<Attribute> objects;
    for (auto [target, compiled] : llvm::zip(targets, archImages)) {
      StringRef arch = cast<NVVM::NVVMTargetAttr>(target).getChip();
      objects.push_back(gpu::ObjectAttr::get(
          &getContext(), target, gpu::CompilationTarget::Assembly,
          builder.getStringAttr(compiled.ptx), nullptr));
      images.push_back(makeImage(builder, arch, "ptx", compiled.ptx));
      if (compiled.cubin) {
        objects.push_back(gpu::ObjectAttr::get(
            &getContext(), target, gpu::CompilationTarget::Binary,
            builder.getStringAttr(*compiled.cubin), nullptr));
        images.push_back(makeImage(builder, arch, "cubin", *compiled.cubin));
      } else if (!ptxas.empty()) {
        emitWarning(module.getLoc()) << ptxas << " cannot compile for " << arch
                                     << ": the program has its PTX only";
      }
    }
    OpBuilder binaryBuilder(kernelModule);
    binaryBuilder.create<gpu::BinaryOp>(
        kernelModule.getLoc(), kernelModule.getName(), nullptr, objects);
    kernelModule.erase();

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
    program.append("kernels", builder.getArrayAttr(kernels));
    program.append("functions", builder.getArrayAttr(functions));
    program.append("images", builder.getArrayAttr(images));
    module->setAttr(modelc::kGpuProgramAttrName,
                    program.getDictionary(&getContext()));
  }

private:
  /// What one architecture gets: its PTX (no trailing NUL) and, with
  /// ptxas, its cubin (none when ptxas does not know the architecture).
  struct ArchImages {
    std::string ptx;
    std::optional<std::string> cubin;
    std::string error;
  };

  /// LLVM's NVPTX backend (libdevice linked), then ptxas, for each target,
  /// the architectures in parallel: each is a whole LLVM compilation of
  /// every kernel, seconds for a model with thousands of kernels.
  LogicalResult compileArchs(gpu::GPUModuleOp kernelModule,
                             ArrayRef<Attribute> targets, StringRef ptxas,
                             SmallVectorImpl<ArchImages> &results) {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    gpu::TargetOptions options(modelc::findCudaToolkit(ptxas), {}, "",
                               gpu::CompilationTarget::Assembly,
                               [&]() { return &symbols; });
    auto indices = llvm::to_vector(llvm::seq<size_t>(0, targets.size()));
    LogicalResult compiled = failableParallelForEach(
        &getContext(), indices, [&](size_t i) -> LogicalResult {
          auto target = cast<gpu::TargetAttrInterface>(targets[i]);
          std::optional<SmallVector<char, 0>> object =
              target.serializeToObject(kernelModule, options);
          if (!object)
            return failure();
          // The schema's PTX has no trailing NUL; the serialiser adds one.
          ArchImages &result = results[i];
          result.ptx = StringRef(object->data(), object->size()).rtrim('\0');
          if (ptxas.empty())
            return success();
          StringRef arch = cast<NVVM::NVVMTargetAttr>(targets[i]).getChip();
          llvm::Expected<std::optional<std::string>> cubin =
              modelc::runPtxas(ptxas, arch, result.ptx);
          if (!cubin) {
            result.error = llvm::toString(cubin.takeError());
            return failure();
          }
          result.cubin = std::move(*cubin);
          return success();
        });
    for (const ArchImages &result : results) {
      if (!result.error.empty())
        emitError(module.getLoc(), result.error);
      if (result.ptx.find(".extern .func") != std::string::npos &&
          result.ptx.find("__nv_") != std::string::npos)
        return emitError(
            module.getLoc(),
            "the kernels call libdevice (exp, tanh, ...), which was not "
            "found: set CUDA_HOME to a CUDA toolkit with "
            "nvvm/libdevice/libdevice.10.bc");
    }
    if (failed(compiled))
      return emitError(module.getLoc(),
                       "the GPU kernels did not compile to PTX");
    return success();
  }

  /// {name, grid, block, params[, reduction]} of each kernel, in the
  /// gpu.module's order (a Launch step's `kernel` indexes it); `params` has
  /// a kind per argument: "buffer" (a pointer into the arena) or "u64".
  LogicalResult collectKernels(gpu::GPUModuleOp kernelModule,
                               SmallVectorImpl<Attribute> &kernels) {
    Builder builder(&getContext());
    for (auto func : kernelModule.getOps<gpu::GPUFuncOp>()) {
      auto grid = func->getAttrOfType<IntegerAttr>("mdl.grid");
      auto block = func->getAttrOfType<IntegerAttr>("mdl.block");
      if (!grid || !block)
        return func.emitError("a kernel without mdl.grid and mdl.block");
      kernelIndex[func.getName()] = kernels.size();
      NamedAttrList kernel;
      kernel.append("name", func.getNameAttr());
      kernel.append("grid", grid);
      kernel.append("block", block);
      SmallVector<Attribute> params;
      for (Type input : func.getArgumentTypes())
        params.push_back(
            builder.getStringAttr(isa<MemRefType>(input) ? "buffer" : "u64"));
      kernel.append("params", builder.getArrayAttr(params));
      if (auto terms = func->getAttrOfType<IntegerAttr>("mdl.reduction"))
        kernel.append("reduction", terms);
      kernels.push_back(kernel.getDictionary(&getContext()));
    }
    return success();
  }

  /// The steps of each program function, in the function table's order:
  /// {kind = "launch", kernel = index, args = [...]}, {kind = "gemm", gemm =
  /// {...}} or {kind = "all_reduce", all_reduce = {bucket}}, with `writes` when
  /// the bytes written are known (an all-reduce's buffers, always).
  LogicalResult collectFunctions(ModuleOp module,
                                 SmallVectorImpl<Attribute> &functions) {
    Builder builder(&getContext());
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
          described.push_back(fields.getDictionary(&getContext()));
          continue;
        }
        if (auto bucket = step.getAs<DictionaryAttr>("all_reduce")) {
          fields.append("kind", builder.getStringAttr("all_reduce"));
          fields.append("all_reduce", bucket);
          described.push_back(fields.getDictionary(&getContext()));
          continue;
        }
        auto launch = step.getAs<SymbolRefAttr>("launch");
        auto index = launch ? kernelIndex.find(launch.getLeafReference())
                            : kernelIndex.end();
        if (index == kernelIndex.end())
          return func.emitError("a GPU step that is neither a launch of a "
                                "kernel of @modelc_kernels, a gemm nor an all-reduce");
        fields.append("kind", builder.getStringAttr("launch"));
        fields.append("kernel", builder.getI64IntegerAttr(index->second));
        if (Attribute args = step.get("args"))
          fields.append("args", args);
        described.push_back(fields.getDictionary(&getContext()));
      }
      functions.push_back(builder.getArrayAttr(described));
    }
    return success();
  }

  static Attribute makeImage(Builder &builder, StringRef arch, StringRef kind,
                             StringRef data) {
    return builder.getDictionaryAttr(
        {builder.getNamedAttr("arch", builder.getStringAttr(arch)),
         builder.getNamedAttr("kind", builder.getStringAttr(kind)),
         builder.getNamedAttr("data", builder.getStringAttr(data))});
  }

  llvm::StringMap<int64_t> kernelIndex;
};

} // namespace
