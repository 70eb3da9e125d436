// Lowering of the mdl reductions (sum, mean, max, min over axes; argmax;
// softmax and log_softmax along an axis) to linalg.generic with reduction
// iterators, initialised by linalg.fill.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"
#include "dialects/mdl/SumOrder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// The kind of an axes reduction.
enum class ReduceKind { Sum, Mean, Max, Min };

template <typename OpTy> constexpr ReduceKind getReduceKind();
template <> constexpr ReduceKind getReduceKind<mlir::mdl::SumOp>() {
  return ReduceKind::Sum;
}
template <> constexpr ReduceKind getReduceKind<mlir::mdl::MeanOp>() {
  return ReduceKind::Mean;
}
template <> constexpr ReduceKind getReduceKind<mlir::mdl::MaxOp>() {
  return ReduceKind::Max;
}
template <> constexpr ReduceKind getReduceKind<mlir::mdl::MinOp>() {
  return ReduceKind::Min;
}

/// `max` (or `min`) of two values of mdl element type `type`; floats
/// propagate NaN, as torch.amax/amin.
Value buildExtremum(OpBuilder &b, Location loc, Value lhs, Value rhs, Type type,
                    bool max) {
  if (isa<FloatType>(type))
    return max ? b.create<arith::MaximumFOp>(loc, lhs, rhs).getResult()
               : b.create<arith::MinimumFOp>(loc, lhs, rhs);
  if (isZeroExtended(type))
    return max ? b.create<arith::MaxUIOp>(loc, lhs, rhs).getResult()
               : b.create<arith::MinUIOp>(loc, lhs, rhs);
  return max ? b.create<arith::MaxSIOp>(loc, lhs, rhs).getResult()
             : b.create<arith::MinSIOp>(loc, lhs, rhs);
}

using mlir::mdl::kSumBlock;

/// The sum over `axes` of `input` (shape `shape`) into an f32
/// accumulator, in a cascade as PyTorch's CPU sum makes one
/// (dialects/mdl/SumOrder.h): with K terms
/// per result, K > kSumBlock and the reduced axes adjacent, the axes are
/// taken as one of K elements, whose first floor(K / kSumBlock) blocks of
/// kSumBlock are each summed in order, then those partial sums the same
/// way, level after level; the terms after the last whole block are summed
/// in order and added at the end. Each term then passes through about
/// log_128(K) short sums instead of one of K, so the error of a sum of
/// 2^20 terms is near f32's rounding of the result rather than 2^20 times
/// it. Otherwise (a short sum, axes apart, another accumulator) it is the
/// plain in-order reduction. `combine` adds an element (of the input's
/// type or the accumulator's) to the accumulator.
Value createBlockedSum(
    OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> shape,
    ArrayRef<int64_t> axes, Value zero,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> combine) {
  SmallVector<int64_t> sorted(axes);
  llvm::sort(sorted);
  int64_t terms = 1;
  for (int64_t axis : sorted)
    terms *= shape[axis];
  bool adjacent =
      !sorted.empty() && sorted.back() - sorted.front() + 1 == int64_t(sorted.size());
  if (!zero.getType().isF32() || terms <= kSumBlock || !adjacent)
    return createReduction(b, loc, input, shape, axes, zero, combine);

  // The reduced axes as one, at position `axis`.
  int64_t axis = sorted.front();
  SmallVector<int64_t> flat(shape.begin(), shape.begin() + axis);
  flat.push_back(terms);
  flat.append(shape.begin() + sorted.back() + 1, shape.end());
  Value x = reshapeTensor(b, loc, input, flat);
  SmallVector<Value> tails;
  while (flat[axis] > kSumBlock) {
    int64_t count = flat[axis], blocks = count / kSumBlock;
    auto slice = [&](int64_t offset, int64_t size) {
      SmallVector<int64_t> sizes(flat);
      sizes[axis] = size;
      SmallVector<int64_t> offsets(flat.size(), 0), strides(flat.size(), 1);
      offsets[axis] = offset;
      MLIRContext *ctx = b.getContext();
      return b
          .create<tensor::ExtractSliceOp>(
              loc, x, getAsIndexOpFoldResult(ctx, offsets),
              getAsIndexOpFoldResult(ctx, sizes),
              getAsIndexOpFoldResult(ctx, strides))
          .getResult();
    };
    Value whole = blocks * kSumBlock == count ? x : slice(0, blocks * kSumBlock);
    if (blocks * kSumBlock != count) {
      SmallVector<int64_t> tailShape(flat);
      tailShape[axis] = count - blocks * kSumBlock;
      tails.push_back(createReduction(b, loc,
                                      slice(blocks * kSumBlock,
                                            tailShape[axis]),
                                      tailShape, {axis}, zero, combine));
    }
    SmallVector<int64_t> split(flat.begin(), flat.begin() + axis);
    split.push_back(blocks);
    split.push_back(kSumBlock);
    split.append(flat.begin() + axis + 1, flat.end());
    x = createReduction(b, loc, reshapeTensor(b, loc, whole, split), split,
                        {axis + 1}, zero, combine);
    flat[axis] = blocks;
  }
  Value sum = createReduction(b, loc, x, flat, {axis}, zero, combine);
  for (Value tail : tails)
    sum = createElementwiseOp(
        b, loc, cast<RankedTensorType>(sum.getType()), ValueRange{sum, tail},
        [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          return nb.create<arith::AddFOp>(nloc, args[0], args[1]);
        });
  return sum;
}

/// sum, mean, max, min over `axes`. Sums of f16/bf16 accumulate in f32 and
/// round once (PyTorch's accumulate type); f32 sums (and those) of many
/// terms add in a cascade of short sums (createBlockedSum), as PyTorch's
/// do. Integer sums wrap in their own type (the frontend widens to i64
/// first). mean divides the sum by the number of reduced elements.
template <typename OpTy> struct ReduceLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    constexpr ReduceKind kind = getReduceKind<OpTy>();
    Location loc = op.getLoc();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    Type type = op.getInput().getType().getElementType();
    Type signless = inputType.getElementType();
    ArrayRef<int64_t> shape = inputType.getShape();
    ArrayRef<int64_t> axes = op.getAxes();
    bool additive = kind == ReduceKind::Sum || kind == ReduceKind::Mean;
    Type accumulator = additive ? getComputeType(signless) : signless;

    Value init;
    if (additive)
      init = createScalarConstant(rewriter, loc, accumulator, 0);
    else if (kind == ReduceKind::Max)
      init = createLowestValue(rewriter, loc, type);
    else
      init = createHighestValue(rewriter, loc, type);
    auto combine = [&](OpBuilder &b, Location nloc, ValueRange elements,
                       Value acc) -> Value {
          Value element = elements[0];
          if (!additive)
            return buildExtremum(b, nloc, element, acc, type,
                                 kind == ReduceKind::Max);
          if (isa<IntegerType>(accumulator))
            return b.create<arith::AddIOp>(nloc, element, acc).getResult();
          if (element.getType() != accumulator)
            element = b.create<arith::ExtFOp>(nloc, accumulator, element);
          return b.create<arith::AddFOp>(nloc, element, acc).getResult();
    };
    Value reduced =
        additive ? createBlockedSum(rewriter, loc, adaptor.getInput(), shape,
                                    axes, init, combine)
                 : createReduction(rewriter, loc, adaptor.getInput(), shape,
                                   axes, init, combine);

    if (kind == ReduceKind::Mean || accumulator != signless) {
      int64_t count = 1;
      for (int64_t axis : axes)
        count *= shape[axis];
      auto reducedType = cast<RankedTensorType>(reduced.getType());
      reduced = createElementwiseOp(
          rewriter, loc, reducedType.clone(signless), reduced,
          [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
            Value value = args[0];
            if (kind == ReduceKind::Mean)
              value = b.create<arith::DivFOp>(
                  nloc, value,
                  createScalarConstant(b, nloc, accumulator, count));
            if (accumulator != signless)
              value = b.create<arith::TruncFOp>(nloc, signless, value);
            return value;
          });
    }
    // keepdim: the reduced axes come back as size 1 through a view.
    rewriter.replaceOp(
        op, reshapeTensor(rewriter, loc, reduced, op.getType().getShape()));
    return success();
  }
};

/// Whether candidate (x, index) beats (best, bestIndex) for torch.argmax:
/// greater, or equal and earlier; for floats a NaN beats every number and a
/// later NaN. Indices are i64.
Value argmaxBetter(OpBuilder &b, Location loc, Type type, Value x, Value index,
                   Value best, Value bestIndex) {
  Value earlier =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, index, bestIndex);
  Value greater, equal;
  if (isa<FloatType>(type)) {
    greater = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, best);
    equal = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, x, best);
  } else {
    greater = b.create<arith::CmpIOp>(loc,
                                      isZeroExtended(type)
                                          ? arith::CmpIPredicate::ugt
                                          : arith::CmpIPredicate::sgt,
                                      x, best);
    equal = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, x, best);
  }
  Value better = b.create<arith::OrIOp>(
      loc, greater, b.create<arith::AndIOp>(loc, equal, earlier));
  if (isa<FloatType>(type)) {
    // A NaN wins over numbers, and over a later NaN.
    Value xIsNaN =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
    Value bestIsNumber =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ORD, best, best);
    Value nanWins = b.create<arith::AndIOp>(
        loc, xIsNaN, b.create<arith::OrIOp>(loc, bestIsNumber, earlier));
    better = b.create<arith::OrIOp>(loc, better, nanWins);
  }
  return better;
}

/// Past this many elements along the axis, argmax runs in two stages.
constexpr int64_t kArgmaxChunk = 1024;

/// The index (i64) of the maximum along `axis`: the first one on ties, and
/// the first NaN if there is one (NaN is greater than everything), as
/// torch.argmax. The combiner compares indices explicitly, so the result
/// does not depend on the order the reduction visits the elements: an axis
/// longer than kArgmaxChunk is cut into chunks of that many (the last
/// shorter), each chunk's best (value, index) found in parallel (one
/// generic with the chunk a parallel loop), then the chunks' bests
/// combined, with the same result as one pass and no kernel serial over a
/// whole vocabulary.
struct ArgmaxLowering : OpConversionPattern<mlir::mdl::ArgmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::ArgmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    Type type = op.getInput().getType().getElementType();
    Type i64 = rewriter.getI64Type();
    ArrayRef<int64_t> shape = inputType.getShape();
    int64_t rank = shape.size();
    int64_t axis = op.getAxis();
    int64_t length = shape[axis];
    SmallVector<int64_t> reducedShape = dropAxes(shape, {axis});
    auto inits = [&](ArrayRef<int64_t> initShape) {
      return SmallVector<Value>{
          createFilledTensor(rewriter, loc, initShape,
                             createLowestValue(rewriter, loc, type)),
          createFilledTensor(rewriter, loc, initShape,
                             createScalarConstant(rewriter, loc, i64, 0))};
    };
    auto yieldBest = [&](OpBuilder &b, Location l, Value x, Value index,
                         Value best, Value bestIndex, Value valid) {
      Value better = argmaxBetter(b, l, type, x, index, best, bestIndex);
      if (valid)
        better = b.create<arith::AndIOp>(l, valid, better);
      b.create<linalg::YieldOp>(
          l,
          ValueRange{b.create<arith::SelectOp>(l, better, x, best),
                     b.create<arith::SelectOp>(l, better, index, bestIndex)});
    };
    auto typesOf = [](ValueRange values) {
      return SmallVector<Type>(values.getTypes());
    };

    if (length <= kArgmaxChunk) {
      SmallVector<AffineExpr> keptDims;
      SmallVector<utils::IteratorType> iterators;
      for (int64_t dim = 0; dim < rank; ++dim) {
        iterators.push_back(dim == axis ? utils::IteratorType::reduction
                                        : utils::IteratorType::parallel);
        if (dim != axis)
          keptDims.push_back(getAffineDimExpr(dim, ctx));
      }
      AffineMap reducedMap = AffineMap::get(rank, 0, keptDims, ctx);
      SmallVector<Value> outs = inits(reducedShape);
      auto generic = rewriter.create<linalg::GenericOp>(
          loc, typesOf(outs), input, outs,
          ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank), reducedMap,
                              reducedMap},
          iterators, [&](OpBuilder &b, Location l, ValueRange args) {
            Value index = b.create<arith::IndexCastUIOp>(
                l, i64, b.create<linalg::IndexOp>(l, axis));
            yieldBest(b, l, args[0], index, args[1], args[2], Value());
          });
      rewriter.replaceOp(op, reshapeTensor(rewriter, loc, generic.getResult(1),
                                           op.getType().getShape()));
      return success();
    }

    // Stage 1, loops (kept dims.., chunk p, element j of it): element
    // p * chunk + j of the axis when it is inside it.
    int64_t chunks = (length + kArgmaxChunk - 1) / kArgmaxChunk;
    unsigned kept = rank - 1;
    SmallVector<int64_t> partialShape(reducedShape);
    partialShape.push_back(chunks);
    SmallVector<utils::IteratorType> iterators(kept + 1,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    // The inner loop's bound comes from a [chunk] input that is never
    // read (1 KiB); the input itself is read by position.
    Value bounds = rewriter.create<tensor::EmptyOp>(
        loc, ArrayRef<int64_t>{kArgmaxChunk}, rewriter.getI8Type());
    AffineMap partialMap = leadingDimsMap(ctx, kept + 2, kept + 1);
    SmallVector<Value> partialOuts = inits(partialShape);
    auto partials = rewriter.create<linalg::GenericOp>(
        loc, typesOf(partialOuts), bounds, partialOuts,
        ArrayRef<AffineMap>{projectionMap(ctx, kept + 2, {kept + 1}),
                            partialMap, partialMap},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value position = b.create<arith::AddIOp>(
              l,
              b.create<arith::MulIOp>(l, loopIndex(b, l, kept),
                                      createIndexConstant(b, l, kArgmaxChunk)),
              loopIndex(b, l, kept + 1));
          Value last = createIndexConstant(b, l, length - 1);
          Value valid = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::ule,
                                                position, last);
          Value clamped = b.create<arith::MinUIOp>(l, position, last);
          SmallVector<Value> indices;
          for (int64_t dim = 0, k = 0; dim < rank; ++dim)
            indices.push_back(dim == axis ? clamped : loopIndex(b, l, k++));
          Value x = b.create<tensor::ExtractOp>(l, input, indices);
          Value index = b.create<arith::IndexCastUIOp>(l, i64, position);
          yieldBest(b, l, x, index, args[1], args[2], valid);
        });
    // Stage 2: the chunks' bests, combined with their indices.
    SmallVector<utils::IteratorType> last(kept, utils::IteratorType::parallel);
    last.push_back(utils::IteratorType::reduction);
    AffineMap reducedMap = leadingDimsMap(ctx, kept + 1, kept);
    SmallVector<Value> outs = inits(reducedShape);
    auto total = rewriter.create<linalg::GenericOp>(
        loc, typesOf(outs), partials.getResults(), outs,
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(kept + 1),
                            rewriter.getMultiDimIdentityMap(kept + 1),
                            reducedMap, reducedMap},
        last, [&](OpBuilder &b, Location l, ValueRange args) {
          yieldBest(b, l, args[0], args[1], args[2], args[3], Value());
        });
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, total.getResult(1),
                                         op.getType().getShape()));
    return success();
  }
};

/// softmax and log_softmax along `axis`, numerically stable as ATen's:
/// m = max(x), s = sum(exp(x - m)); softmax = exp(x - m) / s and
/// log_softmax = (x - m) - log(s). f16/bf16 compute in f32 and round once.
/// Three generics: the max, the sum (exp recomputed, not stored), the result.
template <typename OpTy, bool isLog>
struct SoftmaxLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    Type element = type.getElementType();
    Type compute = getComputeType(element);
    ArrayRef<int64_t> shape = type.getShape();
    int64_t axis = op.getAxis();
    auto widen = [&](OpBuilder &b, Location nloc, Value value) {
      return value.getType() == compute
                 ? value
                 : b.create<arith::ExtFOp>(nloc, compute, value).getResult();
    };

    Value max = createReduction(
        rewriter, loc, input, shape, axis,
        createLowestValue(rewriter, loc, element),
        [](OpBuilder &b, Location nloc, ValueRange x, Value acc) {
          return b.create<arith::MaximumFOp>(nloc, x[0], acc).getResult();
        });
    Value sum = createReduction(
        rewriter, loc, ValueRange{input, max}, shape, axis,
        createScalarConstant(rewriter, loc, compute, 0),
        [&](OpBuilder &b, Location nloc, ValueRange x, Value acc) {
          Value wideX = widen(b, nloc, x[0]);
          Value rowMax = widen(b, nloc, x[1]);
          Value shifted = b.create<arith::SubFOp>(nloc, wideX, rowMax);
          Value exp = b.create<math::ExpOp>(nloc, shifted);
          return b.create<arith::AddFOp>(nloc, acc, exp).getResult();
        });

    // The reductions with the axis kept as 1 broadcast against the input.
    SmallVector<int64_t> keptShape(shape);
    keptShape[axis] = 1;
    Value keptMax = reshapeTensor(rewriter, loc, max, keptShape);
    Value keptSum = reshapeTensor(rewriter, loc, sum, keptShape);
    Value result = createElementwiseOp(
        rewriter, loc, type, ValueRange{input, keptMax, keptSum},
        [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
          Value wideX = widen(b, nloc, args[0]);
          Value rowMax = widen(b, nloc, args[1]);
          Value shifted = b.create<arith::SubFOp>(nloc, wideX, rowMax);
          Value value =
              isLog ? b.create<arith::SubFOp>(
                           nloc, shifted, b.create<math::LogOp>(nloc, args[2]))
                          .getResult()
                    : b.create<arith::DivFOp>(
                           nloc, b.create<math::ExpOp>(nloc, shifted), args[2])
                          .getResult();
          if (compute != element)
            value = b.create<arith::TruncFOp>(nloc, element, value);
          return value;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void modelc::populateReductionToLinalgPatterns(RewritePatternSet &patterns) {
  using namespace mlir::mdl;
  patterns.add<ReduceLowering<SumOp>, ReduceLowering<MeanOp>,
               ReduceLowering<MaxOp>, ReduceLowering<MinOp>, ArgmaxLowering,
               SoftmaxLowering<SoftmaxOp, false>,
               SoftmaxLowering<LogSoftmaxOp, true>>(patterns.getContext());
}
