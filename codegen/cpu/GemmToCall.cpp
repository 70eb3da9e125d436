// mdlrt.gemm on the CPU: a call of the runtime's modelc_gemm_f32/f64 (or,
// for bf16/f16 operands with an f32 result, modelc_gemm_bf16/f16) with
// pointers, leading dimensions and batch strides from each memref's strided
// layout (its type, or its metadata where the type leaves them dynamic).
#include "codegen/cpu/CpuLowering.h"

#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace modelc {

Value createElementPointer(OpBuilder &builder, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  Type i64 = builder.getI64Type();
  Value pointer = builder.create<LLVM::IntToPtrOp>(
      loc, LLVM::LLVMPointerType::get(builder.getContext()),
      builder.create<arith::IndexCastOp>(
          loc, i64,
          builder.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref)));
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)getStridesAndOffset(type, strides, offset);
  if (offset == 0)
    return pointer;
  Value elements;
  if (ShapedType::isDynamic(offset))
    elements = builder.create<arith::IndexCastOp>(
        loc, i64,
        builder.create<memref::ExtractStridedMetadataOp>(loc, memref)
            .getOffset());
  else
    elements = builder.create<arith::ConstantIntOp>(loc, offset, 64);
  return builder.create<LLVM::GEPOp>(
      loc, pointer.getType(), type.getElementType(), pointer,
      ValueRange{elements});
}

namespace {

/// How the runtime addresses one operand: the address of its first element,
/// the leading dimension, the batch stride and the sizes (in elements, i64).
struct BlasMatrix {
  Value pointer, leadingDim, batchStride;
  SmallVector<Value> sizes;
};

class GemmCallBuilder {
public:
  explicit GemmCallBuilder(mdlrt::GemmOp gemm)
      : builder(gemm), loc(gemm.getLoc()), i64(builder.getI64Type()),
        ptr(LLVM::LLVMPointerType::get(builder.getContext())) {}

  Value i64Constant(int64_t value) {
    return builder.create<arith::ConstantIntOp>(loc, value, 64);
  }
  Value toI64(Value index) {
    return builder.create<arith::IndexCastOp>(loc, i64, index);
  }

  /// Sizes, strides and offset as i64 values: constants where the type has
  /// them, else read from the strided metadata at run time.
  BlasMatrix describe(Value memref) {
    auto type = cast<MemRefType>(memref.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> staticStrides;
    int64_t staticOffset;
    (void)getStridesAndOffset(type, staticStrides, staticOffset);
    auto metadata =
        builder.create<memref::ExtractStridedMetadataOp>(loc, memref);
    auto pick = [&](int64_t value, Value dynamic) {
      return ShapedType::isDynamic(value) ? toI64(dynamic) : i64Constant(value);
    };
    SmallVector<Value> sizes, strides;
    for (int64_t i = 0; i < rank; ++i) {
      sizes.push_back(pick(type.getDimSize(i), metadata.getSizes()[i]));
      strides.push_back(pick(staticStrides[i], metadata.getStrides()[i]));
    }
    Value pointer = createElementPointer(builder, loc, memref);
    // BLAS wants ld >= the row length even for one row, where the row
    // stride is arbitrary; mdl-gemm-to-library allows a smaller row stride
    // only then.
    Value leadingDim =
        builder.create<arith::MaxSIOp>(loc, strides[rank - 2], sizes[rank - 1]);
    // A matrix without a batch dimension is the same for every batch.
    Value batchStride = rank == 3 ? strides[0] : i64Constant(0);
    return {pointer, leadingDim, batchStride, sizes};
  }

  void build(func::FuncOp callee, mdlrt::GemmOp gemm) {
    Type elementType = getElementTypeOrSelf(gemm.getC().getType());
    BlasMatrix a = describe(gemm.getA()), b = describe(gemm.getB()),
               c = describe(gemm.getC());
    size_t rankA = a.sizes.size(), rankC = c.sizes.size();
    Value m = c.sizes[rankC - 2], n = c.sizes[rankC - 1];
    Value k = a.sizes[gemm.getTransposeA() ? rankA - 2 : rankA - 1];
    Value batch = rankC == 3 ? c.sizes[0] : i64Constant(1);
    auto scalar = [&](APFloat value) -> Value {
      bool losesInfo;
      value.convert(cast<FloatType>(elementType).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
      return builder.create<arith::ConstantFloatOp>(
          loc, value, cast<FloatType>(elementType));
    };
    builder.create<func::CallOp>(
        loc, callee,
        ValueRange{i64Constant(gemm.getTransposeA()),
                   i64Constant(gemm.getTransposeB()), m, n, k,
                   scalar(gemm.getAlpha()), a.pointer, a.leadingDim,
                   a.batchStride, b.pointer, b.leadingDim, b.batchStride,
                   scalar(gemm.getBeta()), c.pointer, c.leadingDim,
                   c.batchStride, batch});
  }

private:
  OpBuilder builder;
  Location loc;
  Type i64, ptr;
};

/// `void modelc_gemm_f32/f64/bf16/f16(...)` of ProgramABI.h for operands of
/// `inputType` and a C of `elementType` (alpha and beta have C's type),
/// declared once.
func::FuncOp getGemmFunction(ModuleOp module, Type inputType,
                             Type elementType) {
  std::string name = inputType.isF32()    ? "modelc_gemm_f32"
                     : inputType.isF64()  ? "modelc_gemm_f64"
                     : inputType.isBF16() ? "modelc_gemm_bf16"
                                          : "modelc_gemm_f16";
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  Type i64 = builder.getI64Type();
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  SmallVector<Type> arguments = {i64,         i64, i64, i64, i64,
                                 elementType, ptr, i64, i64, // A, lda, strideA
                                 ptr,         i64, i64,      // B, ldb, strideB
                                 elementType, ptr, i64,      // beta, C, ldc
                                 i64,         i64};          // strideC, batch
  auto func = builder.create<func::FuncOp>(
      module.getLoc(), name, builder.getFunctionType(arguments, {}));
  func.setPrivate();
  return func;
}

} // namespace

void lowerGemmsToCalls(ModuleOp module) {
  SmallVector<mdlrt::GemmOp> gemms;
  module.walk([&](mdlrt::GemmOp gemm) { gemms.push_back(gemm); });
  for (mdlrt::GemmOp gemm : gemms) {
    func::FuncOp callee =
        getGemmFunction(module, getElementTypeOrSelf(gemm.getA().getType()),
                        getElementTypeOrSelf(gemm.getC().getType()));
    GemmCallBuilder(gemm).build(callee, gemm);
    gemm.erase();
  }
}

} // namespace modelc
