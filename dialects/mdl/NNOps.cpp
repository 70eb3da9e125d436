// Linear algebra and neural-network ops: matmul, layer_norm, embedding,
// dropout, attention and the losses.
#include "dialects/mdl/MdlOps.h"
#include "dialects/mdl/ShapeRules.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mdl;

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>>
mlir::mdl::inferMatmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                            EmitErrorFn emitError) {
  if (lhs.empty() || rhs.empty())
    return reportInvalid(emitError,
                         "operands must have rank at least 1, got ranks ",
                         lhs.size(), " and ", rhs.size());
  modelc::shape_rules::MatmulShapes shapes =
      modelc::shape_rules::inferMatmulShapes(lhs.vec(), rhs.vec());
  if (shapes.lhsK != shapes.rhsK)
    return reportInvalid(emitError, "contracting dimensions differ: lhs ",
                         formatShape(lhs), " has ", shapes.lhsK, ", rhs ",
                         formatShape(rhs), " has ", shapes.rhsK);
  if (!shapes.result)
    return reportInvalid(
        emitError, "batch dimensions ", formatShape(shapes.lhsBatch), " and ",
        formatShape(shapes.rhsBatch), " are not broadcast-compatible");
  return SmallVector<int64_t>(shapes.result->begin(), shapes.result->end());
}

void MatmulOp::build(OpBuilder &builder, OperationState &state, Value lhs,
                     Value rhs) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  std::optional<SmallVector<int64_t>> shape = inferMatmulShape(
      lhsType.getShape(), cast<RankedTensorType>(rhs.getType()).getShape());
  build(builder, state, shape ? lhsType.clone(*shape) : lhsType, lhs, rhs);
}

LogicalResult MatmulOp::verify() {
  RankedTensorType lhs = getLhs().getType();
  std::optional<SmallVector<int64_t>> shape =
      inferMatmulShape(lhs.getShape(), getRhs().getType().getShape(),
                       [&] { return emitOpError(); });
  if (!shape)
    return failure();
  return verifyTensorType(*this, "result", getType(), *shape,
                          lhs.getElementType());
}

//===----------------------------------------------------------------------===//
// layer_norm, rms_norm, embedding, dropout
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  if (input.empty())
    return emitOpError("input must have rank at least 1");
  SmallVector<int64_t> expected = {input.back()};
  for (auto [name, value] : {std::pair<StringRef, Value>{"weight", getWeight()},
                             {"bias", getBias()}}) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(value.getType()).getShape();
    if (shape != ArrayRef<int64_t>(expected))
      return emitOpError() << name << " must have shape "
                           << formatShape(expected)
                           << " (the last axis of the input), got "
                           << formatShape(shape);
  }
  if (!(getEps().convertToDouble() > 0))
    return emitOpError("eps must be positive");
  return success();
}

LogicalResult RmsNormOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  if (input.empty())
    return emitOpError("input must have rank at least 1");
  if (Value weight = getWeight()) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(weight.getType()).getShape();
    if (shape != input.take_back())
      return emitOpError() << "weight must have shape "
                           << formatShape(input.take_back())
                           << " (the last axis of the input), got "
                           << formatShape(shape);
  }
  // PyTorch takes any eps, 0 included.
  if (!(getEps().convertToDouble() >= 0))
    return emitOpError("eps must be >= 0");
  return success();
}

LogicalResult BatchNormOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  if (input.size() < 2)
    return emitOpError("input must be [n, c, ...], of rank at least 2");
  ArrayRef<int64_t> weight = getWeight().getType().getShape();
  if (weight != input.slice(1, 1))
    return emitOpError() << "weight, bias and the running statistics must be "
                         << formatShape(input.slice(1, 1))
                         << " (the channel axis of the input), got "
                         << formatShape(weight);
  if (getWeight().getType().getElementType() !=
      getInput().getType().getElementType())
    return emitOpError("weight and input must have one element type");
  if (Value tracked = getNumBatchesTracked())
    if (cast<RankedTensorType>(tracked.getType()).getRank() != 0)
      return emitOpError("num_batches_tracked must be a scalar");
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0 && momentum <= 1))
    return emitOpError("momentum must be in [0, 1], got ") << momentum;
  if (!(getEps().convertToDouble() > 0))
    return emitOpError("eps must be > 0");
  return success();
}

std::optional<SmallVector<int64_t>>
mlir::mdl::inferEmbeddingShape(ArrayRef<int64_t> ids, ArrayRef<int64_t> table,
                               EmitErrorFn emitError) {
  if (table.size() != 2)
    return reportInvalid(emitError, "table must be 2-D [V, D], got ",
                         formatShape(table));
  SmallVector<int64_t> result(ids);
  result.push_back(table[1]);
  return result;
}

void EmbeddingOp::build(OpBuilder &builder, OperationState &state, Value ids,
                        Value table) {
  auto tableType = cast<RankedTensorType>(table.getType());
  std::optional<SmallVector<int64_t>> shape = inferEmbeddingShape(
      cast<RankedTensorType>(ids.getType()).getShape(), tableType.getShape());
  build(builder, state, shape ? tableType.clone(*shape) : tableType, ids,
        table);
}

LogicalResult EmbeddingOp::verify() {
  RankedTensorType table = getTable().getType();
  std::optional<SmallVector<int64_t>> shape =
      inferEmbeddingShape(getIds().getType().getShape(), table.getShape(),
                          [&] { return emitOpError(); });
  if (!shape)
    return failure();
  return verifyTensorType(*this, "result", getType(), *shape,
                          table.getElementType());
}

LogicalResult DropoutOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0 && p < 1))
    return emitOpError("p must be in [0, 1), got ") << p;
  return success();
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>>
mlir::mdl::inferAttentionShape(ArrayRef<int64_t> query, ArrayRef<int64_t> key,
                               ArrayRef<int64_t> value, EmitErrorFn emitError) {
  if (query.size() != 4 || key.size() != 4 || value.size() != 4)
    return reportInvalid(
        emitError,
        "query, key and value must be 4-D [b, h, t, d], [b, h, s, d] and "
        "[b, h, s, dv], got ",
        formatShape(query), ", ", formatShape(key), " and ",
        formatShape(value));
  if (query.take_front(2) != key.take_front(2) ||
      key.take_front(2) != value.take_front(2))
    return reportInvalid(
        emitError, "query, key and value must agree on batch and heads, got ",
        formatShape(query), ", ", formatShape(key), " and ",
        formatShape(value));
  if (key[2] != value[2])
    return reportInvalid(emitError, "key and value must have the same ",
                         "sequence length, got ", key[2], " and ", value[2]);
  if (query[3] != key[3])
    return reportInvalid(emitError, "query and key must have the same ",
                         "head size, got ", query[3], " and ", key[3]);
  return SmallVector<int64_t>{query[0], query[1], query[2], value[3]};
}

void AttentionOp::build(OpBuilder &builder, OperationState &state, Value query,
                        Value key, Value value, bool causal,
                        std::optional<double> scale) {
  auto queryType = cast<RankedTensorType>(query.getType());
  std::optional<SmallVector<int64_t>> shape = inferAttentionShape(
      queryType.getShape(), cast<RankedTensorType>(key.getType()).getShape(),
      cast<RankedTensorType>(value.getType()).getShape());
  int64_t headSize = queryType.getRank() > 0 ? queryType.getShape().back() : 1;
  double scaleValue =
      scale ? *scale : 1.0 / std::sqrt(static_cast<double>(headSize));
  build(builder, state, shape ? queryType.clone(*shape) : queryType, query, key,
        value, /*mask=*/Value(), causal, llvm::APFloat(scaleValue),
        llvm::APFloat(0.0));
}

/// What attention, attention_forward and attention_backward check alike:
/// the shapes of query, key and value, a finite scale, a dropout in [0, 1)
/// and a mask that broadcasts to the scores [b, h, t, s]. Returns the
/// result's shape.
static FailureOr<SmallVector<int64_t>>
verifyAttentionOperands(Operation *op, Value query, Value key, Value value,
                        Value mask, double scale, double dropout) {
  ArrayRef<int64_t> keyShape = cast<RankedTensorType>(key.getType()).getShape();
  std::optional<SmallVector<int64_t>> shape = inferAttentionShape(
      cast<RankedTensorType>(query.getType()).getShape(), keyShape,
      cast<RankedTensorType>(value.getType()).getShape(),
      [&] { return op->emitOpError(); });
  if (!shape)
    return failure();
  // Any finite scale, as scaled_dot_product_attention takes (0 attends
  // uniformly).
  if (!std::isfinite(scale))
    return op->emitOpError("scale must be finite, got ") << scale;
  if (!(dropout >= 0 && dropout < 1))
    return op->emitOpError("dropout must be in [0, 1), got ") << dropout;
  if (mask) {
    // NumPy broadcasting against the scores [b, h, t, s].
    SmallVector<int64_t> scores = {(*shape)[0], (*shape)[1], (*shape)[2],
                                   keyShape[2]};
    ArrayRef<int64_t> maskShape =
        cast<RankedTensorType>(mask.getType()).getShape();
    bool broadcasts = maskShape.size() <= scores.size();
    for (size_t i = 0; broadcasts && i < maskShape.size(); ++i) {
      int64_t target = scores[scores.size() - maskShape.size() + i];
      broadcasts = maskShape[i] == 1 || maskShape[i] == target;
    }
    if (!broadcasts)
      return op->emitOpError("mask of shape ")
             << formatShape(maskShape)
             << " does not broadcast to the scores [b, h, t, s] = "
             << formatShape(scores);
  }
  return *shape;
}

LogicalResult AttentionOp::verify() {
  FailureOr<SmallVector<int64_t>> shape = verifyAttentionOperands(
      *this, getQuery(), getKey(), getValue(), getMask(),
      getScale().convertToDouble(), getDropout().convertToDouble());
  if (failed(shape))
    return failure();
  return verifyTensorType(*this, "result", getType(), *shape,
                          getQuery().getType().getElementType());
}

/// The fused ops' extra rules: a dropout draws from seed and counter, both
/// given or neither, and `lse` is [b, h, t] in the opmath type (f32, or f64
/// for f64 inputs).
static LogicalResult verifyFusedAttention(Operation *op, Value query,
                                          Value seed, Value counter,
                                          double dropout, Type lseType) {
  if (bool(seed) != bool(counter))
    return op->emitOpError("takes both seed and counter, or neither");
  if (dropout != 0 && !seed)
    return op->emitOpError("a dropout needs the seed and counter operands");
  auto queryType = cast<RankedTensorType>(query.getType());
  Type element = queryType.getElementType();
  Type opmath = element.isF64() ? element : Float32Type::get(op->getContext());
  return verifyTensorType(op, "lse", lseType, queryType.getShape().drop_back(),
                          opmath);
}

LogicalResult AttentionForwardOp::verify() {
  FailureOr<SmallVector<int64_t>> shape = verifyAttentionOperands(
      *this, getQuery(), getKey(), getValue(), getMask(),
      getScale().convertToDouble(), getDropout().convertToDouble());
  if (failed(shape) ||
      failed(verifyTensorType(*this, "result", getResult().getType(), *shape,
                              getQuery().getType().getElementType())))
    return failure();
  return verifyFusedAttention(*this, getQuery(), getSeed(), getCounter(),
                              getDropout().convertToDouble(),
                              getLse().getType());
}

LogicalResult AttentionBackwardOp::verify() {
  FailureOr<SmallVector<int64_t>> shape = verifyAttentionOperands(
      *this, getQuery(), getKey(), getValue(), getMask(),
      getScale().convertToDouble(), getDropout().convertToDouble());
  if (failed(shape))
    return failure();
  Type element = getQuery().getType().getElementType();
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  if (failed(verifyTensorType(*this, "output", getOutput().getType(), *shape,
                              element)) ||
      failed(verifyTensorType(*this, "output_grad", getOutputGrad().getType(),
                              *shape, element)) ||
      failed(verifyTensorType(*this, "query_grad", getQueryGrad().getType(),
                              shapeOf(getQuery()), element)) ||
      failed(verifyTensorType(*this, "key_grad", getKeyGrad().getType(),
                              shapeOf(getKey()), element)) ||
      failed(verifyTensorType(*this, "value_grad", getValueGrad().getType(),
                              shapeOf(getValue()), element)))
    return failure();
  return verifyFusedAttention(*this, getQuery(), getSeed(), getCounter(),
                              getDropout().convertToDouble(),
                              getLse().getType());
}

//===----------------------------------------------------------------------===//
// Losses and metrics
//===----------------------------------------------------------------------===//

/// Class axis last: `labels` has the shape of `logits` without it.
static LogicalResult verifyClassLabels(Operation *op, Value logits,
                                       Value labels) {
  ArrayRef<int64_t> logitsShape =
      cast<RankedTensorType>(logits.getType()).getShape();
  ArrayRef<int64_t> labelsShape =
      cast<RankedTensorType>(labels.getType()).getShape();
  if (logitsShape.empty())
    return op->emitOpError("logits must have a class axis (rank at least 1)");
  if (labelsShape != logitsShape.drop_back())
    return op->emitOpError("labels must have shape ")
           << formatShape(logitsShape.drop_back())
           << " (the logits' shape without the class axis), got "
           << formatShape(labelsShape);
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  return verifyClassLabels(*this, getLogits(), getLabels());
}

LogicalResult NllLossOp::verify() {
  if (failed(verifyClassLabels(*this, getLogProbs(), getLabels())))
    return failure();
  double smoothing = getLabelSmoothing().convertToDouble();
  if (!(smoothing >= 0 && smoothing <= 1))
    return emitOpError("label_smoothing must be in [0, 1], got ") << smoothing;
  Type element = getLogProbs().getType().getElementType();
  Type expected = element.isF64() ? element : Float32Type::get(getContext());
  if (getType().getElementType() != expected)
    return emitOpError("result must be ")
           << RankedTensorType::get({}, expected) << " for log_probs of "
           << element << ", got " << getType();
  return success();
}

LogicalResult BceWithLogitsOp::verify() {
  if (getTarget().getType() != getInput().getType())
    return emitOpError("target must have the input's type ")
           << getInput().getType() << ", got " << getTarget().getType();
  if (Value weight = getPosWeight()) {
    ArrayRef<int64_t> input = getInput().getType().getShape();
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(weight.getType()).getShape();
    if (input.empty() || shape != input.take_back())
      return emitOpError("pos_weight must have shape [C] for an input of "
                         "shape ")
             << formatShape(input) << " (C its last axis), got "
             << formatShape(shape);
  }
  return success();
}

LogicalResult AccuracyOp::verify() {
  return verifyClassLabels(*this, getLogits(), getLabels());
}

//===----------------------------------------------------------------------===//
// lstm_scan
//===----------------------------------------------------------------------===//

LogicalResult mlir::mdl::verifyRecurrentShapes(Operation *op, int64_t gates,
                                               Value sequence, Value weightHh,
                                               const RecurrentShapes &values) {
  auto sequenceType = cast<RankedTensorType>(sequence.getType());
  auto weightType = cast<RankedTensorType>(weightHh.getType());
  Type elementType = sequenceType.getElementType();
  if (!elementType.isF32() && !elementType.isF64())
    return op->emitOpError("runs in f32 or f64, got ") << elementType;
  if (weightType.getRank() != 2 ||
      weightType.getDimSize(0) != gates * weightType.getDimSize(1))
    return op->emitOpError("weight_hh must be [")
           << gates << "h, h], got " << formatShape(weightType.getShape());
  int64_t hidden = weightType.getDimSize(1);
  int64_t width = gates * hidden;
  if (sequenceType.getRank() != 3 || sequenceType.getDimSize(2) != width)
    return op->emitOpError("the sequences must be [b, t, ")
           << width << "] (" << gates << "h, from weight_hh), got "
           << formatShape(sequenceType.getShape());
  int64_t batch = sequenceType.getDimSize(0);
  int64_t time = sequenceType.getDimSize(1);
  auto check = [&](ArrayRef<std::pair<StringRef, Value>> named,
                   ArrayRef<int64_t> shape) {
    for (auto [name, value] : named)
      if (failed(
              verifyTensorType(op, name, value.getType(), shape, elementType)))
        return failure();
    return success();
  };
  return success(succeeded(check(values.sequences, {batch, time, width})) &&
                 succeeded(check(values.units, {batch, time, hidden})) &&
                 succeeded(check(values.states, {batch, hidden})) &&
                 succeeded(check(values.steps, {batch, time + 1, hidden})) &&
                 succeeded(check(values.vectors, {width})));
}

LogicalResult LstmScanOp::verify() {
  std::pair<StringRef, Value> sequences[] = {{"gates", getGates()}};
  std::pair<StringRef, Value> states[] = {{"h0", getH0()}, {"c0", getC0()}};
  std::pair<StringRef, Value> steps[] = {{"hidden", getHidden()},
                                         {"cell", getCell()}};
  return verifyRecurrentShapes(*this, 4, getInput(), getWeightHh(),
                               {sequences, {}, states, steps, {}});
}

LogicalResult GruScanOp::verify() {
  std::pair<StringRef, Value> sequences[] = {{"gates", getGates()}};
  std::pair<StringRef, Value> units[] = {{"recurrent_n", getRecurrentN()}};
  std::pair<StringRef, Value> states[] = {{"h0", getH0()}};
  std::pair<StringRef, Value> steps[] = {{"hidden", getHidden()}};
  std::pair<StringRef, Value> vectors[] = {{"bias_hh", getBiasHh()}};
  return verifyRecurrentShapes(*this, 3, getInput(), getWeightHh(),
                               {sequences, units, states, steps, vectors});
}
