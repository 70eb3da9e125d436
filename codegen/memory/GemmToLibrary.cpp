// --mdl-gemm-to-library: the linalg matmul family on memrefs becomes
// mdlrt.gemm, which each target turns into its BLAS call: f32 and f64
// GEMMs, and bf16/f16 operands with an f32 result.
#include "codegen/Passes.h"
#include "codegen/memory/MemRefAliases.h"

#include "dialects/mdlrt/MdlrtDialect.h"
#include "dialects/mdlrt/MdlrtOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/CallInterfaces.h"

namespace modelc {
#define GEN_PASS_DEF_MDLGEMMTOLIBRARY
#include "codegen/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace {

/// Which operand is transposed, by the op's name.
struct MatmulForm {
  bool transposeA = false;
  bool transposeB = false;
};

std::optional<MatmulForm> getMatmulForm(Operation *op) {
  if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
    return MatmulForm{};
  if (isa<linalg::MatmulTransposeAOp, linalg::BatchMatmulTransposeAOp>(op))
    return MatmulForm{true, false};
  if (isa<linalg::MatmulTransposeBOp, linalg::BatchMatmulTransposeBOp>(op))
    return MatmulForm{false, true};
  return std::nullopt;
}

/// Whether BLAS can address `type` as row-major matrices of `elementType`:
/// static strides with the innermost one 1, and a row stride at least the
/// row length unless there is one row (so rows do not overlap). Batch
/// strides are free.
bool isBlasMatrix(Type type, Type elementType) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || memref.getElementType() != elementType ||
      !memref.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(memref, strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic) || strides.back() != 1)
    return false;
  ArrayRef<int64_t> shape = memref.getShape();
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  return rows == 1 || strides[strides.size() - 2] >= cols;
}

/// Whether `op`, or an op nested in it, may read or write memory that
/// aliases `target`. Calls are assumed to touch anything.
bool mayTouch(Operation *op, Value target) {
  WalkResult result = op->walk([&](Operation *nested) {
    if (isa<CallOpInterface>(nested))
      return WalkResult::interrupt();
    for (Value operand : nested->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          modelc::mayAlias(operand, target))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// The `linalg.fill` of zeros into exactly `c` that `matmul` can absorb as
/// beta = 0: in the same block, before it, and with nothing in between that
/// may read or write `c`'s memory (which would see the zeros, or whose
/// writes the accumulation would keep). Null when there is none.
linalg::FillOp findZeroFill(Operation *matmul, Value c) {
  for (Operation *op = matmul->getPrevNode(); op; op = op->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(op);
    if (fill && fill.getOutputs().front() == c)
      return matchPattern(fill.getInputs().front(), m_AnyZeroFloat()) ? fill
                                                                      : nullptr;
    if (mayTouch(op, c))
      return nullptr;
  }
  return nullptr;
}

struct MdlGemmToLibraryPass
    : modelc::impl::MdlGemmToLibraryBase<MdlGemmToLibraryPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> matmuls;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (getMatmulForm(op))
        matmuls.push_back(op);
    });
    for (linalg::LinalgOp op : matmuls)
      rewrite(op);
  }

  /// Replaces `op` with mdlrt.gemm when BLAS can do it; otherwise leaves it
  /// to the loop lowering (mixed element types, tensors, odd strides).
  void rewrite(linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics())
      return;
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
    Value c = op.getDpsInits()[0];
    // f32 and f64 GEMMs, and bf16/f16 operands accumulated into f32.
    Type elementType = getElementTypeOrSelf(c.getType());
    Type inputType = getElementTypeOrSelf(a.getType());
    if (!elementType.isF32() && !elementType.isF64())
      return;
    if (inputType != elementType &&
        !(elementType.isF32() && (inputType.isBF16() || inputType.isF16())))
      return;
    if (!isBlasMatrix(a.getType(), inputType) ||
        !isBlasMatrix(b.getType(), inputType) ||
        !isBlasMatrix(c.getType(), elementType))
      return;
    // BLAS must not write what it reads.
    if (modelc::mayAlias(a, c) || modelc::mayAlias(b, c))
      return;

    // linalg computes C += op(A) op(B); a preceding zero fill of C makes it
    // C = op(A) op(B), which BLAS does with beta = 0 without reading C.
    double beta = 1.0;
    if (linalg::FillOp fill = findZeroFill(op, c)) {
      fill.erase();
      beta = 0.0;
    }
    MatmulForm form = *getMatmulForm(op);
    OpBuilder builder(op);
    auto gemm = builder.create<mdlrt::GemmOp>(
        op.getLoc(), a, b, c, builder.getF64FloatAttr(1.0),
        builder.getF64FloatAttr(beta),
        form.transposeA ? builder.getUnitAttr() : nullptr,
        form.transposeB ? builder.getUnitAttr() : nullptr);
    if (failed(gemm.verify())) {
      op.emitError("internal error: the matmul does not map to mdlrt.gemm");
      return signalPassFailure();
    }
    op.erase();
  }
};

} // namespace
