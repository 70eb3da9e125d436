"""Writes the inputs of edge_values.mdl and checks its outputs against NumPy.

edge_values_ref.py inputs DIR    writes q.npy, x.npy, i.npy, h.npy, lab.npy
edge_values_ref.py check DIR     compares DIR/out.npz with the reference

16-bit conversions follow PyTorch: f64 and integers go to f16/bf16 through
f32 (c10's 16-bit types are made from a float), each rounding to nearest
even. NumPy has no bf16, so bf16 rounding is done on the f32 bits here.
"""
import os
import sys

import numpy as np


def bf16_round(a):
    """f32 -> bf16 -> f32 with round to nearest even (finite inputs)."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def inputs(rng):
    q = rng.normal(size=(2, 1, 3, 4)).astype(np.float32)
    x = np.array([[1.00390625, 1 + 2**-9 + 2**-30, -3.7], [1e-9, 2.5, 65519.9]])
    i = np.array([[257, 4097, -3], [12345, 0, 2049]], np.int64)
    h = bf16_round(rng.normal(size=(2, 4)))  # exact in bf16
    lab = np.array([3, 0], np.int32)
    return q, x, i, h, lab


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def main():
    mode, out = sys.argv[1], sys.argv[2]
    q, x, i, h, lab = inputs(np.random.default_rng(5))
    if mode == "inputs":
        for name, a in {"q": q, "x": x, "i": i, "h": h, "lab": lab}.items():
            np.save(os.path.join(out, name + ".npy"), a)
        return
    o = np.load(os.path.join(out, "out.npz"))
    qq = q[:, 0].astype(np.float64)
    scores = -(qq @ qq.transpose(0, 2, 1))
    scores[:, np.triu(np.ones((3, 3), bool), 1)] = -np.inf
    hf = h.astype(np.float64)
    gelu = 0.5 * hf * (1 + np.vectorize(__import__("math").erf)(hf / np.sqrt(2)))
    gelu_tanh = 0.5 * hf * (1 + np.tanh(np.sqrt(2 / np.pi) * (hf + 0.044715 * hf**3)))
    logp = hf - hf.max(-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
    expected = {
        "stepped": 2 * q,
        "uniform": np.broadcast_to(qq.mean(1, keepdims=True), (2, 3, 4))[:, None],
        "negative": (softmax(scores) @ qq)[:, None],
        "half": (x.astype(np.float32).astype(np.float16).astype(np.float32)
                 + i.astype(np.float32).astype(np.float16).astype(np.float32)),
        "brain": bf16_round(x.astype(np.float32)) + bf16_round(i.astype(np.float32)),
        # bf16 results, rounded once each (so a tolerance of bf16's 2^-8).
        "g": bf16_round(gelu) + bf16_round(gelu_tanh),
        "ce": np.full(2, -logp[np.arange(2), lab].mean()),
    }
    tolerance = {"g": 2**-7, "ce": 2**-7}
    bad = []
    for name, want in expected.items():
        got = o[name].astype(np.float64)
        tol = tolerance.get(name, 1e-6)
        err = np.abs(got - want) / np.maximum(np.abs(want), 1)
        if got.shape != np.shape(want) or not (err <= tol).all():
            bad.append(f"{name}: {got.ravel()[:6]} vs {np.ravel(want)[:6]}")
    if bad:
        sys.exit("edge values differ from NumPy:\n" + "\n".join(bad))
    print(f"edge values match NumPy ({len(expected)} outputs)")


if __name__ == "__main__":
    main()
