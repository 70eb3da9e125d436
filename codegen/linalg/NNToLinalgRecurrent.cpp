// Lowering of mdl.lstm_scan, mdl.gru_scan and their gradients: each one scf.for
// over the time steps, never unrolled, so its size does not depend on the
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

  /// Columns `[column, column + width)` of a `[b, w]` tensor.
  Value columns(Value source, int64_t column, int64_t width) {
    auto type = cast<RankedTensorType>(source.getType());
    int64_t batch = type.getDimSize(0);
    auto sliceType =
        RankedTensorType::get({batch, width}, type.getElementType());
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0),
                                         b.getIndexAttr(column)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(batch),
                                       b.getIndexAttr(width)};
    SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
    return b.create<tensor::ExtractSliceOp>(loc, sliceType, source, offsets,
                                            sizes, strides);
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

  /// One all-parallel linalg.generic over `[b, k h]` points (k =
  /// `gates`), writing `outs` (`[b, k h]` each) in place. Column d1 belongs
  /// to unit d1 mod h of gate block d1 / h; `body` gets, in order, the k
  /// gate values of that unit read from `gateSource` (`[b, k h]`, through
  /// the maps (d0, d1 mod h + g h)), the unit's element of each of `units`
  /// (`[b, h]`), and the block index, and returns one value per out.
  SmallVector<Value> perColumn(
      Value gateSource, int64_t gates, int64_t hidden, ValueRange units,
      ValueRange outs,
      function_ref<SmallVector<Value>(OpBuilder &, Location, ArrayRef<Value>,
                                      ArrayRef<Value>, Value)>
          body) {
    MLIRContext *ctx = b.getContext();
    AffineExpr row = getAffineDimExpr(0, ctx);
    AffineExpr unit = getAffineDimExpr(1, ctx) % hidden;
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    for (int64_t gate = 0; gate < gates; ++gate) {
      ins.push_back(gateSource);
      maps.push_back(AffineMap::get(2, 0, {row, unit + gate * hidden}, ctx));
    }
    for (Value value : units) {
      ins.push_back(value);
      maps.push_back(AffineMap::get(2, 0, {row, unit}, ctx));
    }
    maps.append(outs.size(), b.getMultiDimIdentityMap(2));
    auto generic = b.create<linalg::GenericOp>(
        loc, outs.getTypes(), ins, outs, maps, iteratorTypes(2, 0),
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value block = nb.create<arith::DivUIOp>(
              nl, loopIndex(nb, nl, 1), createIndexConstant(nb, nl, hidden));
          SmallVector<Value> gateValues(args.take_front(gates));
          SmallVector<Value> unitValues(args.slice(gates, units.size()));
          nb.create<linalg::YieldOp>(
              nl, body(nb, nl, gateValues, unitValues, block));
        });
    return generic.getResults();
  }

  /// `adjoint[:, 0] + carried`: the adjoint of an initial state, from the
  /// `[b, t + 1, h]` adjoint of the steps and what the loop carried back.
  Value addToFirstStep(Value adjoint, Value carried) {
    auto type = cast<RankedTensorType>(carried.getType());
    return pointwise(
        ValueRange{extract(adjoint, b.getIndexAttr(0), 0, type.getDimSize(1)),
                   carried},
        createEmptyTensor(b, loc, type.getShape(), type.getElementType()),
        [](OpBuilder &nb, Location nl, ValueRange args) {
          return SmallVector<Value>{
              nb.create<arith::AddFOp>(nl, args[0], args[1])};
        })[0];
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
  /// `candidates[k]` where `block` (an index) is k.
  Value selectBlock(Value block, ArrayRef<Value> candidates) {
    Value result = candidates.back();
    for (int64_t k = candidates.size() - 2; k >= 0; --k) {
      Value is = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, block,
                                         createIndexConstant(b, loc, k));
      result = b.create<arith::SelectOp>(loc, is, candidates[k], result);
    }
    return result;
  }
};

/// The sizes of a scan from a `[b, t, gates h]` sequence operand.
struct ScanShape {
  Type elementType;
  int64_t batch, time, width, hidden;

  ScanShape(Value sequence, int64_t gates) {
    auto type = cast<RankedTensorType>(sequence.getType());
    elementType = type.getElementType();
    batch = type.getDimSize(0);
    time = type.getDimSize(1);
    width = type.getDimSize(2);
    hidden = width / gates;
  }
};

/// The body of a time loop: the step it works on (`step`, and `next` =
/// step + 1, the step's slot in a `[b, t + 1, h]` tensor), the carried
/// tensors; it yields the new ones.
using StepBody = function_ref<void(OpBuilder &, Location, Value step,
                                   Value next, ValueRange carried)>;

/// `scf.for` over the `time` steps carrying `init`, forwards (step = i) or
/// backwards (step = time - 1 - i).
scf::ForOp timeLoop(OpBuilder &builder, Location loc, int64_t time,
                    bool backwards, ValueRange init, StepBody body) {
  return builder.create<scf::ForOp>(
      loc, createIndexConstant(builder, loc, 0),
      createIndexConstant(builder, loc, time),
      createIndexConstant(builder, loc, 1), init,
      [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
        Value step = backwards ? b.create<arith::SubIOp>(
                                     l, createIndexConstant(b, l, time - 1), i)
                               : i;
        Value next =
            b.create<arith::AddIOp>(l, step, createIndexConstant(b, l, 1));
        body(b, l, step, next, carried);
      });
}

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
    const ScanShape shape(input, 4);
    Type elementType = shape.elementType;
    int64_t batch = shape.batch, time = shape.time, width = shape.width,
            hidden = shape.hidden;
    StepBuilder outer(rewriter, loc);
    OpFoldResult first = rewriter.getIndexAttr(0);

    SmallVector<int64_t> stepsShape = {batch, time + 1, hidden};
    Value hiddenSteps = outer.insert(
        adaptor.getH0(),
        createEmptyTensor(rewriter, loc, stepsShape, elementType), first, 0);
    Value cellSteps = outer.insert(
        adaptor.getC0(),
        createEmptyTensor(rewriter, loc, stepsShape, elementType), first, 0);
    Value gates = createEmptyTensor(
        rewriter, loc, ArrayRef<int64_t>{batch, time, width}, elementType);
    Value scratch =
        createEmptyTensor(rewriter, loc, {batch, width}, elementType);

    scf::ForOp loop = timeLoop(
        rewriter, loc, time, /*backwards=*/false,
        ValueRange{hiddenSteps, cellSteps, gates, adaptor.getH0(),
                   adaptor.getC0(), scratch},
        [&](OpBuilder &b, Location l, Value step, Value next,
            ValueRange carried) {
          StepBuilder steps(b, l);
          Value pre =
              steps.pointwise(steps.extract(input, step, 0, width), carried[5],
                              [](OpBuilder &, Location, ValueRange args) {
                                return SmallVector<Value>{args[0]};
                              })[0];
          pre = steps.product(carried[3], weight, pre, /*transposed=*/true);
          // i, f and o are sigmoids, the cell gate g (block 2) a tanh.
          Value active = steps.pointwise(
              pre, steps.extract(carried[2], step, 0, width),
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                CellMath math{nb, nl};
                Value block = nb.create<arith::DivUIOp>(
                    nl, loopIndex(nb, nl, 1),
                    createIndexConstant(nb, nl, hidden));
                Value sigmoid = math.sigmoid(args[0]);
                return SmallVector<Value>{math.selectBlock(
                    block, {sigmoid, sigmoid, math.tanh(args[0]), sigmoid})};
              })[0];
          Value gatesNow = steps.insert(active, carried[2], step, 0);
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

/// The LSTM step's state gradients, elementwise: from (f, o, c,
/// hidden_grad, cell_grad) and the carried (dh, scratch, dc), dh =
/// hidden_grad + carried dh, dc = cell_grad + carried dc + dh o (1 -
/// tanh(c)^2), and the next carried dc = dc f.
SmallVector<Value> lstmStateGrad(OpBuilder &b, Location loc, ValueRange args) {
  CellMath math{b, loc};
  Value f = args[0], o = args[1];
  Value dh = math.add(args[3], args[5]);
  Value dc =
      math.add(math.add(args[4], args[7]),
               math.mul(math.mul(dh, o), math.tanhSlope(math.tanh(args[2]))));
  return {dh, dc, math.mul(dc, f)};
}

/// The LSTM step's pre-activation gradient of one column (perColumn): from
/// its unit's gates (i, f, g, o) and (c, previous c, dh, dc), gate block
/// `block`'s: dc g i (1 - i), dc c_prev f (1 - f), dc i (1 - g^2),
/// dh tanh(c) o (1 - o).
SmallVector<Value> lstmGateGrad(OpBuilder &b, Location loc,
                                ArrayRef<Value> gate, ArrayRef<Value> unit,
                                Value block) {
  CellMath math{b, loc};
  Value i = gate[0], f = gate[1], g = gate[2], o = gate[3];
  Value dh = unit[2], dc = unit[3];
  return {math.selectBlock(
      block,
      {math.mul(math.mul(dc, g), math.sigmoidSlope(i)),
       math.mul(math.mul(dc, unit[1]), math.sigmoidSlope(f)),
       math.mul(math.mul(dc, i), math.tanhSlope(g)),
       math.mul(math.mul(dh, math.tanh(unit[0])), math.sigmoidSlope(o))})};
}

/// lstm_scan_grad: steps s = t - 1 down to 0 carrying the input gradient
/// (`[b, t, 4h]`), what step s + 1 passes back to step s (dh = dpre W_hh
/// and dc = dc' f, `[b, h]` each, updated in place) and a `[b, h]` scratch.
/// Per step, one generic over `[b, h]` turns the carried values into the
/// step's dh (in the carried dh), dc (in the scratch) and the next carried
/// dc; one over `[b, 4h]` writes the four pre-activation gradients into
/// input_grad[:, s], reading the gates of column j's unit through the maps
/// (d0, d1 mod h + k h); then dh = 0, dh += dpre W_hh. After the loop the
/// carried values join the adjoints of the initial state.
struct LstmScanGradLowering : OpConversionPattern<mlir::mdl::LstmScanGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::LstmScanGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value hiddenGrad = adaptor.getHiddenGrad();
    Value cellGrad = adaptor.getCellGrad();
    Value gates = adaptor.getGates();
    Value cell = adaptor.getCell();
    Value weight = adaptor.getWeightHh();
    const ScanShape shape(gates, 4);
    Type elementType = shape.elementType;
    int64_t batch = shape.batch, time = shape.time, width = shape.width,
            hidden = shape.hidden;
    StepBuilder outer(rewriter, loc);

    Value inputGrad = createEmptyTensor(
        rewriter, loc, ArrayRef<int64_t>{batch, time, width}, elementType);
    Value carriedHidden =
        createZeroTensor(rewriter, loc, {batch, hidden}, elementType);
    Value carriedCell =
        createZeroTensor(rewriter, loc, {batch, hidden}, elementType);
    Value scratch =
        createEmptyTensor(rewriter, loc, {batch, hidden}, elementType);

    scf::ForOp loop = timeLoop(
        rewriter, loc, time, /*backwards=*/true,
        ValueRange{inputGrad, carriedHidden, carriedCell, scratch},
        [&](OpBuilder &b, Location l, Value step, Value next,
            ValueRange carried) {
          StepBuilder steps(b, l);
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
              ValueRange{carried[1], carried[3], carried[2]}, lstmStateGrad);
          Value dh = state[0], dc = state[1];
          Value stepGrad = steps.perColumn(
              stepGates, 4, hidden,
              ValueRange{c, steps.extract(cell, step, 0, hidden), dh, dc},
              steps.extract(carried[0], step, 0, width), lstmGateGrad)[0];
          Value gradNow = steps.insert(stepGrad, carried[0], step, 0);
          Value zero = createScalarConstant(b, l, elementType, 0.0);
          Value cleared = b.create<linalg::FillOp>(l, zero, dh).getResult(0);
          Value dhNext = steps.product(steps.extract(gradNow, step, 0, width),
                                       weight, cleared, /*transposed=*/false);
          b.create<scf::YieldOp>(l, ValueRange{gradNow, dhNext, state[2], dc});
        });

    rewriter.replaceOp(op, {loop.getResult(0),
                            outer.addToFirstStep(hiddenGrad, loop.getResult(1)),
                            outer.addToFirstStep(cellGrad, loop.getResult(2))});
    return success();
  }
};

/// The GRU step's activated gate of one column (perColumn): from its
/// unit's input projections x (r, z, n) and recurrent pre-activations hw,
/// r = sigmoid(x_r + hw_r), z = sigmoid(x_z + hw_z), n = tanh(x_n + r
/// hw_n), block `block`'s.
SmallVector<Value> gruGates(OpBuilder &b, Location loc, ArrayRef<Value> x,
                            ArrayRef<Value> hw, Value block) {
  CellMath math{b, loc};
  Value r = math.sigmoid(math.add(x[0], hw[0]));
  Value z = math.sigmoid(math.add(x[1], hw[1]));
  Value n = math.tanh(math.add(x[2], math.mul(r, hw[2])));
  return {math.selectBlock(block, {r, z, n})};
}

/// gru_scan: carries hidden (`[b, t + 1, h]`, step 0 the initial state),
/// the activated gates (`[b, t, 3h]`), each step's hw_n (`[b, t, h]`), the
/// previous state (`[b, h]`, updated in place) and a `[b, 3h]` scratch for
/// hw = h W_hh^T + b_hh. Step s: scratch = b_hh; scratch += h W_hh^T;
/// gates[:, s] from input[:, s] and hw (each column reading its unit's
/// values through perColumn); then h' = n + z (h - n), as ATen's GRU cell,
/// into the carried state and step s + 1, and hw_n into recurrent_n.
struct GruScanLowering : OpConversionPattern<mlir::mdl::GruScanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::GruScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Value weight = adaptor.getWeightHh();
    Value bias = adaptor.getBiasHh();
    const ScanShape shape(input, 3);
    Type elementType = shape.elementType;
    int64_t batch = shape.batch, time = shape.time, width = shape.width,
            hidden = shape.hidden;
    StepBuilder outer(rewriter, loc);

    Value hiddenSteps =
        outer.insert(adaptor.getH0(),
                     createEmptyTensor(rewriter, loc, {batch, time + 1, hidden},
                                       elementType),
                     rewriter.getIndexAttr(0), 0);
    Value gates = createEmptyTensor(
        rewriter, loc, ArrayRef<int64_t>{batch, time, width}, elementType);
    Value recurrentN =
        createEmptyTensor(rewriter, loc, {batch, time, hidden}, elementType);
    Value scratch =
        createEmptyTensor(rewriter, loc, {batch, width}, elementType);
    AffineMap biasMap = projectionMap(rewriter.getContext(), 2, {1});
    AffineMap identity = rewriter.getMultiDimIdentityMap(2);

    scf::ForOp loop = timeLoop(
        rewriter, loc, time, /*backwards=*/false,
        ValueRange{hiddenSteps, gates, recurrentN, adaptor.getH0(), scratch},
        [&](OpBuilder &b, Location l, Value step, Value next,
            ValueRange carried) {
          StepBuilder steps(b, l);
          Value hw =
              b.create<linalg::GenericOp>(
                   l, carried[4].getType(), bias, carried[4],
                   ArrayRef<AffineMap>{biasMap, identity}, iteratorTypes(2, 0),
                   [](OpBuilder &nb, Location nl, ValueRange args) {
                     nb.create<linalg::YieldOp>(nl, args[0]);
                   })
                  .getResult(0);
          hw = steps.product(carried[3], weight, hw, /*transposed=*/true);
          // Column block 0 r, 1 z, 2 n; each column computes its unit's r
          // (n needs it) and keeps its own gate.
          Value active = steps.perColumn(
              steps.extract(input, step, 0, width), 3, hidden,
              ValueRange{steps.columns(hw, 0, hidden),
                         steps.columns(hw, hidden, hidden),
                         steps.columns(hw, 2 * hidden, hidden)},
              steps.extract(carried[1], step, 0, width), gruGates)[0];
          Value gatesNow = steps.insert(active, carried[1], step, 0);
          SmallVector<Value> state = steps.pointwise(
              ValueRange{steps.extract(gatesNow, step, hidden, hidden),
                         steps.extract(gatesNow, step, 2 * hidden, hidden),
                         steps.columns(hw, 2 * hidden, hidden)},
              ValueRange{carried[3], steps.extract(carried[0], next, 0, hidden),
                         steps.extract(carried[2], step, 0, hidden)},
              [](OpBuilder &nb, Location nl, ValueRange args) {
                CellMath math{nb, nl};
                Value z = args[0], n = args[1];
                Value h = math.add(n, math.mul(z, math.sub(args[3], n)));
                return SmallVector<Value>{h, h, args[2]};
              });
          b.create<scf::YieldOp>(
              l,
              ValueRange{steps.insert(state[1], carried[0], next, 0), gatesNow,
                         steps.insert(state[2], carried[2], step, 0), state[0],
                         hw});
        });
    rewriter.replaceOp(op, loop.getResults().take_front(3));
    return success();
  }
};

/// gru_scan_grad: steps s = t - 1 down to 0 carrying the input and
/// recurrent gradients (`[b, t, 3h]`) and dh passed back to step s
/// (`[b, h]`, in place). Per step: one `[b, 3h]` generic writes both
/// gradients' step s from the saved gates, hw_n, the state the step read
/// and dh = hidden_grad[:, s + 1] + carried; then the carried dh becomes
/// dh z, plus recurrent_grad[:, s] W_hh.
struct GruScanGradLowering : OpConversionPattern<mlir::mdl::GruScanGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(mlir::mdl::GruScanGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value hiddenGrad = adaptor.getHiddenGrad();
    Value gates = adaptor.getGates();
    Value recurrentN = adaptor.getRecurrentN();
    Value hiddenSteps = adaptor.getHidden();
    Value weight = adaptor.getWeightHh();
    const ScanShape shape(gates, 3);
    Type elementType = shape.elementType;
    int64_t batch = shape.batch, time = shape.time, width = shape.width,
            hidden = shape.hidden;
    StepBuilder outer(rewriter, loc);

    scf::ForOp loop = timeLoop(
        rewriter, loc, time, /*backwards=*/true,
        ValueRange{
            createEmptyTensor(rewriter, loc,
                              ArrayRef<int64_t>{batch, time, width},
                              elementType),
            createEmptyTensor(rewriter, loc,
                              ArrayRef<int64_t>{batch, time, width},
                              elementType),
            createZeroTensor(rewriter, loc, {batch, hidden}, elementType)},
        [&](OpBuilder &b, Location l, Value step, Value next,
            ValueRange carried) {
          StepBuilder steps(b, l);
          Value stepGates = steps.extract(gates, step, 0, width);
          Value dhOut = steps.extract(hiddenGrad, next, 0, hidden);
          SmallVector<Value> grads = steps.perColumn(
              stepGates, 3, hidden,
              ValueRange{steps.extract(recurrentN, step, 0, hidden),
                         steps.extract(hiddenSteps, step, 0, hidden), dhOut,
                         carried[2]},
              ValueRange{steps.extract(carried[0], step, 0, width),
                         steps.extract(carried[1], step, 0, width)},
              [](OpBuilder &nb, Location nl, ArrayRef<Value> gate,
                 ArrayRef<Value> unit, Value block) {
                CellMath math{nb, nl};
                Value r = gate[0], z = gate[1], n = gate[2];
                Value hwN = unit[0], previous = unit[1];
                Value dh = math.add(unit[2], unit[3]);
                Value dpreN = math.mul(math.mul(dh, math.sub(math.one(z), z)),
                                       math.tanhSlope(n));
                Value dpreR =
                    math.mul(math.mul(dpreN, hwN), math.sigmoidSlope(r));
                Value dpreZ = math.mul(math.mul(dh, math.sub(previous, n)),
                                       math.sigmoidSlope(z));
                return SmallVector<Value>{
                    math.selectBlock(block, {dpreR, dpreZ, dpreN}),
                    math.selectBlock(block,
                                     {dpreR, dpreZ, math.mul(dpreN, r)})};
              });
          Value inputGrad = steps.insert(grads[0], carried[0], step, 0);
          Value recurrentGrad = steps.insert(grads[1], carried[1], step, 0);
          Value direct = steps.pointwise(
              ValueRange{dhOut, steps.extract(gates, step, hidden, hidden)},
              carried[2], [](OpBuilder &nb, Location nl, ValueRange args) {
                CellMath math{nb, nl};
                return SmallVector<Value>{
                    math.mul(math.add(args[0], args[2]), args[1])};
              })[0];
          Value dh = steps.product(steps.extract(recurrentGrad, step, 0, width),
                                   weight, direct, /*transposed=*/false);
          b.create<scf::YieldOp>(l, ValueRange{inputGrad, recurrentGrad, dh});
        });
    rewriter.replaceOp(op,
                       {loop.getResult(0), loop.getResult(1),
                        outer.addToFirstStep(hiddenGrad, loop.getResult(2))});
    return success();
  }
};

} // namespace

void modelc::populateRecurrentToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LstmScanLowering, LstmScanGradLowering, GruScanLowering,
               GruScanGradLowering>(patterns.getContext());
}
