// The manifest's GpuProgram (schema/manifest.fbs) from the module attribute
// that --mdl-serialize-gpu leaves (codegen/gpu/GpuTarget.h): the device
// arena, the images, the kernels and each function's steps.
#include "codegen/manifest/ManifestEntries.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
namespace fb = modelc::manifest;

namespace modelc {

namespace {

int64_t getInt(DictionaryAttr dict, StringRef name) {
  return dict.getAs<IntegerAttr>(name).getInt();
}

flatbuffers::Offset<fb::GpuGemm> writeGemm(flatbuffers::FlatBufferBuilder &fbb,
                                           DictionaryAttr gemm) {
  auto flag = [&](StringRef name) {
    return gemm.getAs<BoolAttr>(name).getValue();
  };
  auto real = [&](StringRef name) {
    return gemm.getAs<FloatAttr>(name).getValueAsDouble();
  };
  auto dtype = [&](StringRef name) {
    return llvm::StringSwitch<fb::DType>(gemm.getAs<StringAttr>(name))
        .Case("f64", fb::DType::F64)
        .Case("bf16", fb::DType::BF16)
        .Case("f16", fb::DType::F16)
        .Default(fb::DType::F32);
  };
  return fb::CreateGpuGemm(
      fbb, dtype("dtype"), flag("trans_a"), flag("trans_b"), getInt(gemm, "m"),
      getInt(gemm, "n"), getInt(gemm, "k"), real("alpha"), real("beta"),
      getInt(gemm, "a"), getInt(gemm, "lda"), getInt(gemm, "stride_a"),
      getInt(gemm, "b"), getInt(gemm, "ldb"), getInt(gemm, "stride_b"),
      getInt(gemm, "c"), getInt(gemm, "ldc"), getInt(gemm, "stride_c"),
      getInt(gemm, "batch"), dtype("ab_dtype"));
}

/// A step's `writes` ({offset, bytes, type} each) as GpuStep.writes; none
/// (an absent vector: unknown, the whole arena) without them.
flatbuffers::Offset<flatbuffers::Vector<const fb::GpuWrite *>>
writeWrites(flatbuffers::FlatBufferBuilder &fbb, DictionaryAttr step) {
  auto writes = step.getAs<ArrayAttr>("writes");
  if (!writes)
    return flatbuffers::Offset<flatbuffers::Vector<const fb::GpuWrite *>>();
  std::vector<fb::GpuWrite> table;
  for (auto write : writes.getAsRange<DictionaryAttr>()) {
    // Elements of a type the schema lacks (signed bytes, index) are
    // compared byte for byte, as U8; a range without a type as F32.
    fb::DType dtype = fb::DType::F32;
    if (auto type = write.getAs<TypeAttr>("type"))
      dtype = getDType(type.getValue()).value_or(fb::DType::U8);
    table.emplace_back(getInt(write, "offset"), getInt(write, "bytes"),
                       dtype);
  }
  return fbb.CreateVectorOfStructs(table);
}

} // namespace

FailureOr<flatbuffers::Offset<fb::GpuProgram>>
writeGpuProgram(flatbuffers::FlatBufferBuilder &fbb, ModuleOp module,
                ArrayRef<std::string> symbols) {
  auto program = module->getAttrOfType<DictionaryAttr>("mdl.gpu_program");
  ArrayAttr images, kernels, functions;
  if (program) {
    images = program.getAs<ArrayAttr>("images");
    kernels = program.getAs<ArrayAttr>("kernels");
    functions = program.getAs<ArrayAttr>("functions");
  }
  if (!images || !kernels || !functions || functions.size() != symbols.size())
    return module.emitError("mdl.gpu_program does not match the function "
                            "table: run --mdl-serialize-gpu on this module");

  std::vector<flatbuffers::Offset<fb::GpuImage>> imageTable;
  for (auto image : images.getAsRange<DictionaryAttr>()) {
    StringRef data = image.getAs<StringAttr>("data").getValue();
    auto arch = fbb.CreateString(image.getAs<StringAttr>("arch").str());
    auto bytes = fbb.CreateVector(
        reinterpret_cast<const uint8_t *>(data.data()), data.size());
    fb::GpuImageKind kind =
        image.getAs<StringAttr>("kind").getValue() == "cubin"
            ? fb::GpuImageKind::Cubin
            : fb::GpuImageKind::Ptx;
    auto part = image.getAs<IntegerAttr>("part");
    imageTable.push_back(
        fb::CreateGpuImage(fbb, arch, kind, bytes, part ? part.getInt() : 0));
  }
  std::vector<flatbuffers::Offset<fb::GpuKernel>> kernelTable;
  for (auto kernel : kernels.getAsRange<DictionaryAttr>()) {
    std::vector<fb::GpuParamKind> params;
    if (auto kinds = kernel.getAs<ArrayAttr>("params"))
      for (auto kind : kinds.getAsRange<StringAttr>())
        params.push_back(kind.getValue() == "u64" ? fb::GpuParamKind::U64
                                                  : fb::GpuParamKind::Buffer);
    std::vector<uint64_t> paramBytes;
    if (auto bytes = kernel.getAs<DenseI64ArrayAttr>("param_bytes"))
      for (int64_t b : bytes.asArrayRef())
        paramBytes.push_back(uint64_t(b));
    kernelTable.push_back(fb::CreateGpuKernelDirect(
        fbb, kernel.getAs<StringAttr>("name").str().c_str(),
        getInt(kernel, "grid"), getInt(kernel, "block"), 0,
        kernel.get("reduction") ? getInt(kernel, "reduction") : 0, &params,
        kernel.get("part") ? getInt(kernel, "part") : 0, &paramBytes));
  }
  std::vector<flatbuffers::Offset<fb::GpuFunction>> functionTable;
  for (auto [steps, symbol] :
       llvm::zip(functions.getAsRange<ArrayAttr>(), symbols)) {
    std::vector<flatbuffers::Offset<fb::GpuStep>> stepTable;
    for (auto step : steps.getAsRange<DictionaryAttr>()) {
      auto writes = writeWrites(fbb, step);
      if (step.getAs<StringAttr>("kind").getValue() == "gemm") {
        auto gemm = writeGemm(fbb, step.getAs<DictionaryAttr>("gemm"));
        stepTable.push_back(fb::CreateGpuStep(fbb, fb::GpuStepKind::Gemm, 0,
                                              gemm, writes));
        continue;
      }
      if (auto bucket = step.getAs<DictionaryAttr>("all_reduce")) {
        auto reduce = fb::CreateGpuAllReduce(fbb, getInt(bucket, "bucket"));
        stepTable.push_back(fb::CreateGpuStep(
            fbb, fb::GpuStepKind::AllReduce, 0, 0, writes, reduce));
        continue;
      }
      std::vector<uint64_t> args;
      if (auto values = step.getAs<DenseI64ArrayAttr>("args"))
        for (int64_t value : values.asArrayRef())
          args.push_back(uint64_t(value));
      stepTable.push_back(fb::CreateGpuStep(fbb, fb::GpuStepKind::Launch,
                                            getInt(step, "kernel"), 0, writes,
                                            0, fbb.CreateVector(args)));
    }
    functionTable.push_back(
        fb::CreateGpuFunctionDirect(fbb, symbol.c_str(), &stepTable));
  }
  return fb::CreateGpuProgramDirect(fbb, getInt(program, "arena_bytes"),
                                    getInt(program, "workspace_offset"),
                                    getInt(program, "workspace_bytes"),
                                    &imageTable, &kernelTable, &functionTable);
}

} // namespace modelc
