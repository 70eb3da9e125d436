"""bf16 mixed precision for the reference's layers, where spec §8 and docs/passes/amp.md round.

Written from the rules, not from modelc's code:
- a linear layer or convolution rounds its input, weight and bias to bf16
  (the f32 masters stay f32), multiplies and sums in f32 (the GEMM's exact
  16-bit operands, f32 accumulation), adds the bias in f32 and rounds the
  result once (a linear layer rounds its product before the bias add: nn.linear
  is `x @ transpose(w) + b`, two ops);
- relu, max pooling and flatten select or move values, exact in bf16;
- cross-entropy runs in f32 on the bf16 logits.
Backward: each gradient has its value's type. A gradient flowing into a bf16
value is rounded once where an op makes it: the GEMMs of the backward (f32
sums of exact products) and the bias gradient (an f32 sum); a parameter's
gradient reaches its master as the f32 value of that bf16 number.

Only what the reference's MLPs and CNNs with relu and max pooling use is here;
anything else is an error, so a test cannot silently compare f32 against bf16.
"""
import numpy as np

import layers


def bf16(x):
    """x rounded to bf16 (to nearest, ties to even; NaN stays NaN), as float32."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return np.where(np.isnan(x), x, rounded.view(np.float32))


def linear(x, weight, bias):
    """bf16(bf16(xb @ wb^T) + bb): the matmul and the bias add, each rounded once."""
    xb, wb, bb = bf16(x), bf16(weight), bf16(bias)
    y = bf16(bf16(xb @ wb.T) + bb)

    def backward(dy):
        rows_dy = dy.reshape(-1, dy.shape[-1])
        rows_x = xb.reshape(-1, xb.shape[-1])
        dbias = bf16(rows_dy.sum(axis=0, dtype=np.float32))
        return bf16(dy @ wb), bf16(rows_dy.T @ rows_x), dbias

    return y, backward


def conv2d(x, weight, bias, stride, padding, dilation, groups):
    """bf16(conv(xb, wb) + bb): the f32 product and the bias add rounded once."""
    xb, wb, bb = bf16(x), bf16(weight), bf16(bias)
    y, conv_backward = layers.conv2d(xb, wb, bb, stride, padding, dilation, groups)

    def backward(dy):
        dx, dweight, dbias = conv_backward(dy)
        return bf16(dx), bf16(dweight), bf16(dbias)

    return bf16(y), backward


def relu(x):
    return layers.relu(x)


def max_pool2d(x, kernel, stride=None, padding=0):
    # Non-overlapping or not, the gradient scatter adds in f32 and rounds
    # once: a sum of bf16 values each window gives.
    y, pool_backward = layers.max_pool2d(x, kernel, stride, padding)
    return y, lambda dy: bf16(pool_backward(dy))


def cross_entropy(logits, labels):
    """In f32 on the bf16 logits; the logits' gradient is rounded to bf16."""
    loss, ce_backward = layers.cross_entropy(logits.astype(np.float32), labels)
    return loss, lambda: bf16(ce_backward())
