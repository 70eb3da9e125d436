// --mdl-assemble-gpu: ptxas (when it is found) makes a cubin of every PTX
// image of the GPU program that --mdl-serialize-gpu left, all in parallel
// on the context's threads (modelc -j); the cubins join the program's
// images and their part's gpu.binary. A ptxas that does not know an
// architecture (CUDA 13 dropped sm_5x to sm_7x) is a warning, and that
// architecture keeps its PTX only.
#include "codegen/Passes.h"
#include "codegen/gpu/GpuTarget.h"
#include "codegen/gpu/Ptxas.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/StringSet.h"

namespace modelc {
#define GEN_PASS_DEF_MDLASSEMBLEGPU
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

/// What ptxas made of one PTX image.
struct Assembled {
  std::optional<std::string> cubin;
  std::string error;
};

struct MdlAssembleGpuPass
    : modelc::impl::MdlAssembleGpuBase<MdlAssembleGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    auto program =
        module->getAttrOfType<DictionaryAttr>(modelc::kGpuProgramAttrName);
    auto images = program ? program.getAs<ArrayAttr>("images") : nullptr;
    if (!images) {
      emitError(module.getLoc(), "no GPU program: run --mdl-serialize-gpu "
                                 "first");
      return signalPassFailure();
    }
    std::string ptxas = modelc::findPtxas(ptxasSetting);
    if (ptxas.empty())
      return;
    SmallVector<DictionaryAttr> ptx;
    for (auto image : images.getAsRange<DictionaryAttr>())
      if (image.getAs<StringAttr>("kind").getValue() == "ptx")
        ptx.push_back(image);
    SmallVector<Assembled> assembled(ptx.size());
    auto jobs = llvm::to_vector(llvm::seq<size_t>(0, ptx.size()));
    LogicalResult ran = failableParallelForEach(
        context, jobs, [&](size_t job) -> LogicalResult {
          llvm::Expected<std::optional<std::string>> cubin = modelc::runPtxas(
              ptxas, ptx[job].getAs<StringAttr>("arch").getValue(),
              ptx[job].getAs<StringAttr>("data").getValue());
          if (!cubin) {
            assembled[job].error = llvm::toString(cubin.takeError());
            return failure();
          }
          assembled[job].cubin = std::move(*cubin);
          return success();
        });
    for (const Assembled &result : assembled)
      if (!result.error.empty())
        emitError(module.getLoc(), result.error);
    if (failed(ran))
      return signalPassFailure();

    Builder builder(context);
    SmallVector<Attribute> all(images.begin(), images.end());
    llvm::StringSet<> unknown;
    for (auto [image, result] : llvm::zip(ptx, assembled)) {
      StringRef arch = image.getAs<StringAttr>("arch").getValue();
      if (!result.cubin) {
        if (unknown.insert(arch).second)
          emitWarning(module.getLoc())
              << ptxas << " cannot compile for " << arch
              << ": the program has its PTX only";
        continue;
      }
      NamedAttrList cubin(image);
      cubin.set("kind", builder.getStringAttr("cubin"));
      cubin.set("data", builder.getStringAttr(*result.cubin));
      all.push_back(cubin.getDictionary(context));
      addToBinary(image.getAs<IntegerAttr>("part").getInt(), arch,
                  *result.cubin);
    }
    NamedAttrList updated(program);
    updated.set("images", builder.getArrayAttr(all));
    module->setAttr(modelc::kGpuProgramAttrName,
                    updated.getDictionary(context));
  }

private:
  /// The cubin as a `bin` object of its part's gpu.binary, beside its PTX.
  void addToBinary(int64_t part, StringRef arch, StringRef cubin) {
    for (auto binary : getOperation().getOps<gpu::BinaryOp>()) {
      auto number =
          binary->getAttrOfType<IntegerAttr>(modelc::kGpuPartAttrName);
      if (!number || number.getInt() != part)
        continue;
      SmallVector<Attribute> objects(binary.getObjects().begin(),
                                     binary.getObjects().end());
      Builder builder(&getContext());
      objects.push_back(gpu::ObjectAttr::get(
          &getContext(),
          NVVM::NVVMTargetAttr::get(&getContext(), 2, "nvptx64-nvidia-cuda",
                                    arch),
          gpu::CompilationTarget::Binary, builder.getStringAttr(cubin),
          nullptr));
      binary.setObjectsAttr(builder.getArrayAttr(objects));
    }
  }
};

} // namespace
