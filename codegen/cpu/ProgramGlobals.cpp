// The program ABI's globals (docs/pipeline.md) in the LLVM dialect: the
// function table, the kernel table and the embedded manifest, with external
// linkage and the C names the runtime declares in ProgramABI.h.
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

/// `const modelc_fn name[] = {symbols...}` (an initializer region, since
/// an array of addresses has no attribute form) and its length, `lengthName`.
void addFunctionTable(OpBuilder &builder, Location loc, StringRef name,
                      StringRef lengthName, ArrayRef<std::string> symbols) {
  auto ptr = LLVM::LLVMPointerType::get(builder.getContext());
  auto tableType = LLVM::LLVMArrayType::get(ptr, symbols.size());
  auto table = builder.create<LLVM::GlobalOp>(
      loc, tableType, /*isConstant=*/true, LLVM::Linkage::External, name,
      Attribute(), /*alignment=*/8);
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.createBlock(&table.getInitializerRegion());
    Value array = builder.create<LLVM::UndefOp>(loc, tableType);
    for (auto [index, symbol] : llvm::enumerate(symbols)) {
      Value address = builder.create<LLVM::AddressOfOp>(loc, ptr, symbol);
      array = builder.create<LLVM::InsertValueOp>(
          loc, array, address, ArrayRef<int64_t>{int64_t(index)});
    }
    builder.create<LLVM::ReturnOp>(loc, array);
  }
  addConstantI64(builder, loc, lengthName, symbols.size());
}

} // namespace

void addProgramGlobals(ModuleOp module, ArrayRef<ProgramFunction> functions,
                       ArrayRef<std::string> kernels, StringRef manifest) {
  MLIRContext *context = module.getContext();
  Location loc = module.getLoc();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());

  SmallVector<std::string> functionSymbols(functions.size());
  for (const ProgramFunction &fn : functions)
    functionSymbols[fn.index] = fn.symbol;
  addFunctionTable(builder, loc, "modelc_functions", "modelc_num_functions",
                   functionSymbols);
  // Not called by the runtime yet: the GPU tests run kernel i on both
  // targets and compare.
  addFunctionTable(builder, loc, "modelc_cpu_kernels", "modelc_num_cpu_kernels",
                   kernels);

  auto bytesType =
      LLVM::LLVMArrayType::get(IntegerType::get(context, 8), manifest.size());
  builder.create<LLVM::GlobalOp>(
      loc, bytesType, /*isConstant=*/true, LLVM::Linkage::External,
      "modelc_manifest", builder.getStringAttr(manifest), kManifestAlignment);
  addConstantI64(builder, loc, "modelc_manifest_size", manifest.size());
}

} // namespace modelc
