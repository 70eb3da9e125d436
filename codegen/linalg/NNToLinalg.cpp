// populateNNToLinalgPatterns and the tensor-building helpers (NNLowering.h)
// that the lowerings of the neural-network ops share.
#include "codegen/linalg/NNLowering.h"
#include "codegen/linalg/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace modelc::nn {

RankedTensorType convertTensorType(const TypeConverter *converter, Type type) {
  if (converter)
    if (auto converted =
            dyn_cast_or_null<RankedTensorType>(converter->convertType(type)))
      return converted;
  auto tensor = cast<RankedTensorType>(type);
  Type element = tensor.getElementType();
  if (element.isUnsignedInteger())
    return tensor.clone(
        IntegerType::get(type.getContext(), element.getIntOrFloatBitWidth()));
  return tensor;
}

bool hasUnsignedElements(Value value) {
  return getElementTypeOrSelf(value.getType()).isUnsignedInteger();
}

Value createEmptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        Type elementType) {
  return b.create<tensor::EmptyOp>(loc, shape, elementType);
}

Value createFilledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                         Value value) {
  Value empty = createEmptyTensor(b, loc, shape, value.getType());
  return b.create<linalg::FillOp>(loc, value, empty).getResult(0);
}

Value createZeroTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                       Type elementType) {
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(elementType));
  return createFilledTensor(b, loc, shape, zero);
}

Value createFloatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
}

Value createIndexConstant(OpBuilder &b, Location loc, int64_t value) {
  return b.create<arith::ConstantIndexOp>(loc, value);
}

Value castFloat(OpBuilder &b, Location loc, Value value, Type type) {
  unsigned from = value.getType().getIntOrFloatBitWidth();
  unsigned to = type.getIntOrFloatBitWidth();
  if (value.getType() == type)
    return value;
  if (from < to)
    return b.create<arith::ExtFOp>(loc, type, value);
  // f64 -> 16 bits through f32, as convertScalar.
  if (from == 64 && to == 16)
    value = b.create<arith::TruncFOp>(loc, b.getF32Type(), value);
  return b.create<arith::TruncFOp>(loc, type, value);
}

Value castToIndex(OpBuilder &b, Location loc, Value value, bool isUnsigned) {
  if (isUnsigned)
    return b.create<arith::IndexCastUIOp>(loc, b.getIndexType(), value);
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), value);
}

Value extendToI64(OpBuilder &b, Location loc, Value value, bool isUnsigned) {
  if (value.getType().getIntOrFloatBitWidth() == 64)
    return value;
  if (isUnsigned)
    return b.create<arith::ExtUIOp>(loc, b.getI64Type(), value);
  return b.create<arith::ExtSIOp>(loc, b.getI64Type(), value);
}

Value clampIndex(OpBuilder &b, Location loc, Value index, int64_t size) {
  Value low =
      b.create<arith::MaxSIOp>(loc, index, createIndexConstant(b, loc, 0));
  return b.create<arith::MinSIOp>(loc, low,
                                  createIndexConstant(b, loc, size - 1));
}

Value createGemm(OpBuilder &b, Location loc, Value lhs, Value rhs,
                 bool transposeLhs, bool transposeRhs,
                 ArrayRef<int64_t> shape) {
  assert(!(transposeLhs && transposeRhs) && "one transposed side only");
  Value init =
      createZeroTensor(b, loc, shape, getElementTypeOrSelf(lhs.getType()));
  SmallVector<Value, 2> ins = {lhs, rhs};
  Type type = init.getType();
  Operation *gemm;
  if (shape.size() == 2 && transposeLhs)
    gemm = b.create<linalg::MatmulTransposeAOp>(loc, type, ins, init);
  else if (shape.size() == 2 && transposeRhs)
    gemm = b.create<linalg::MatmulTransposeBOp>(loc, type, ins, init);
  else if (shape.size() == 2)
    gemm = b.create<linalg::MatmulOp>(loc, type, ins, init);
  else if (transposeLhs)
    gemm = b.create<linalg::BatchMatmulTransposeAOp>(loc, type, ins, init);
  else if (transposeRhs)
    gemm = b.create<linalg::BatchMatmulTransposeBOp>(loc, type, ins, init);
  else
    gemm = b.create<linalg::BatchMatmulOp>(loc, type, ins, init);
  return gemm->getResult(0);
}

Value padSpatial(OpBuilder &b, Location loc, Value input,
                 ArrayRef<int64_t> padding, Value value) {
  if (padding[0] == 0 && padding[1] == 0)
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<OpFoldResult> low =
      getAsIndexOpFoldResult(b.getContext(), {0, 0, padding[0], padding[1]});
  auto paddedType = type.clone({shape[0], shape[1], shape[2] + 2 * padding[0],
                                shape[3] + 2 * padding[1]});
  return b.create<tensor::PadOp>(loc, paddedType, input, low, low, value);
}

Value reshapeTensor(OpBuilder &b, Location loc, Value value,
                    ArrayRef<int64_t> shape) {
  auto source = cast<RankedTensorType>(value.getType());
  if (source.getShape() == shape)
    return value;
  auto target = source.clone(shape);
  // One collapse or expand when the shapes nest; otherwise via 1-D (both
  // are views of the same row-major buffer, so nothing is copied).
  if (auto indices = getReassociationIndicesForReshape(source, target)) {
    if (source.getRank() > target.getRank())
      return b.create<tensor::CollapseShapeOp>(loc, target, value, *indices);
    return b.create<tensor::ExpandShapeOp>(loc, target, value, *indices);
  }
  int64_t count = source.getNumElements();
  Value flat = reshapeTensor(b, loc, value, {count});
  return reshapeTensor(b, loc, flat, shape);
}

Value broadcastTensor(OpBuilder &b, Location loc, Value value,
                      ArrayRef<int64_t> shape) {
  auto source = cast<RankedTensorType>(value.getType());
  if (source.getShape() == shape)
    return value;
  MLIRContext *ctx = b.getContext();
  int64_t offset = static_cast<int64_t>(shape.size()) - source.getRank();
  SmallVector<AffineExpr> exprs;
  for (auto [axis, size] : llvm::enumerate(source.getShape())) {
    bool stretched = size == 1 && shape[offset + axis] != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(offset + axis, ctx));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(shape.size(), 0, exprs, ctx),
                                 b.getMultiDimIdentityMap(shape.size())};
  Value init = createEmptyTensor(b, loc, shape, source.getElementType());
  return b
      .create<linalg::GenericOp>(
          loc, init.getType(), value, init, maps,
          iteratorTypes(shape.size(), 0),
          [](OpBuilder &nb, Location nloc, ValueRange args) {
            nb.create<linalg::YieldOp>(nloc, args[0]);
          })
      .getResult(0);
}

Value createScalarGeneric(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              AffineMap::get(b.getContext()));
  Value init = createEmptyTensor(b, loc, {}, type.getElementType());
  return b
      .create<linalg::GenericOp>(
          loc, type, inputs, init, maps, iteratorTypes(0, 0),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            nb.create<linalg::YieldOp>(nloc, fn(nb, nloc, args.drop_back()));
          })
      .getResult(0);
}

SmallVector<utils::IteratorType> iteratorTypes(int64_t parallel,
                                               int64_t reduction) {
  SmallVector<utils::IteratorType> types(parallel,
                                         utils::IteratorType::parallel);
  types.append(reduction, utils::IteratorType::reduction);
  return types;
}

AffineMap projectionMap(MLIRContext *ctx, unsigned numDims,
                        ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned dim : dims)
    exprs.push_back(getAffineDimExpr(dim, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

AffineMap leadingDimsMap(MLIRContext *ctx, unsigned numDims, unsigned count) {
  SmallVector<AffineExpr> exprs;
  for (unsigned dim = 0; dim < count; ++dim)
    exprs.push_back(getAffineDimExpr(dim, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

Value loopIndex(OpBuilder &b, Location loc, int64_t dim) {
  return b.create<linalg::IndexOp>(loc, dim);
}

WindowIndex findReadingWindow(OpBuilder &b, Location loc, Value padded,
                              Value tap, int64_t stride, int64_t count) {
  Value zero = createIndexConstant(b, loc, 0);
  Value offset = b.create<arith::SubIOp>(loc, padded, tap);
  Value strideValue = createIndexConstant(b, loc, stride);
  // Signed division is wrong for a negative offset, but then `valid` is
  // false and the index is replaced by 0.
  Value index = b.createOrFold<arith::DivSIOp>(loc, offset, strideValue);
  Value nonNegative =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, offset, zero);
  Value inRange = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, index,
                                          createIndexConstant(b, loc, count));
  Value valid = b.create<arith::AndIOp>(loc, nonNegative, inRange);
  // With stride 1 every offset is exact and this folds away.
  Value exact = b.createOrFold<arith::CmpIOp>(
      loc, arith::CmpIPredicate::eq,
      b.createOrFold<arith::RemSIOp>(loc, offset, strideValue), zero);
  valid = b.createOrFold<arith::AndIOp>(loc, valid, exact);
  return {b.create<arith::SelectOp>(loc, valid, index, zero), valid};
}

} // namespace modelc::nn

void modelc::populateNNToLinalgPatterns(RewritePatternSet &patterns) {
  nn::populateMatmulToLinalgPatterns(patterns);
  nn::populateConvToLinalgPatterns(patterns);
  nn::populatePoolToLinalgPatterns(patterns);
  nn::populatePoolGradToLinalgPatterns(patterns);
  nn::populateNormToLinalgPatterns(patterns);
  nn::populateEmbeddingToLinalgPatterns(patterns);
  nn::populateLossToLinalgPatterns(patterns);
  nn::populateMeanReductionToLinalgPatterns(patterns);
  nn::populateGeluToLinalgPatterns(patterns);
}
