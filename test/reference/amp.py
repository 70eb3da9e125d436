"""bf16 and f16 mixed precision for the reference's layers, where spec §8 and docs/passes/amp.md round.

Written from the rules, not from modelc's code. With H the 16-bit type (bf16
or f16; `rules(precision)` gives the layers for one of them):
- a linear layer or convolution rounds its input, weight and bias to H
  (the f32 masters stay f32), multiplies and sums in f32 (the GEMM's exact
  16-bit operands, f32 accumulation), adds the bias in f32 and rounds the
  result once (a linear layer rounds its product before the bias add: nn.linear
  is `x @ transpose(w) + b`, two ops);
- relu, max pooling and flatten select or move values, exact in H;
- cross-entropy runs in f32 on the H logits.
Backward: each gradient has its value's type. A gradient flowing into an H
value is rounded once where an op makes it: the GEMMs of the backward (f32
sums of exact products) and the bias gradient (an f32 sum); a parameter's
gradient reaches its master as the f32 value of that H number. f16 rounding
overflows to ±inf past 65504, which is what dynamic loss scaling
(grad_scaler.py, train_ref.py --precision f16) is there to catch.

Only what the reference's MLPs and CNNs with relu and max pooling use is here;
anything else is an error, so a test cannot silently compare f32 against 16 bits.
"""
import types

import numpy as np

import layers


def bf16(x):
    """x rounded to bf16 (to nearest, ties to even; NaN stays NaN), as float32."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return np.where(np.isnan(x), x, rounded.view(np.float32))


def f16(x):
    """x rounded to f16 (NumPy's IEEE conversion: to nearest, ties to even,
    ±inf past 65504, f16 subnormals), as float32."""
    with np.errstate(over="ignore"):
        return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


ROUNDING = {"bf16": bf16, "f16": f16}


def rules(precision):
    """The layers of models.forward for `precision` ("bf16" or "f16")."""
    r = ROUNDING[precision]

    def linear(x, weight, bias):
        """r(r(xr @ wr^T) + br): the matmul and the bias add, each rounded once."""
        xr, wr, br = r(x), r(weight), r(bias)
        y = r(r(xr @ wr.T) + br)

        def backward(dy):
            rows_dy = dy.reshape(-1, dy.shape[-1])
            rows_x = xr.reshape(-1, xr.shape[-1])
            dbias = r(rows_dy.sum(axis=0, dtype=np.float32))
            return r(dy @ wr), r(rows_dy.T @ rows_x), dbias

        return y, backward

    def conv2d(x, weight, bias, stride, padding, dilation, groups):
        """r(conv(xr, wr) + br): the f32 product and the bias add rounded once."""
        xr, wr, br = r(x), r(weight), r(bias)
        y, conv_backward = layers.conv2d(xr, wr, br, stride, padding, dilation, groups)

        def backward(dy):
            dx, dweight, dbias = conv_backward(dy)
            return r(dx), r(dweight), r(dbias)

        return r(y), backward

    def max_pool2d(x, kernel, stride=None, padding=0):
        # Non-overlapping or not, the gradient scatter adds in f32 and rounds
        # once: a sum of 16-bit values each window gives.
        y, pool_backward = layers.max_pool2d(x, kernel, stride, padding)
        return y, lambda dy: r(pool_backward(dy))

    def cross_entropy(logits, labels):
        """In f32 on the 16-bit logits; the logits' gradient (for a loss
        gradient `dloss`, under f16 the loss scale over the micro-batches)
        is rounded to the 16-bit type."""
        loss, ce_backward = layers.cross_entropy(logits.astype(np.float32), labels)
        return loss, lambda dloss=1.0: r(ce_backward(dloss))

    return types.SimpleNamespace(linear=linear, conv2d=conv2d, relu=layers.relu,
                                 max_pool2d=max_pool2d, cross_entropy=cross_entropy,
                                 round=r)
