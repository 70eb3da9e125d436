// Lowering of mdl.lstm_scan and mdl.lstm_scan_grad: each one scf.for over
// the time steps, never unrolled, so its size does not depend on the
// sequence length. The loop carries whole tensors and writes each step
// through tensor.extract_slice -> linalg -> tensor.insert_slice at the same
// offsets, which one-shot bufferization performs in place (as
// embedding_grad's scatter-add): every buffer is allocated once, outside the
// loop, and the loop becomes one kernel (a block kernel on the GPU,
// docs/codegen/gpu.md). The recurrent matrix product is a linalg.generic, not
// a named matmul, so that it stays in the loop's kernel rather than becoming
// a BLAS call per step.
#include "codegen/linalg/LoweringUtils.h"
#include "codegen/linalg/Patterns.h"

#include "dialects/mdl/MdlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace modelc::lowering;

namespace {

/// Builds the per-step pieces of both loops at one builder and location.
class StepBuilder {
public:
  StepBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// The `[b, width]` slice at time `step`, columns `[column, column +
  /// width)`, of a `[b, t, w]` tensor.
  Value extract(Value source, OpFoldResult step, int64_t column,
                int64_t width) {
    auto type = cast<RankedTensorType>(source.getType());
    auto sliceType = RankedTensorType::get({type.getDimSize(0), width},
                                           type.getElementType());
    return b.create<tensor::ExtractSliceOp>(
        loc, sliceType, source, offsets(step, column),
        sizes(type.getDimSize(0), width), strides());
  }

  /// `slice` (`[b, width]`) written into `dest` at time `step`, from
  /// column `column`.
  Value insert(Value slice, Value dest, OpFoldResult step, int64_t column) {
    auto type = cast<RankedTensorType>(slice.getType());
    return b.create<tensor::InsertSliceOp>(
        loc, slice, dest, offsets(step, column),
        sizes(type.getDimSize(0), type.getDimSize(1)), strides());
  }

  /// One all-parallel linalg.generic over `[b, w]` points: identity maps,
  /// `outs` updated in place, `body` given the ins' then the outs' elements
  /// and returning one value per out.
  SmallVector<Value>
  pointwise(ValueRange ins, ValueRange outs,
            function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
                body) {
    AffineMap identity = b.getMultiDimIdentityMap(2);
    SmallVector<AffineMap> maps(ins.size() + outs.size(), identity);
    auto generic = b.create<linalg::GenericOp>(
        loc, outs.getTypes(), ins, outs, maps, iteratorTypes(2, 0),
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          nb.create<linalg::YieldOp>(nl, body(nb, nl, args));
        });
    return generic.getResults();
  }

  /// `acc + lhs W^T` (`[b, 4h] += [b, h] x [4h, h]^T`) when `transposed`,
  /// else `acc + lhs W` (`[b, h] += [b, 4h] x [4h, h]`), summing the
  /// contracted axis in order.
  Value product(Value lhs, Value weight, Value acc, bool transposed) {
    MLIRContext *ctx = b.getContext();
    // Loops (row, column, contracted).
    AffineMap lhsMap = projectionMap(ctx, 3, {0, 2});
    AffineMap weightMap = transposed ? projectionMap(ctx, 3, {1, 2})
                                     : projectionMap(ctx, 3, {2, 1});
    AffineMap accMap = projectionMap(ctx, 3, {0, 1});
    return b
        .create<linalg::GenericOp>(
            loc, acc.getType(), ValueRange{lhs, weight}, acc,
            ArrayRef<AffineMap>{lhsMap, weightMap, accMap}, iteratorTypes(2, 1),
            [](OpBuilder &nb, Location nl, ValueRange args) {
              Value term = nb.create<arith::MulFOp>(nl, args[0], args[1]);
              nb.create<linalg::YieldOp>(
                  nl, nb.create<arith::AddFOp>(nl, args[2], term).getResult());
            })
        .getResult(0);
  }

private:
  SmallVector<OpFoldResult> offsets(OpFoldResult step, int64_t column) {
    return {b.getIndexAttr(0), step, b.getIndexAttr(column)};
  }
  SmallVector<OpFoldResult> sizes(int64_t batch, int64_t width) {
    return {b.getIndexAttr(batch), b.getIndexAttr(1), b.getIndexAttr(width)};
  }
  SmallVector<OpFoldResult> strides() {
    return SmallVector<OpFoldResult>(3, b.getIndexAttr(1));
  }

  OpBuilder &b;
  Location loc;
};

/// Scalar arithmetic of the cell's bodies, in one element type.
struct CellMath {
  OpBuilder &b;
  Location loc;

  Value add(Value x, Value y) { return b.create<arith::AddFOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(loc, x, y); }
  Value one(Value like) {
    return createScalarConstant(b, loc, like.getType(), 1.0);
  }
  Value tanh(Value x) { return b.create<math::TanhOp>(loc, x); }
  /// ATen's sigmoid: 1 / (1 + exp(-x)).
  Value sigmoid(Value x) {
    Value exp = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
    return b.create<arith::DivFOp>(loc, one(x), add(one(x), exp));
  }
  /// The derivative of sigmoid at its value y: y (1 - y).
  Value sigmoidSlope(Value y) { return mul(y, sub(one(y), y)); }
  /// The derivative of tanh at its value y: 1 - y^2.
  Value tanhSlope(Value y) { return sub(one(y), mul(y, y)); }
};

/// lstm_scan: carries hidden and cell (`[b, t + 1, h]`, step 0 the initial
/// state), the activated gates (`[b, t, 4h]`), the previous state
/// (`[b, h]` each, updated in place) and a `[b, 4h]` scratch for the
/// pre-activations. Step s: scratch = input[:, s]; scratch += h W_hh^T;
/// gates[:, s] = sigmoid/tanh(scratch); then c, h and their step-(s + 1)
/// copies from one generic, as ATen's LSTM cell: c' = f c + i g,
/// h' = o tanh(c').
struct LstmScanLowering : OpConversionPattern<mlir::mdl::LstmScanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::LstmScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Value weight = adaptor.getWeightHh();
    auto inputType = cast<RankedTensorType>(input.getType());
    Type elementType = inputType.getElementType();
    int64_t batch = inputType.getDimSize(0);
    int64_t time = inputType.getDimSize(1);
    int64_t width = inputType.getDimSize(2);
    int64_t hidden = width / 4;
    StepBuilder outer(rewriter, loc);
    OpFoldResult first = rewriter.getIndexAttr(0);

    SmallVector<int64_t> stepsShape = {batch, time + 1, hidden};
    Value hiddenSteps = outer.insert(
        adaptor.getH0(),
        createEmptyTensor(rewriter, loc, stepsShape, elementType), first, 0);
    Value cellSteps = outer.insert(
        adaptor.getC0(),
        createEmptyTensor(rewriter, loc, stepsShape, elementType), first, 0);
    Value gates =
        createEmptyTensor(rewriter, loc, inputType.getShape(), elementType);
    Value scratch = createEmptyTensor(rewriter, loc, {batch, width}, elementType);

    auto loop = rewriter.create<scf::ForOp>(
        loc, createIndexConstant(rewriter, loc, 0),
        createIndexConstant(rewriter, loc, time),
        createIndexConstant(rewriter, loc, 1),
        ValueRange{hiddenSteps, cellSteps, gates, adaptor.getH0(),
                   adaptor.getC0(), scratch},
        [&](OpBuilder &b, Location l, Value step, ValueRange carried) {
          StepBuilder steps(b, l);
          Value pre = steps.pointwise(
              steps.extract(input, step, 0, width), carried[5],
              [](OpBuilder &, Location, ValueRange args) {
                return SmallVector<Value>{args[0]};
              })[0];
          pre = steps.product(carried[3], weight, pre, /*transposed=*/true);
          Value active = steps.pointwise(
              pre, steps.extract(carried[2], step, 0, width),
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                // Columns [2h, 3h) are the cell gate g (tanh), the others
                // i, f and o (sigmoid).
                CellMath math{nb, nl};
                Value column = loopIndex(nb, nl, 1);
                Value low = createIndexConstant(nb, nl, 2 * hidden);
                Value high = createIndexConstant(nb, nl, 3 * hidden);
                Value isCellGate = nb.create<arith::AndIOp>(
                    nl,
                    nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::uge,
                                             column, low),
                    nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::ult,
                                             column, high));
                return SmallVector<Value>{nb.create<arith::SelectOp>(
                    nl, isCellGate, math.tanh(args[0]),
                    math.sigmoid(args[0]))};
              })[0];
          Value gatesNow = steps.insert(active, carried[2], step, 0);
          Value next = b.create<arith::AddIOp>(
              l, step, createIndexConstant(b, l, 1));
          SmallVector<Value> ins;
          for (int64_t gate = 0; gate < 4; ++gate)
            ins.push_back(steps.extract(gatesNow, step, gate * hidden, hidden));
          SmallVector<Value> state = steps.pointwise(
              ins,
              ValueRange{carried[4], carried[3],
                         steps.extract(carried[1], next, 0, hidden),
                         steps.extract(carried[0], next, 0, hidden)},
              [](OpBuilder &nb, Location nl, ValueRange args) {
                CellMath math{nb, nl};
                Value i = args[0], f = args[1], g = args[2], o = args[3];
                Value cell = math.add(math.mul(f, args[4]), math.mul(i, g));
                Value hiddenValue = math.mul(o, math.tanh(cell));
                return SmallVector<Value>{cell, hiddenValue, cell, hiddenValue};
              });
          b.create<scf::YieldOp>(
              l, ValueRange{steps.insert(state[3], carried[0], next, 0),
                            steps.insert(state[2], carried[1], next, 0),
                            gatesNow, state[1], state[0], pre});
        });
    rewriter.replaceOp(op, loop.getResults().take_front(3));
    return success();
  }
};

/// lstm_scan_grad: steps s = t - 1 down to 0 carrying the input gradient
/// (`[b, t, 4h]`), what step s + 1 passes back to step s (dh = dpre W_hh
/// and dc = dc' f, `[b, h]` each, updated in place) and a `[b, h]` scratch.
/// Per step, one generic over `[b, h]` turns the carried values into the
/// step's dh (in the carried dh), dc (in the scratch) and the next carried
/// dc; one over `[b, 4h]` writes the four pre-activation gradients into
/// input_grad[:, s], reading the gates of column j's unit through the maps
/// (d0, d1 mod h + k h); then dh = 0, dh += dpre W_hh. After the loop the
/// carried values join the adjoints of the initial state.
struct LstmScanGradLowering
    : OpConversionPattern<mlir::mdl::LstmScanGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::LstmScanGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value hiddenGrad = adaptor.getHiddenGrad();
    Value cellGrad = adaptor.getCellGrad();
    Value gates = adaptor.getGates();
    Value cell = adaptor.getCell();
    Value weight = adaptor.getWeightHh();
    auto gatesType = cast<RankedTensorType>(gates.getType());
    Type elementType = gatesType.getElementType();
    int64_t batch = gatesType.getDimSize(0);
    int64_t time = gatesType.getDimSize(1);
    int64_t width = gatesType.getDimSize(2);
    int64_t hidden = width / 4;
    StepBuilder outer(rewriter, loc);

    Value inputGrad =
        createEmptyTensor(rewriter, loc, gatesType.getShape(), elementType);
    Value carriedHidden =
        createZeroTensor(rewriter, loc, {batch, hidden}, elementType);
    Value carriedCell =
        createZeroTensor(rewriter, loc, {batch, hidden}, elementType);
    Value scratch =
        createEmptyTensor(rewriter, loc, {batch, hidden}, elementType);

    // Over [b, 4h]: the unit of column d1 is d1 mod h; gate k of that unit
    // is column d1 mod h + k h.
    AffineExpr row = getAffineDimExpr(0, ctx);
    AffineExpr unit = getAffineDimExpr(1, ctx) % hidden;
    auto unitMap = AffineMap::get(2, 0, {row, unit}, ctx);
    auto gateMap = [&](int64_t gate) {
      return AffineMap::get(2, 0, {row, unit + gate * hidden}, ctx);
    };
    AffineMap identity = AffineMap::getMultiDimIdentityMap(2, ctx);

    auto loop = rewriter.create<scf::ForOp>(
        loc, createIndexConstant(rewriter, loc, 0),
        createIndexConstant(rewriter, loc, time),
        createIndexConstant(rewriter, loc, 1),
        ValueRange{inputGrad, carriedHidden, carriedCell, scratch},
        [&](OpBuilder &b, Location l, Value reversed, ValueRange carried) {
          StepBuilder steps(b, l);
          Value step = b.create<arith::SubIOp>(
              l, createIndexConstant(b, l, time - 1), reversed);
          Value next = b.create<arith::SubIOp>(
              l, createIndexConstant(b, l, time), reversed);
          Value stepGates = steps.extract(gates, step, 0, width);
          Value c = steps.extract(cell, next, 0, hidden);
          // dh = hidden_grad[:, s + 1] + carried dh (into the carried dh);
          // dc = cell_grad[:, s + 1] + carried dc + dh o (1 - tanh(c)^2)
          // (into the scratch); the next carried dc = dc f.
          SmallVector<Value> state = steps.pointwise(
              ValueRange{steps.extract(gates, step, 1 * hidden, hidden),
                         steps.extract(gates, step, 3 * hidden, hidden), c,
                         steps.extract(hiddenGrad, next, 0, hidden),
                         steps.extract(cellGrad, next, 0, hidden)},
              ValueRange{carried[1], carried[3], carried[2]},
              [](OpBuilder &nb, Location nl, ValueRange args) {
                CellMath math{nb, nl};
                Value f = args[0], o = args[1];
                Value dh = math.add(args[3], args[5]);
                Value dc = math.add(
                    math.add(args[4], args[7]),
                    math.mul(math.mul(dh, o), math.tanhSlope(math.tanh(args[2]))));
                return SmallVector<Value>{dh, dc, math.mul(dc, f)};
              });
          Value dh = state[0], dc = state[1];
          Value stepGrad = steps.extract(carried[0], step, 0, width);
          auto gradOp = b.create<linalg::GenericOp>(
              l, stepGrad.getType(),
              ValueRange{stepGates, stepGates, stepGates, stepGates, c,
                         steps.extract(cell, step, 0, hidden), dh, dc},
              stepGrad,
              ArrayRef<AffineMap>{gateMap(0), gateMap(1), gateMap(2),
                                  gateMap(3), unitMap, unitMap, unitMap,
                                  unitMap, identity},
              iteratorTypes(2, 0),
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                CellMath math{nb, nl};
                Value i = args[0], f = args[1], g = args[2], o = args[3];
                Value dhValue = args[6], dcValue = args[7];
                Value input = math.mul(math.mul(dcValue, g), math.sigmoidSlope(i));
                Value forget =
                    math.mul(math.mul(dcValue, args[5]), math.sigmoidSlope(f));
                Value cellGate = math.mul(math.mul(dcValue, i), math.tanhSlope(g));
                Value output = math.mul(math.mul(dhValue, math.tanh(args[4])),
                                        math.sigmoidSlope(o));
                // Column block k = d1 / h picks gate k's gradient.
                Value block = nb.create<arith::DivUIOp>(
                    nl, loopIndex(nb, nl, 1), createIndexConstant(nb, nl, hidden));
                auto is = [&](int64_t k) {
                  return nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq,
                                                  block,
                                                  createIndexConstant(nb, nl, k));
                };
                Value result = nb.create<arith::SelectOp>(nl, is(2), cellGate, output);
                result = nb.create<arith::SelectOp>(nl, is(1), forget, result);
                result = nb.create<arith::SelectOp>(nl, is(0), input, result);
                nb.create<linalg::YieldOp>(nl, result);
              });
          Value gradNow =
              steps.insert(gradOp.getResult(0), carried[0], step, 0);
          Value zero = createScalarConstant(b, l, elementType, 0.0);
          Value cleared = b.create<linalg::FillOp>(l, zero, dh).getResult(0);
          Value dhNext =
              steps.product(steps.extract(gradNow, step, 0, width), weight,
                            cleared, /*transposed=*/false);
          b.create<scf::YieldOp>(l, ValueRange{gradNow, dhNext, state[2], dc});
        });

    OpFoldResult first = rewriter.getIndexAttr(0);
    auto addInitial = [&](Value adjoint, Value carriedValue) {
      return outer.pointwise(
          ValueRange{outer.extract(adjoint, first, 0, hidden), carriedValue},
          createEmptyTensor(rewriter, loc, {batch, hidden}, elementType),
          [](OpBuilder &nb, Location nl, ValueRange args) {
            return SmallVector<Value>{
                nb.create<arith::AddFOp>(nl, args[0], args[1])};
          })[0];
    };
    rewriter.replaceOp(op, {loop.getResult(0),
                            addInitial(hiddenGrad, loop.getResult(1)),
                            addInitial(cellGrad, loop.getResult(2))});
    return success();
  }
};

} // namespace

void modelc::populateRecurrentToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LstmScanLowering, LstmScanGradLowering>(patterns.getContext());
}
