// Vector-Jacobian products of the linear-algebra and neural-network ops:
// matmul, conv2d, pooling, layer_norm, embedding and the losses.
//
// Formulas are PyTorch's (tools/autograd/derivatives.yaml and
// FunctionsManual.cpp); `g` is the result's adjoint. The parts without a
// compact form in mdl ops (transposed convolution, the routing of pooling
// gradients, scatter-add, the softmax-minus-one-hot of cross-entropy) are
// the grad ops of GradOps.td.
#include "dialects/mdl/VJPBuilder.h"

#include <numeric>

using namespace mlir;
using namespace mlir::mdl;

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

// torch.matmul's backward is that of the matrix product it reduces to:
// 1-D operands are promoted (lhs [k] -> [1, k], rhs [k] -> [k, 1], the
// result gaining the size-1 axis), then for C = A B on the last two axes
//   dA = dC B^T,  dB = A^T dC  (mm/bmm in derivatives.yaml),
// each summed over the batch axes its operand was broadcast along, and
// reshaped back to the unpromoted operand. Two 1-D operands (a dot product)
// give dA = g * b, dB = g * a.
SmallVector<Value> MatmulOp::buildVJP(OpBuilder &builder,
                                      ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  Value lhs = getLhs(), rhs = getRhs();
  ArrayRef<int64_t> lhsShape = shapeOf(lhs), rhsShape = shapeOf(rhs);
  if (lhsShape.size() == 1 && rhsShape.size() == 1)
    return {b.mul(g, rhs), b.mul(g, lhs)};

  SmallVector<int64_t> gradShape(getType().getShape());
  if (lhsShape.size() == 1) {
    lhs = b.reshape(lhs, {1, lhsShape[0]});
    gradShape.insert(gradShape.end() - 1, 1);
  }
  if (rhsShape.size() == 1) {
    rhs = b.reshape(rhs, {rhsShape[0], 1});
    gradShape.push_back(1);
  }
  g = b.reshape(g, gradShape);

  Value lhsGrad =
      b.sumToType(b.matmul(g, b.transposeLastTwo(rhs)), lhs.getType());
  Value rhsGrad;
  ArrayRef<int64_t> batchedLhs = shapeOf(lhs);
  if (shapeOf(rhs).size() == 2 && batchedLhs.size() > 2) {
    // A matrix rhs shared by a batch of lhs matrices (a linear layer on
    // [batch, tokens, features]): sum over the batch inside one GEMM,
    // A^T dC with A and dC flattened to rows, instead of a batched product
    // followed by a sum.
    int64_t rows = std::accumulate(batchedLhs.begin(), batchedLhs.end() - 1,
                                   int64_t(1), std::multiplies<int64_t>());
    Value flatLhs = b.reshape(lhs, {rows, batchedLhs.back()});
    Value flatGrad = b.reshape(g, {rows, gradShape.back()});
    rhsGrad = b.matmul(b.transposeLastTwo(flatLhs), flatGrad);
  } else {
    rhsGrad = b.sumToType(b.matmul(b.transposeLastTwo(lhs), g), rhs.getType());
  }
  return {b.reshape(lhsGrad, lhsShape), b.reshape(rhsGrad, rhsShape)};
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

// conv2d (convolution_backward): input: the transposed convolution of grad
// with the weight (conv2d_grad_input); weight: the correlation of the input
// with grad (conv2d_grad_weight); both take stride, padding, dilation and
// groups as the forward op. bias: grad summed over N, H and W.
SmallVector<Value> Conv2dOp::buildVJP(OpBuilder &builder,
                                      ArrayRef<Value> resultAdjoints) {
  Value g = resultAdjoints[0];
  Location loc = getLoc();
  SmallVector<Value> adjoints;
  adjoints.push_back(builder.create<Conv2dGradInputOp>(
      loc, getInput().getType(), g, getWeight(), getStrideAttr(),
      getPaddingAttr(), getDilationAttr(), getGroupsAttr()));
  adjoints.push_back(builder.create<Conv2dGradWeightOp>(
      loc, getWeight().getType(), getInput(), g, getStrideAttr(),
      getPaddingAttr(), getDilationAttr(), getGroupsAttr()));
  if (getBias())
    adjoints.push_back(VJPBuilder(builder, loc).sum(g, {0, 2, 3}));
  return adjoints;
}

// conv2d_grad_input, conv_transpose2d's expansion, is linear in both
// operands: grad: the forward convolution of the result adjoint with the
// weight; weight: conv2d_grad_weight with the result adjoint in the place
// of the input and grad in the place of the output adjoint (PyTorch's
// convolution_backward for transposed convolutions).
SmallVector<Value> Conv2dGradInputOp::buildVJP(OpBuilder &builder,
                                               ArrayRef<Value> resultAdjoints) {
  Value g = resultAdjoints[0];
  Location loc = getLoc();
  return {builder.create<Conv2dOp>(loc, getGrad().getType(), g, getWeight(),
                                   Value(), getStride(), getPadding(),
                                   getDilation(), getGroups()),
          builder.create<Conv2dGradWeightOp>(
              loc, getWeight().getType(), g, getGrad(), getStrideAttr(),
              getPaddingAttr(), getDilationAttr(), getGroupsAttr())};
}

// max_pool2d (max_pool2d_with_indices_backward): each gradient goes to the
// first maximum of its window, as PyTorch's indices choose.
SmallVector<Value> MaxPool2dOp::buildVJP(OpBuilder &builder,
                                         ArrayRef<Value> resultAdjoints) {
  if (!isDifferentiableType(getType()))
    return noGradients(*this);
  return {builder.create<MaxPool2dGradOp>(
      getLoc(), getInput().getType(), getInput(), resultAdjoints[0],
      getKernelAttr(), getStrideAttr(), getPaddingAttr())};
}

// avg_pool2d (avg_pool2d_backward, count_include_pad): each gradient spread
// evenly over its window.
SmallVector<Value> AvgPool2dOp::buildVJP(OpBuilder &builder,
                                         ArrayRef<Value> resultAdjoints) {
  return {builder.create<AvgPool2dGradOp>(getLoc(), getInput().getType(),
                                          resultAdjoints[0], getKernelAttr(),
                                          getStrideAttr(), getPaddingAttr())};
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// attention_forward (FlashAttention-2's backward): one attention_backward
// from the operands, the result and its adjoint and the saved log-sum-exp,
// with the forward's mask, causal, scale and dropout. `lse` only feeds that
// backward, never the loss, so its adjoint is always null; the mask, seed
// and counter take none. When the forward already permutes the result (the
// heads merged back, transpose [0, 2, 1, 3]), the backward reads the
// result back from that copy, permuted again: only one copy of it is kept
// from the forward to the backward.
SmallVector<Value>
AttentionForwardOp::buildVJP(OpBuilder &builder,
                             ArrayRef<Value> resultAdjoints) {
  assert(!resultAdjoints[1] && "the log-sum-exp of attention feeds no loss");
  if (!resultAdjoints[0])
    return SmallVector<Value>(getNumOperands());
  Value output = getResult();
  for (Operation *user : output.getUsers())
    if (auto transpose = dyn_cast<TransposeOp>(user)) {
      SmallVector<int64_t> inverse(transpose.getPerm().size());
      for (auto [axis, from] : llvm::enumerate(transpose.getPerm()))
        inverse[from] = axis;
      output =
          builder.create<TransposeOp>(getLoc(), transpose.getResult(), inverse);
      break;
    }
  auto grad = builder.create<AttentionBackwardOp>(
      getLoc(),
      TypeRange{getQuery().getType(), getKey().getType(), getValue().getType()},
      getQuery(), getKey(), getValue(), output, resultAdjoints[0], getLse(),
      getMask(), getSeed(), getCounter(), getCausalAttr(), getScaleAttr(),
      getDropoutAttr(), getDropoutIdAttr());
  SmallVector<Value> adjoints(getNumOperands());
  adjoints[0] = grad.getQueryGrad();
  adjoints[1] = grad.getKeyGrad();
  adjoints[2] = grad.getValueGrad();
  return adjoints;
}

//===----------------------------------------------------------------------===//
// layer_norm and embedding
//===----------------------------------------------------------------------===//

// layer_norm (native_layer_norm_backward) over the last axis of size D:
// mdl.layer_norm_grad, with the statistics recomputed from the input:
//   mu = mean(x), rstd = 1 / sqrt(mean((x - mu)^2) + eps),
//   xhat = (x - mu) * rstd, dxhat = grad * weight,
//   input:  rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),
//   weight: sum(grad * xhat) over the leading axes,
//   bias:   sum(grad) over the leading axes,
// where the means are over the last axis (keepdim).
SmallVector<Value> LayerNormOp::buildVJP(OpBuilder &builder,
                                         ArrayRef<Value> resultAdjoints) {
  auto grad = builder.create<LayerNormGradOp>(
      getLoc(),
      TypeRange{getType(), getWeight().getType(), getWeight().getType()},
      getInput(), getWeight(), resultAdjoints[0], getEpsAttr());
  return {grad.getInputGrad(), grad.getWeightGrad(), grad.getBiasGrad()};
}

// embedding (embedding_dense_backward): the rows of grad scatter-added into
// the table's rows named by the ids; the ids get nothing.
SmallVector<Value> EmbeddingOp::buildVJP(OpBuilder &builder,
                                         ArrayRef<Value> resultAdjoints) {
  return {Value(),
          builder.create<EmbeddingGradOp>(getLoc(), getTable().getType(),
                                          getIds(), resultAdjoints[0])};
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// cross_entropy (log_softmax + nll_loss with mean reduction over the
// positions not ignored): logits: (softmax(logits) - one_hot(labels)) *
// grad / count, rows with an ignored label zero; labels: nothing.
SmallVector<Value> CrossEntropyOp::buildVJP(OpBuilder &builder,
                                            ArrayRef<Value> resultAdjoints) {
  return {builder.create<CrossEntropyGradOp>(
              getLoc(), getLogits().getType(), getLogits(), getLabels(),
              resultAdjoints[0], getIgnoreIndexAttr()),
          Value()};
}

// mse_loss (mse_loss_backward, mean reduction):
//   input: 2 / n * (input - target) * grad, target: its negation.
SmallVector<Value> MseLossOp::buildVJP(OpBuilder &builder,
                                       ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value g = resultAdjoints[0];
  double count = getInput().getType().getNumElements();
  Value scale = b.mul(g, b.scalar(2.0 / count, g));
  Value inputGrad = b.mul(b.sub(getInput(), getTarget()), scale);
  return {inputGrad, b.neg(inputGrad)};
}

//===----------------------------------------------------------------------===//
// lstm_scan
//===----------------------------------------------------------------------===//

// The time loop backwards is mdl.lstm_scan_grad (PyTorch's LSTM backward,
// step by step); what is left is the gradient of weight_hh, the sum over
// every step of dpre_s^T h_s with h_s = hidden[:, s] the state the step
// read: one [4h, b t] x [b t, h] matrix product. `gates` has no adjoint
// (only the gradient op reads it).
SmallVector<Value> LstmScanOp::buildVJP(OpBuilder &builder,
                                        ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value hiddenGrad =
      resultAdjoints[0] ? resultAdjoints[0] : b.zeros(getHidden().getType());
  Value cellGrad =
      resultAdjoints[1] ? resultAdjoints[1] : b.zeros(getCell().getType());
  auto grad = builder.create<LstmScanGradOp>(
      getLoc(),
      TypeRange{getInput().getType(), getH0().getType(), getC0().getType()},
      hiddenGrad, cellGrad, getGates(), getCell(), getWeightHh());
  ArrayRef<int64_t> sequence = shapeOf(getInput());
  int64_t rows = sequence[0] * sequence[1];
  int64_t hidden = shapeOf(getH0())[1];
  Value read = b.slice(getHidden(), {0, 0, 0},
                       {sequence[0], sequence[1], hidden}, {1, 1, 1});
  Value weightGrad = b.matmul(
      b.transposeLastTwo(b.reshape(grad.getInputGrad(), {rows, sequence[2]})),
      b.reshape(read, {rows, hidden}));
  return {grad.getInputGrad(), weightGrad, grad.getH0Grad(), grad.getC0Grad()};
}

// gru_scan: mdl.gru_scan_grad walks back over time and also returns the
// gradient of each step's recurrent pre-activation hw = h W_hh^T + b_hh;
// weight_hh gets its sum of dhw_s^T h_s (one matmul, as lstm_scan's) and
// bias_hh its sum over the batch and the steps. `gates` and `recurrent_n`
// have no adjoint.
SmallVector<Value> GruScanOp::buildVJP(OpBuilder &builder,
                                       ArrayRef<Value> resultAdjoints) {
  VJPBuilder b(builder, getLoc());
  Value hiddenGrad =
      resultAdjoints[0] ? resultAdjoints[0] : b.zeros(getHidden().getType());
  auto grad = builder.create<GruScanGradOp>(
      getLoc(),
      TypeRange{getInput().getType(), getInput().getType(), getH0().getType()},
      hiddenGrad, getGates(), getRecurrentN(), getHidden(), getWeightHh());
  ArrayRef<int64_t> sequence = shapeOf(getInput());
  int64_t rows = sequence[0] * sequence[1];
  int64_t hidden = shapeOf(getH0())[1];
  Value read = b.slice(getHidden(), {0, 0, 0},
                       {sequence[0], sequence[1], hidden}, {1, 1, 1});
  Value recurrentGrad = b.reshape(grad.getRecurrentGrad(), {rows, sequence[2]});
  Value weightGrad = b.matmul(b.transposeLastTwo(recurrentGrad),
                              b.reshape(read, {rows, hidden}));
  return {grad.getInputGrad(), weightGrad, b.sum(recurrentGrad, {0}),
          grad.getH0Grad()};
}
