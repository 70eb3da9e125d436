#!/usr/bin/python3
"""losses.test: writes the inputs and weights of Inputs/losses.mdl, or checks
its outputs against torch's losses written here in NumPy (f64):

- nll_loss(lp, y, ignore_index): -mean of lp[i, y[i]] over the rows whose
  label is not ignore_index;
- cross_entropy(label_smoothing = e), as torch's
  cross_entropy_loss_label_smoothing: (1 - e) * nll + e / C * the mean over
  kept rows of -sum(log_softmax);
- binary_cross_entropy_with_logits(x, t, pos_weight):
  mean((1 - t) * x - (1 + (pw - 1) * t) * log_sigmoid(x)), log_sigmoid(x) =
  min(x, 0) - log1p(exp(-|x|)).

Each within 2e-6 relative (the program computes in f32). `far` has logits
20..30 with target 1: its loss (~1e-10) is all log1p of tiny values, which
log(1 + u) in f32 would give as 0. nll_bf16 takes bf16 logits: within 1e-2
(bf16 log-probabilities).

  losses_ref.py write DIR
  losses_ref.py check DIR Y.npz
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from halves import load_case  # noqa: E402


def log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def nll(lp, y, ignore):
    kept = y != ignore
    return -lp[np.arange(len(y))[kept], y[kept]].mean()


def smoothed(logits, y, ignore, e):
    lp = log_softmax(logits)
    kept = y != ignore
    smooth = -lp.sum(-1)[kept].sum() / kept.sum()
    return (1 - e) * nll(lp, y, ignore) + e / lp.shape[-1] * smooth


def bce(x, t, pw=None):
    log_sigmoid = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    w = 1.0 if pw is None else 1 + (pw - 1) * t
    return np.mean((1 - t) * x - w * log_sigmoid)


def inputs(rng):
    labels = rng.integers(0, 5, 8).astype(np.int32)
    labels[[2, 5]] = -1
    return {"logits": rng.normal(0, 2, (8, 5)).astype(np.float32),
            "labels": labels,
            "x": rng.normal(0, 3, (8, 6)).astype(np.float32),
            "t": rng.uniform(0, 1, (8, 6)).astype(np.float32),
            "far": rng.uniform(20, 30, (8, 1)).astype(np.float32)}


def weights(rng):
    return {"w.pos_weight": rng.uniform(0.5, 2.0, 6).astype(np.float32)}


def main(argv):
    case = load_case(argv, 31, inputs, weights)
    if case is None:
        return 0
    x, p, y = case
    f = {k: v.astype(np.float64) for k, v in x.items() if v.dtype == np.float32}
    labels = x["labels"]
    want = {"nll": (nll(log_softmax(f["logits"]), labels, -1), 2e-6),
            "ce": (nll(log_softmax(f["logits"]), labels, -1), 2e-6),
            "smooth": (smoothed(f["logits"], labels, -1, 0.1), 2e-6),
            "bce": (bce(f["x"], f["t"]), 2e-6),
            "weighted": (bce(f["x"], f["t"], p["w.pos_weight"].astype(np.float64)), 2e-6),
            "far": (bce(f["far"], np.ones_like(f["far"])), 2e-6),
            "nll_bf16": (nll(log_softmax(f["logits"]), labels, -1), 1e-2)}
    ok = True
    for name, (expected, rtol) in want.items():
        got = y[name].astype(np.float64)
        good = got.shape == (8,)
        err = np.max(np.abs(got - expected)) / abs(expected) if good else np.inf
        good = good and err <= rtol
        print(f"{name}: {'ok' if good else 'MISMATCH'} (relative error {err:.1e})")
        ok = ok and good
    if abs(smoothed(f["logits"], labels, -1, 0.1) - want["ce"][0]) < 1e-3:
        print("smooth: label smoothing has no effect on this data")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
