#!/usr/bin/python3
"""nn-16bit.test: writes the inputs and weights of Inputs/nn_16bit.mdl, or
checks its outputs against the NN ops computed here with NumPy: operands
rounded to bf16/f16 (nearest, ties to even), the op computed in f64 and the
result rounded once to the 16-bit type (cross_entropy's result is f32; it is
held to the same tolerance). The program computes in f32 and rounds once, so
each element may differ by one 16-bit ulp at most. The data avoids results
near zero that cancel (f32 rounding of the operands would then exceed a
16-bit ulp of the result). On it, a 16-bit accumulator is many ulps off for
layer_norm's row sums (near 6,400) and cross_entropy's sums of 512
exponentials (printed, and required, so that the check can fail).

  nn_16bit_ref.py write DIR
  nn_16bit_ref.py check DIR Y.npz
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from halves import (ROUND, bf16, conv2d_pad1, far_off, load_case,  # noqa: E402
                    sequential_sum, within_one_ulp)

EPS = 1e-5


def gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def gelu_tanh(x):
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    return 0.5 * x * (1 + np.tanh(inner))


def layer_norm(x, w, b, mean=None):
    if mean is None:
        mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * w + b


def avg_pool2d(x, k, stride, padding):
    padded = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh = (padded.shape[2] - k) // stride + 1
    ow = (padded.shape[3] - k) // stride + 1
    out = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(k):
        for j in range(k):
            out += padded[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
    return out / (k * k)


def log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def cross_entropy(x, labels, exp_sum=None):
    m = x.max(-1)
    if exp_sum is None:
        exp_sum = np.exp(x - m[:, None]).sum(-1)
    picked = x[np.arange(len(labels)), labels]
    return np.mean(np.log(exp_sum) + m - picked)


def inputs(rng):
    # `shifted` has rows of mean ~100: a 16-bit row sum (near 6,400, where
    # bf16's spacing is 32) loses the mean; exact in f32. The logits are
    # near-flat: their 512 exponentials are all near 1, and a bf16 sum of
    # them stalls where its spacing reaches 2.
    return {"x": rng.uniform(-3, 3, (8, 64)).astype(np.float32),
            "shifted": (100 + rng.normal(0, 1, (8, 64))).astype(np.float32),
            "img": rng.uniform(1, 2, (8, 3, 8, 8)).astype(np.float32),
            "logits": rng.uniform(0, 0.5, (8, 512)).astype(np.float32),
            "labels": rng.integers(0, 512, 8).astype(np.int32),
            "target": rng.uniform(-3, 3, (8, 64)).astype(np.float32)}


def weights(rng):
    # Biases well above |normalised * w| keep layer_norm's results from
    # cancelling to near zero.
    return {"ln.w": rng.uniform(0.5, 1, 64).astype(np.float32),
            "ln.bias": rng.uniform(4, 5, 64).astype(np.float32),
            "ln_f16.w": rng.uniform(0.5, 1, 64).astype(np.float32),
            "ln_f16.bias": rng.uniform(4, 5, 64).astype(np.float32),
            "conv.weight": rng.uniform(0, 1, (4, 3, 3, 3)).astype(np.float32),
            "conv.bias": rng.uniform(0, 1, 4).astype(np.float32)}


def main(argv):
    case = load_case(argv, 14, inputs, weights)
    if case is None:
        return 0
    x, p, y = case
    xb, logits, labels = bf16(x["x"]), bf16(x["logits"]), x["labels"]
    ln_args = {dtype: (ROUND[dtype](x["shifted"]),
                       ROUND[dtype](p[prefix + ".w"]),
                       ROUND[dtype](p[prefix + ".bias"]))
               for dtype, prefix in (("bf16", "ln"), ("f16", "ln_f16"))}
    batch = np.ones(8)
    want = {
        "gelu": ("bf16", gelu(xb)),
        "gelu_tanh": ("bf16", gelu_tanh(xb)),
        "ln": ("bf16", layer_norm(*ln_args["bf16"])),
        "ln_f16": ("f16", layer_norm(*ln_args["f16"])),
        "pool": ("bf16", avg_pool2d(bf16(x["img"]), 3, 2, 1)),
        "pool_global": ("bf16", avg_pool2d(bf16(x["img"]), 8, 8, 0)),
        "softmax": ("bf16", np.exp(log_softmax(logits))),
        "log_softmax": ("bf16", log_softmax(logits)),
        "cross_entropy": ("bf16", cross_entropy(logits, labels) * batch),
        "mse": ("bf16", np.mean((xb - bf16(x["target"])) ** 2) * batch),
        "conv": ("bf16", conv2d_pad1(bf16(x["img"]), bf16(p["conv.weight"]),
                                     bf16(p["conv.bias"]))),
    }
    ok = within_one_ulp(y, want, unrounded={"cross_entropy"})

    # The same ops with a 16-bit accumulator, on the same rounded operands.
    narrow = {}
    for dtype in ("bf16", "f16"):
        shifted, w, b = ln_args[dtype]
        mean = ROUND[dtype](sequential_sum(shifted, dtype) / 64)[:, None]
        narrow["ln" if dtype == "bf16" else "ln_f16"] = (
            dtype, layer_norm(shifted, w, b, mean))
    m = logits.max(-1)
    exps = np.exp(logits - m[:, None])
    narrow["cross_entropy"] = (
        "bf16",
        cross_entropy(logits, labels, sequential_sum(exps, "bf16")) * batch)
    for name, (dtype, value) in narrow.items():
        ok = far_off(name, dtype, value, want[name][1]) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
