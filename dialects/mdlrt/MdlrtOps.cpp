// The mdlrt ops: the generated definitions and the gemm verifier.
#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::mdlrt;

#define GET_OP_CLASSES
#include "dialects/mdlrt/MdlrtOps.cpp.inc"

namespace {

/// Checks that `type` is strided with a static innermost stride of 1, the
/// one layout constraint of a row-major BLAS operand.
LogicalResult verifyUnitInnerStride(Operation *op, StringRef name,
                                    MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return op->emitOpError()
           << "operand " << name << " has a non-strided layout";
  if (strides.back() != 1)
    return op->emitOpError()
           << "operand " << name << " must have innermost stride 1, got "
           << (ShapedType::isDynamic(strides.back())
                   ? std::string("?")
                   : std::to_string(strides.back()));
  return success();
}

/// Whether two static-or-dynamic sizes can be equal.
bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// The (rows, columns) of op(X), the last two dimensions of X, swapped when
/// `transposed`.
std::pair<int64_t, int64_t> matrixShape(MemRefType type, bool transposed) {
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  return transposed ? std::make_pair(cols, rows) : std::make_pair(rows, cols);
}

} // namespace

LogicalResult GemmOp::verify() {
  auto a = cast<MemRefType>(getA().getType());
  auto b = cast<MemRefType>(getB().getType());
  auto c = cast<MemRefType>(getC().getType());
  Type inputType = a.getElementType(), outputType = c.getElementType();
  if (b.getElementType() != inputType)
    return emitOpError("A and B must have the same element type");
  bool sixteenBit = inputType.isBF16() || inputType.isF16();
  if (outputType != inputType && !(sixteenBit && outputType.isF32()))
    return emitOpError() << "C must have A's element type, or be f32 for "
                            "bf16/f16 A and B; got "
                         << inputType << " and " << outputType;
  if (sixteenBit && !outputType.isF32())
    return emitOpError() << "a GEMM of " << inputType
                         << " operands accumulates into an f32 C";
  if (failed(verifyUnitInnerStride(*this, "A", a)) ||
      failed(verifyUnitInnerStride(*this, "B", b)) ||
      failed(verifyUnitInnerStride(*this, "C", c)))
    return failure();

  // A rank-3 C is a batch; a rank-3 A or B must match it, a rank-2 one is
  // broadcast over it. Without a batched C there is nothing to batch over.
  if (c.getRank() == 2 && (a.getRank() == 3 || b.getRank() == 3))
    return emitOpError("a rank-3 A or B needs a rank-3 C");
  for (auto [name, type] : {std::make_pair("A", a), std::make_pair("B", b)})
    if (type.getRank() == 3 && !compatible(type.getDimSize(0), c.getDimSize(0)))
      return emitOpError() << "operand " << name << " has batch size "
                           << type.getDimSize(0) << " but C has "
                           << c.getDimSize(0);

  auto [m, k] = matrixShape(a, getTransposeA());
  auto [kB, n] = matrixShape(b, getTransposeB());
  auto [mC, nC] = matrixShape(c, false);
  if (!compatible(k, kB))
    return emitOpError() << "op(A) is " << m << "x" << k << " but op(B) is "
                         << kB << "x" << n;
  if (!compatible(m, mC) || !compatible(n, nC))
    return emitOpError() << "C is " << mC << "x" << nC << " but op(A)*op(B) is "
                         << m << "x" << n;
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getBuffers().empty())
    return emitOpError("needs at least one buffer");
  Type element;
  for (Value buffer : getBuffers()) {
    auto type = cast<MemRefType>(buffer.getType());
    Type here = type.getElementType();
    // Gradients are f32 or f64 at every precision (f32 master gradients
    // under mixed precision, docs/passes/amp.md).
    if (!here.isF32() && !here.isF64())
      return emitOpError() << "reduces f32 or f64 buffers, not " << here;
    if (element && here != element)
      return emitOpError() << "the buffers of a bucket have one element "
                              "type: "
                           << element << " and " << here;
    element = here;
    // The runtime reads each buffer as one contiguous run of elements: the
    // strides are row-major's (any offset).
    SmallVector<int64_t> strides;
    int64_t offset;
    bool contiguous = succeeded(getStridesAndOffset(type, strides, offset));
    int64_t expected = 1;
    for (int64_t i = type.getRank() - 1; contiguous && i >= 0; --i) {
      contiguous = type.getDimSize(i) == 1 || strides[i] == expected;
      expected *= type.getDimSize(i);
    }
    if (!contiguous)
      return emitOpError() << "reduces contiguous buffers, not " << type;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// attention_pass
//===----------------------------------------------------------------------===//

LogicalResult AttentionPassOp::verify() {
  StringRef kind = getKind();
  size_t inputs = getHasMask() ? 1 : 0, outputs = 0;
  if (kind == "forward") {
    inputs += 3;
    outputs = 2;
  } else if (kind == "query_grad" || kind == "key_value_grad") {
    inputs += 6;
    outputs = kind == "query_grad" ? 1 : 2;
  } else {
    return emitOpError("kind must be forward, query_grad or key_value_grad, "
                       "got '")
           << kind << "'";
  }
  if (getInputs().size() != inputs || getOutputs().size() != outputs)
    return emitOpError("a ")
           << kind << " pass" << (getHasMask() ? " with a mask" : "")
           << " takes " << inputs << " inputs and " << outputs
           << " outputs, got " << getInputs().size() << " and "
           << getOutputs().size();
  if ((getDropout().convertToDouble() != 0.0) != bool(getDropoutKey()))
    return emitOpError("takes a dropout key exactly when it drops");
  return success();
}

LogicalResult AttentionPassOp::fold(FoldAdaptor,
                                    SmallVectorImpl<OpFoldResult> &) {
  return memref::foldMemRefCast(*this);
}

//===----------------------------------------------------------------------===//
// row_scatter_add
//===----------------------------------------------------------------------===//

LogicalResult RowScatterAddOp::verify() {
  auto ids = cast<MemRefType>(getIds().getType());
  auto source = cast<MemRefType>(getSource().getType());
  auto table = cast<MemRefType>(getTable().getType());
  if (!ids.hasStaticShape() || !source.hasStaticShape() ||
      !table.hasStaticShape())
    return emitOpError("takes operands of static shapes");
  if (source.getDimSize(0) != ids.getDimSize(0))
    return emitOpError("has ") << ids.getDimSize(0) << " ids for "
                               << source.getDimSize(0) << " source rows";
  if (source.getDimSize(1) != table.getDimSize(1))
    return emitOpError("adds rows of ")
           << source.getDimSize(1) << " elements to a table of rows of "
           << table.getDimSize(1);
  if (table.getDimSize(0) < 1)
    return emitOpError("needs a table of at least one row");
  if (source.getElementType().getIntOrFloatBitWidth() >
      table.getElementType().getIntOrFloatBitWidth())
    return emitOpError("adds ")
           << source.getElementType() << " rows to a narrower "
           << table.getElementType() << " table";
  return success();
}

LogicalResult RowScatterAddOp::fold(FoldAdaptor,
                                    SmallVectorImpl<OpFoldResult> &) {
  return memref::foldMemRefCast(*this);
}
