#!/usr/bin/python3
"""transformer-encoder.test: writes the inputs and weights of
Inputs/encoder.mdl, or checks its outputs against NumPy (f64) written from
torch's documentation: scaled_dot_product_attention (a boolean mask is true
where a query attends; the scores elsewhere are -inf before the softmax),
nn.MultiheadAttention (in_proj, heads, out_proj; key_padding_mask true at
ignored keys) and nn.TransformerEncoderLayer (norm_first false:
x = norm1(x + sa(x)), x = norm2(x + ff(x)); true: x = x + sa(norm1(x)),
x = x + ff(norm2(x)); ff = linear2(activation(linear1(x)))). Every output
within 1e-5 (the program computes in f32).

  encoder_ref.py write DIR
  encoder_ref.py check DIR Y.npz
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from halves import load_case  # noqa: E402


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def sdpa(q, k, v, visible=None, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if visible is not None:
        s = np.where(visible, s, -np.inf)
    return softmax(s) @ v


def layer_norm(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    var = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def mha(x, pad, p, name, heads):
    b, t, d = x.shape
    qkv = x @ p[name + ".in_proj_weight"].T + p[name + ".in_proj_bias"]
    split = [a.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)
             for a in np.split(qkv, 3, axis=-1)]
    o = sdpa(*split, visible=~pad[:, None, None, :])
    o = o.transpose(0, 2, 1, 3).reshape(b, t, d)
    return o @ p[name + ".out_proj.weight"].T + p[name + ".out_proj.bias"]


def encoder_layer(x, pad, p, name, heads, norm_first, act, eps):
    def norm(h, i):
        return layer_norm(h, p[f"{name}.norm{i}.weight"], p[f"{name}.norm{i}.bias"], eps)

    def ff(h):
        h = act(h @ p[name + ".linear1.weight"].T + p[name + ".linear1.bias"])
        return h @ p[name + ".linear2.weight"].T + p[name + ".linear2.bias"]

    sa = lambda h: mha(h, pad, p, name + ".self_attn", heads)  # noqa: E731
    if norm_first:
        x = x + sa(norm(x, 1))
        return x + ff(norm(x, 2))
    x = norm(x + sa(x), 1)
    return norm(x + ff(x), 2)


def inputs(rng):
    pad = np.zeros((2, 5), bool)
    pad[0, 3:] = True          # row 0 has 3 tokens, row 1 all 5
    m = rng.uniform(size=(2, 5, 5)) < 0.6
    m[:, :, 0] = True          # every query sees a key
    return {"x": rng.normal(0, 1, (2, 5, 8)).astype(np.float32), "pad": pad,
            "q": rng.normal(0, 1, (2, 2, 5, 4)).astype(np.float32),
            "k": rng.normal(0, 1, (2, 2, 5, 4)).astype(np.float32),
            "v": rng.normal(0, 1, (2, 2, 5, 3)).astype(np.float32), "m": m}


def weights(rng):
    w = {}
    for name in ("post", "pre"):
        shapes = {"self_attn.in_proj_weight": (24, 8), "self_attn.in_proj_bias": (24,),
                  "self_attn.out_proj.weight": (8, 8), "self_attn.out_proj.bias": (8,),
                  "linear1.weight": (16, 8), "linear1.bias": (16,),
                  "linear2.weight": (8, 16), "linear2.bias": (8,)}
        for key, shape in shapes.items():
            w[f"{name}.{key}"] = rng.normal(0, 0.4, shape).astype(np.float32)
        for i in (1, 2):
            w[f"{name}.norm{i}.weight"] = rng.uniform(0.5, 1.5, 8).astype(np.float32)
            w[f"{name}.norm{i}.bias"] = rng.normal(0, 0.2, 8).astype(np.float32)
    return w


def main(argv):
    case = load_case(argv, 41, inputs, weights)
    if case is None:
        return 0
    x, p, y = case
    f = {k: v.astype(np.float64) for k, v in x.items() if v.dtype == np.float32}
    p = {k: v.astype(np.float64) for k, v in p.items()}
    pad = x["pad"]
    causal = np.tril(np.ones((5, 5), bool))
    want = {
        "masked": sdpa(f["q"], f["k"], f["v"], visible=x["m"][:, None]),
        "padded_causal": sdpa(f["q"], f["k"], f["v"], scale=0.3,
                              visible=causal & ~pad[:, None, None, :]),
        "post": encoder_layer(f["x"], pad, p, "post", 2, False, lambda h: np.maximum(h, 0), 1e-5),
        "pre": encoder_layer(f["x"], np.zeros_like(pad), p, "pre", 2, True, gelu, 1e-3),
    }
    ok = True
    for name, expected in want.items():
        got = y[name].astype(np.float64)
        good = got.shape == expected.shape
        err = np.max(np.abs(got - expected)) if good else np.inf
        good = good and err <= 1e-5
        print(f"{name}: {'ok' if good else 'MISMATCH'} (max error {err:.1e})")
        ok = ok and good
    # The masks change the answers: without them the outputs differ.
    if np.max(np.abs(want["masked"] - sdpa(f["q"], f["k"], f["v"]))) < 1e-3:
        print("masked: the mask has no effect on this data")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
