// The helpers of the --mdl-lower-to-linalg pattern families (see
// LoweringUtils.h).
#include "codegen/linalg/LoweringUtils.h"

#include "dialects/mdlrt/MdlrtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;

namespace modelc::lowering {

Type getSignlessType(Type elementType) {
  if (elementType.isUnsignedInteger() || elementType.isSignedInteger())
    return IntegerType::get(elementType.getContext(),
                            elementType.getIntOrFloatBitWidth());
  return elementType;
}

RankedTensorType getSignlessTensorType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.clone(getSignlessType(tensor.getElementType()));
}

bool isZeroExtended(Type elementType) {
  return elementType.isUnsignedInteger() || elementType.isInteger(1);
}

bool hasUnsignedElements(Value value) {
  return getElementTypeOrSelf(value.getType()).isUnsignedInteger();
}

Type getComputeType(Type elementType) {
  if (elementType.isF16() || elementType.isBF16())
    return Float32Type::get(elementType.getContext());
  return elementType;
}

Value createScalarConstant(OpBuilder &b, Location loc, Type type,
                           double value) {
  if (isa<FloatType>(type))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt bits = width == 1
                   ? APInt(1, value != 0)
                   : APInt(64, static_cast<int64_t>(value), true).trunc(width);
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(type, bits));
}

Value createIndexConstant(OpBuilder &b, Location loc, int64_t value) {
  return b.create<arith::ConstantIndexOp>(loc, value);
}

/// The least (`lowest`) or greatest value of mdl element type `elementType`.
static Value createExtremeValue(OpBuilder &b, Location loc, Type elementType,
                                bool lowest) {
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    APFloat inf = APFloat::getInf(floatType.getFloatSemantics(), lowest);
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(floatType, inf));
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  APInt bits;
  if (isZeroExtended(elementType))
    bits = lowest ? APInt::getMinValue(width) : APInt::getMaxValue(width);
  else
    bits = lowest ? APInt::getSignedMinValue(width)
                  : APInt::getSignedMaxValue(width);
  Type signless = getSignlessType(elementType);
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(signless, bits));
}

Value createLowestValue(OpBuilder &b, Location loc, Type elementType) {
  return createExtremeValue(b, loc, elementType, /*lowest=*/true);
}

Value createHighestValue(OpBuilder &b, Location loc, Type elementType) {
  return createExtremeValue(b, loc, elementType, /*lowest=*/false);
}

Value createEmptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        Type elementType) {
  return b.create<tensor::EmptyOp>(loc, shape, elementType);
}

Value createEmptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return createEmptyTensor(b, loc, type.getShape(), type.getElementType());
}

Value createFilledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                         Value scalar) {
  Value empty = createEmptyTensor(b, loc, shape, scalar.getType());
  return b.create<linalg::FillOp>(loc, scalar, empty).getResult(0);
}

Value createZeroTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                       Type elementType) {
  Value zero = b.create<arith::ConstantOp>(loc, b.getZeroAttr(elementType));
  return createFilledTensor(b, loc, shape, zero);
}

/// Every axis of a rank-`rank` tensor in one group: the reassociation of a
/// collapse to 1-D (empty for rank 0, which expands to or from `[1]`).
static SmallVector<ReassociationIndices> getFlatReassociation(int64_t rank) {
  if (rank == 0)
    return {};
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

Value reshapeTensor(OpBuilder &b, Location loc, Value value,
                    ArrayRef<int64_t> shape) {
  auto source = cast<RankedTensorType>(value.getType());
  if (source.getShape() == shape)
    return value;
  auto target = source.clone(shape);
  if (auto indices = getReassociationIndicesForReshape(source, target)) {
    if (source.getRank() > target.getRank())
      return b.create<tensor::CollapseShapeOp>(loc, target, value, *indices);
    return b.create<tensor::ExpandShapeOp>(loc, target, value, *indices);
  }
  // Shapes that do not nest ([2, 3] -> [3, 2]) go through 1-D.
  auto flatType = source.clone({source.getNumElements()});
  Value flat = value;
  if (source.getRank() == 0)
    flat = b.create<tensor::ExpandShapeOp>(loc, flatType, value,
                                           getFlatReassociation(0));
  else if (source.getRank() > 1)
    flat = b.create<tensor::CollapseShapeOp>(
        loc, flatType, value, getFlatReassociation(source.getRank()));
  if (target.getRank() == 1)
    return flat;
  if (target.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, target, flat,
                                             getFlatReassociation(0));
  return b.create<tensor::ExpandShapeOp>(
      loc, target, flat, getFlatReassociation(target.getRank()));
}

Value broadcastTensor(OpBuilder &b, Location loc, Value value,
                      ArrayRef<int64_t> shape) {
  auto source = cast<RankedTensorType>(value.getType());
  if (source.getShape() == shape)
    return value;
  SmallVector<AffineMap> maps = {
      getBroadcastMap(b.getContext(), source.getShape(), shape),
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

TypedAttr getSplatValue(Value tensor) {
  if (auto fill = tensor.getDefiningOp<linalg::FillOp>())
    tensor = fill.getInputs().front();
  Attribute constant;
  if (!matchPattern(tensor, m_Constant(&constant)))
    return {};
  if (auto dense = dyn_cast<DenseElementsAttr>(constant))
    return dense.isSplat() ? cast<TypedAttr>(dense.getSplatValue<Attribute>())
                           : TypedAttr();
  return dyn_cast<TypedAttr>(constant);
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

AffineMap getBroadcastMap(MLIRContext *ctx, ArrayRef<int64_t> operandShape,
                          ArrayRef<int64_t> resultShape) {
  int64_t offset = resultShape.size() - operandShape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [axis, size] : llvm::enumerate(operandShape)) {
    int64_t resultAxis = offset + axis;
    bool stretched = size == 1 && resultShape[resultAxis] != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(resultAxis, ctx));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, ctx);
}

Value createElementwiseOp(OpBuilder &b, Location loc,
                          RankedTensorType resultType, ValueRange inputs,
                          ScalarBodyFn body) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = resultType.getShape();
  // A splat constant operand (a scalar literal such as `2.0 * x`) becomes a
  // constant in the body, so the loop reads no memory for it.
  SmallVector<TypedAttr> splats(inputs.size());
  SmallVector<Value> read;
  SmallVector<AffineMap> maps;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    if ((splats[index] = getSplatValue(input)))
      continue;
    read.push_back(input);
    maps.push_back(getBroadcastMap(
        ctx, cast<RankedTensorType>(input.getType()).getShape(), shape));
  }
  maps.push_back(b.getMultiDimIdentityMap(shape.size()));
  Value init = createEmptyTensor(b, loc, resultType);
  auto generic = b.create<linalg::GenericOp>(
      loc, resultType, read, init, maps, iteratorTypes(shape.size(), 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> elements;
        unsigned next = 0;
        for (TypedAttr splat : splats)
          elements.push_back(
              splat ? nb.create<arith::ConstantOp>(nloc, splat).getResult()
                    : args[next++]);
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, elements));
      });
  return generic.getResult(0);
}

Value createScalarGeneric(OpBuilder &b, Location loc, RankedTensorType type,
                          ValueRange inputs, ScalarBodyFn body) {
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              AffineMap::get(b.getContext()));
  Value init = createEmptyTensor(b, loc, {}, type.getElementType());
  return b
      .create<linalg::GenericOp>(
          loc, type, inputs, init, maps, iteratorTypes(0, 0),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args.drop_back()));
          })
      .getResult(0);
}

SmallVector<int64_t> dropAxes(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept;
  for (auto [axis, size] : llvm::enumerate(shape))
    if (!llvm::is_contained(axes, static_cast<int64_t>(axis)))
      kept.push_back(size);
  return kept;
}

Value createReduction(
    OpBuilder &b, Location loc, ValueRange inputs, ArrayRef<int64_t> shape,
    ArrayRef<int64_t> axes, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = shape.size();
  SmallVector<AffineExpr> keptDims;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t axis = 0; axis < rank; ++axis) {
    bool reduced = llvm::is_contained(axes, axis);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced)
      keptDims.push_back(getAffineDimExpr(axis, ctx));
  }
  AffineMap reducedMap = AffineMap::get(rank, 0, keptDims, ctx);
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(cast<RankedTensorType>(input.getType()).getRank() == rank
                       ? b.getMultiDimIdentityMap(rank)
                       : reducedMap);
  maps.push_back(reducedMap);
  Value filled = createFilledTensor(b, loc, dropAxes(shape, axes), init);
  auto generic = b.create<linalg::GenericOp>(
      loc, filled.getType(), inputs, filled, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value next = combine(nb, nloc, args.drop_back(), args.back());
        nb.create<linalg::YieldOp>(nloc, next);
      });
  return generic.getResult(0);
}

Value createLinearIndex(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  if (shape.empty())
    return b.create<arith::ConstantIntOp>(loc, 0, 64);
  // Horner's scheme: ((i0 * d1 + i1) * d2 + i2) ...
  Value linear = b.create<linalg::IndexOp>(loc, 0);
  for (auto [axis, size] : llvm::enumerate(shape.drop_front())) {
    Value index = b.create<linalg::IndexOp>(loc, axis + 1);
    Value scaled = b.create<arith::MulIOp>(
        loc, linear, b.create<arith::ConstantIndexOp>(loc, size));
    linear = b.create<arith::AddIOp>(loc, scaled, index);
  }
  return b.create<arith::IndexCastUIOp>(loc, b.getI64Type(), linear);
}

Value castTensor(OpBuilder &b, Location loc, Value tensor, Type type) {
  auto tensorType = cast<RankedTensorType>(tensor.getType());
  if (tensorType.getElementType() == type)
    return tensor;
  return createElementwiseOp(
      b, loc, tensorType.clone(type), tensor,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        return castFloat(nb, nloc, args.front(), type);
      });
}

Value createWideGemm(OpBuilder &b, Location loc, Value lhs, Value rhs,
                     bool transposeLhs, bool transposeRhs,
                     ArrayRef<int64_t> shape) {
  assert(!(transposeLhs && transposeRhs) && "one transposed side only");
  // 16-bit operands are read as they are and accumulated into an f32
  // tensor (linalg's named matmuls widen their inputs to the output's
  // type, exactly): --mdl-gemm-to-library maps that to a 16-bit GEMM.
  Type accumulatorType =
      getComputeType(getElementTypeOrSelf(lhs.getType()));
  Value init = createZeroTensor(b, loc, shape, accumulatorType);
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

Value createGemm(OpBuilder &b, Location loc, Value lhs, Value rhs,
                 bool transposeLhs, bool transposeRhs,
                 ArrayRef<int64_t> shape) {
  // The f32 product of 16-bit operands rounded once (the tensor-core
  // contract).
  Value product =
      createWideGemm(b, loc, lhs, rhs, transposeLhs, transposeRhs, shape);
  return castTensor(b, loc, product, getElementTypeOrSelf(lhs.getType()));
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

Value convertScalar(OpBuilder &b, Location loc, Value value, Type from,
                    Type to) {
  if (from == to)
    return value;
  Type target = getSignlessType(to);
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  // Anything to bool is `x != 0` (NaN is true, as in C and PyTorch).
  if (to.isInteger(1)) {
    Value zero = createScalarConstant(b, loc, value.getType(), 0);
    if (fromFloat)
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, value,
                                     zero);
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, value, zero);
  }
  if (fromFloat && toFloat) {
    unsigned fromWidth = fromFloat.getWidth(), toWidth = toFloat.getWidth();
    // f16 <-> bf16: the same width, so through f32, which holds both exactly.
    if (fromWidth == toWidth) {
      Value wide = b.create<arith::ExtFOp>(loc, b.getF32Type(), value);
      return b.create<arith::TruncFOp>(loc, target, wide);
    }
    if (fromWidth < toWidth)
      return b.create<arith::ExtFOp>(loc, target, value);
    // f64 -> f16/bf16 through f32, as PyTorch converts (c10's 16-bit types
    // are made from a float); LLVM would call compiler-rt's __truncdfbf2,
    // which libgcc lacks.
    if (fromWidth == 64 && toWidth == 16)
      value = b.create<arith::TruncFOp>(loc, b.getF32Type(), value);
    return b.create<arith::TruncFOp>(loc, target, value);
  }
  if (fromFloat) {
    // PyTorch converts floats to uint8 through int64 (c10's
    // static_cast_with_inter_type), so -1.0 becomes 255 rather than
    // undefined; ui16 follows the same rule here.
    if (to.isUnsignedInteger()) {
      Value wide = b.create<arith::FPToSIOp>(loc, b.getI64Type(), value);
      return b.create<arith::TruncIOp>(loc, target, wide);
    }
    return b.create<arith::FPToSIOp>(loc, target, value);
  }
  if (toFloat) {
    // Integers to f16/bf16 through f32, as PyTorch does (and no compiler-rt
    // call).
    Type direct = toFloat.getWidth() == 16 ? b.getF32Type() : target;
    Value converted =
        isZeroExtended(from)
            ? b.create<arith::UIToFPOp>(loc, direct, value).getResult()
            : b.create<arith::SIToFPOp>(loc, direct, value).getResult();
    if (direct == target)
      return converted;
    return b.create<arith::TruncFOp>(loc, target, converted);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth == toWidth)
    return value;
  if (fromWidth > toWidth)
    return b.create<arith::TruncIOp>(loc, target, value);
  if (isZeroExtended(from))
    return b.create<arith::ExtUIOp>(loc, target, value);
  return b.create<arith::ExtSIOp>(loc, target, value);
}

Value castFloat(OpBuilder &b, Location loc, Value value, Type type) {
  return convertScalar(b, loc, value, value.getType(), type);
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

Value computeInOpmath(OpBuilder &b, Location loc, Type type,
                      ValueRange operands, ScalarBodyFn compute) {
  Type computeType = getComputeType(type);
  if (computeType == type)
    return compute(b, loc, operands);
  SmallVector<Value> wide;
  for (Value operand : operands)
    wide.push_back(operand.getType() == type
                       ? b.create<arith::ExtFOp>(loc, computeType, operand)
                       : operand);
  Value result = compute(b, loc, wide);
  if (result.getType() != computeType)
    return result;
  return b.create<arith::TruncFOp>(loc, type, result);
}

Value extendToComputeType(OpBuilder &b, Location loc, Value value) {
  Type computeType = getComputeType(value.getType());
  if (computeType == value.getType())
    return value;
  return b.create<arith::ExtFOp>(loc, computeType, value);
}

namespace {
/// SplitMix64's finaliser: a bijection of 64-bit words that mixes every
/// input bit into every output bit.
Value mix64(OpBuilder &b, Location loc, Value x) {
  auto constant = [&](uint64_t value) -> Value {
    return b.create<arith::ConstantOp>(
        loc, b.getI64IntegerAttr(static_cast<int64_t>(value)));
  };
  auto xorShift = [&](Value v, uint64_t shift) -> Value {
    return b.create<arith::XOrIOp>(
        loc, v, b.create<arith::ShRUIOp>(loc, v, constant(shift)));
  };
  x = xorShift(x, 30);
  x = b.create<arith::MulIOp>(loc, x, constant(0xBF58476D1CE4E5B9ULL));
  x = xorShift(x, 27);
  x = b.create<arith::MulIOp>(loc, x, constant(0x94D049BB133111EBULL));
  return xorShift(x, 31);
}
} // namespace

Value createDropoutKey(OpBuilder &b, Location loc, Value seed, Value counter,
                       int64_t id) {
  Type i64 = b.getI64Type();
  auto readWord = [&](Value scalarTensor) -> Value {
    Value value = b.create<tensor::ExtractOp>(loc, scalarTensor, ValueRange());
    return b.create<arith::FPToUIOp>(loc, i64, value);
  };
  Value seedWord = readWord(seed);
  Value counterWord = readWord(counter);
  uint64_t salt = static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ULL;
  Value saltValue = b.create<mlir::mdlrt::LaunchConstantOp>(
      loc, i64, b.getI64IntegerAttr(static_cast<int64_t>(salt)));
  Value key = mix64(b, loc, b.create<arith::XOrIOp>(loc, seedWord, saltValue));
  return mix64(b, loc, b.create<arith::XOrIOp>(loc, key, counterWord));
}

Value createDropoutFactor(OpBuilder &b, Location loc, Value key, Value index,
                          double p, Type type) {
  Type i64 = b.getI64Type();
  Value hash = mix64(b, loc, b.create<arith::XOrIOp>(loc, key, index));
  Value top53 = b.create<arith::ShRUIOp>(loc, hash,
                                         createScalarConstant(b, loc, i64, 11));
  // u = top53 * 2^-53 < p exactly when top53 < ceil(p * 2^53): both sides
  // scaled by a power of two, and top53 an integer. So no f64 arithmetic.
  auto threshold = static_cast<uint64_t>(std::ceil(std::ldexp(p, 53)));
  Value dropped = b.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::ult, top53,
      b.create<arith::ConstantOp>(
          loc, b.getI64IntegerAttr(static_cast<int64_t>(threshold))));
  Value zero = createScalarConstant(b, loc, type, 0);
  Value scale = createScalarConstant(b, loc, type, 1.0 / (1.0 - p));
  return b.create<arith::SelectOp>(loc, dropped, zero, scale);
}

Value readMemref(OpBuilder &b, Location loc, Value tensor,
                 bool unitInnerStride) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  if (unitInnerStride && !strides.empty())
    strides.back() = 1;
  auto layout =
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides);
  auto memrefType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  return b.create<bufferization::ToMemrefOp>(loc, memrefType, tensor,
                                             /*read_only=*/true);
}

Value allocate(OpBuilder &b, Location loc, Type type) {
  auto tensor = getSignlessTensorType(type);
  return b.create<memref::AllocOp>(
      loc, MemRefType::get(tensor.getShape(), tensor.getElementType()));
}

Value asResult(OpBuilder &b, Location loc, Value buffer, Type type) {
  return b.create<bufferization::ToTensorOp>(loc, getSignlessTensorType(type),
                                             buffer, /*restrict=*/true,
                                             /*writable=*/true);
}

} // namespace modelc::lowering
