// The program ABI's globals (docs/pipeline.md) in the LLVM dialect: the
// function table and the embedded manifest, with external linkage and the C
// names the runtime declares in ProgramABI.h.
#include "codegen/cpu/CpuLowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace modelc {

namespace {

/// flatbuffers reads scalars in place, so the manifest needs the alignment
/// of its widest field (8); 16 leaves room for vectors of structs.
constexpr uint64_t kManifestAlignment = 16;

void addConstantI64(OpBuilder &builder, Location loc, StringRef name,
                    uint64_t value) {
  builder.create<LLVM::GlobalOp>(loc, builder.getI64Type(),
                                 /*isConstant=*/true, LLVM::Linkage::External,
                                 name, builder.getI64IntegerAttr(value),
                                 /*alignment=*/8);
}

} // namespace

void addProgramGlobals(ModuleOp module, ArrayRef<ProgramFunction> functions,
                       StringRef manifest) {
  MLIRContext *context = module.getContext();
  Location loc = module.getLoc();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(context);

  // const modelc_fn modelc_functions[] = {f0, f1, ...}: an initializer
  // region, since an array of addresses has no attribute form.
  auto tableType = LLVM::LLVMArrayType::get(ptr, functions.size());
  auto table = builder.create<LLVM::GlobalOp>(
      loc, tableType, /*isConstant=*/true, LLVM::Linkage::External,
      "modelc_functions", Attribute(), /*alignment=*/8);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.createBlock(&table.getInitializerRegion());
    Value array = builder.create<LLVM::UndefOp>(loc, tableType);
    for (const ProgramFunction &fn : functions) {
      Value address = builder.create<LLVM::AddressOfOp>(loc, ptr, fn.symbol);
      array = builder.create<LLVM::InsertValueOp>(
          loc, array, address, ArrayRef<int64_t>{int64_t(fn.index)});
    }
    builder.create<LLVM::ReturnOp>(loc, array);
  }
  addConstantI64(builder, loc, "modelc_num_functions", functions.size());

  auto bytesType =
      LLVM::LLVMArrayType::get(IntegerType::get(context, 8), manifest.size());
  builder.create<LLVM::GlobalOp>(
      loc, bytesType, /*isConstant=*/true, LLVM::Linkage::External,
      "modelc_manifest", builder.getStringAttr(manifest), kManifestAlignment);
  addConstantI64(builder, loc, "modelc_manifest_size", manifest.size());
}

} // namespace modelc
