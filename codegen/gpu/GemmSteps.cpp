// mdlrt.gemm as a Gemm step of the GPU program: what codegen/cpu/GemmToCall
// computes at run time (operand addresses, leading dimensions, batch
// strides), computed here at compile time from the arena views' byte shifts
// and strided layouts, which must all be static.
#include "codegen/gpu/GpuLowering.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace modelc {

namespace {

/// One GEMM operand as the runtime addresses it, in elements but `offset`
/// (bytes from the arena's start).
struct StaticMatrix {
  uint64_t offset;
  int64_t leadingDim, batchStride;
  SmallVector<int64_t> sizes;
};

/// The byte shift of `memref` from the arena: the memref.view it is a view
/// of (through subviews, reshapes and casts, which keep the view's base),
/// plus its layout's element offset.
FailureOr<StaticMatrix> describeOperand(mdlrt::GemmOp gemm, Value memref,
                                        Value arena, StringRef name) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic) || !type.hasStaticShape())
    return gemm.emitError("operand ")
           << name << " (" << type
           << ") has a dynamic shape, offset or stride: a GPU Gemm step "
              "needs static ones";
  Value base = memref;
  while (Operation *def = base.getDefiningOp()) {
    if (isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
            memref::CastOp, memref::ReinterpretCastOp, memref::TransposeOp>(
            def)) {
      base = def->getOperand(0);
      continue;
    }
    break;
  }
  auto view = base.getDefiningOp<memref::ViewOp>();
  APInt shift;
  if (!view || view.getSource() != arena || !view.getSizes().empty() ||
      !matchPattern(view.getByteShift(), m_ConstantInt(&shift)))
    return gemm.emitError("operand ")
           << name
           << " is not a view of the arena at a constant offset: a GPU Gemm "
              "step needs a static address";
  int64_t rank = type.getRank();
  unsigned elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  return StaticMatrix{
      shift.getZExtValue() + uint64_t(offset) * elementBytes,
      // As GemmToCall: BLAS wants ld >= the row length, even for one row.
      std::max(strides[rank - 2], type.getDimSize(rank - 1)),
      rank == 3 ? strides[0] : 0, SmallVector<int64_t>(type.getShape())};
}

} // namespace

FailureOr<DictionaryAttr> describeGemm(mdlrt::GemmOp gemm, Value arena) {
  // mdlrt.gemm's verifier allows f32, f64, and bf16/f16 A and B with an f32
  // C: what cuBLASLt computes with CUBLAS_COMPUTE_32F/64F.
  Type elementType = getElementTypeOrSelf(gemm.getC().getType());
  Type inputType = getElementTypeOrSelf(gemm.getA().getType());
  if (!elementType.isF32() && !elementType.isF64())
    return gemm.emitError("a GPU Gemm step is f32 or f64, not ") << elementType;
  auto typeName = [](Type type) -> StringRef {
    return type.isF32() ? "f32" : type.isF64() ? "f64" : type.isBF16() ? "bf16"
                                                                      : "f16";
  };
  FailureOr<StaticMatrix> a = describeOperand(gemm, gemm.getA(), arena, "A");
  FailureOr<StaticMatrix> b = describeOperand(gemm, gemm.getB(), arena, "B");
  FailureOr<StaticMatrix> c = describeOperand(gemm, gemm.getC(), arena, "C");
  if (failed(a) || failed(b) || failed(c))
    return failure();
  size_t rankA = a->sizes.size(), rankC = c->sizes.size();
  Builder builder(gemm.getContext());
  auto i64 = [&](int64_t value) { return builder.getI64IntegerAttr(value); };
  auto f64 = [&](APFloat value) {
    return builder.getF64FloatAttr(value.convertToDouble());
  };
  NamedAttrList fields;
  fields.append("dtype", builder.getStringAttr(typeName(elementType)));
  fields.append("ab_dtype", builder.getStringAttr(typeName(inputType)));
  fields.append("trans_a", builder.getBoolAttr(gemm.getTransposeA()));
  fields.append("trans_b", builder.getBoolAttr(gemm.getTransposeB()));
  fields.append("m", i64(c->sizes[rankC - 2]));
  fields.append("n", i64(c->sizes[rankC - 1]));
  fields.append("k",
                i64(a->sizes[gemm.getTransposeA() ? rankA - 2 : rankA - 1]));
  fields.append("alpha", f64(gemm.getAlpha()));
  fields.append("beta", f64(gemm.getBeta()));
  fields.append("a", i64(a->offset));
  fields.append("lda", i64(a->leadingDim));
  fields.append("stride_a", i64(a->batchStride));
  fields.append("b", i64(b->offset));
  fields.append("ldb", i64(b->leadingDim));
  fields.append("stride_b", i64(b->batchStride));
  fields.append("c", i64(c->offset));
  fields.append("ldc", i64(c->leadingDim));
  fields.append("stride_c", i64(c->batchStride));
  fields.append("batch", i64(rankC == 3 ? c->sizes[0] : 1));
  return fields.getDictionary(gemm.getContext());
}

} // namespace modelc
