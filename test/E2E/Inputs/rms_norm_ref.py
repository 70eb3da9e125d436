#!/usr/bin/python3
"""rms-norm.test: writes the inputs and weights of Inputs/rms_norm.mdl, or
checks its outputs against torch's rms_norm written here in NumPy (ATen's
composite, aten/src/ATen/native/layer_norm.cpp: `x * rsqrt(mean(x^2) + eps)`
over the last axis, in the opmath type, `type_as(input)`, then `* weight`).

- f32 outputs: within 2e-6 relative of the f64 computation (the program
  computes in f32);
- bf16: x and the weight rounded to bf16, the norm computed in f64 and
  rounded to bf16, times the weight, rounded again: within one bf16 ulp.
  The 512-long rows of `shifted` have mean ~100: summing their squares (~10^4)
  in a bf16 accumulator is far off (printed and required, so that the check
  can fail).

  rms_norm_ref.py write DIR
  rms_norm_ref.py check DIR Y.npz
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from halves import bf16, far_off, load_case, sequential_sum, within_one_ulp  # noqa: E402

F32_EPS = float(np.finfo(np.float32).eps)  # torch's eps=None for f32 and 16-bit


def rms_norm(x, w=None, eps=F32_EPS, mean_square=None):
    if mean_square is None:
        mean_square = (x ** 2).mean(-1, keepdims=True)
    y = x / np.sqrt(mean_square + eps)
    return y if w is None else y * w


def inputs(rng):
    return {"x": rng.uniform(-3, 3, (8, 64)).astype(np.float32),
            "shifted": (100 + rng.normal(0, 1, (8, 512))).astype(np.float32)}


def weights(rng):
    return {"norm.weight": rng.uniform(0.5, 1.5, 64).astype(np.float32),
            "scaled.weight": rng.uniform(0.5, 1.5, 64).astype(np.float32),
            "half.weight": rng.uniform(0.5, 1, 512).astype(np.float32)}


def main(argv):
    case = load_case(argv, 21, inputs, weights)
    if case is None:
        return 0
    x, p, y = case
    x64 = x["x"].astype(np.float64)
    scaled_x = (x["x"] * np.float32(0.1)).astype(np.float64)
    want = {"plain": rms_norm(x64, p["norm.weight"]),
            "bare": rms_norm(x64),
            "scaled": rms_norm(scaled_x, p["scaled.weight"], eps=0.5)}
    ok = True
    for name, expected in want.items():
        got = y[name].astype(np.float64)
        good = got.shape == expected.shape
        err = np.max(np.abs(got - expected) / np.abs(expected)) if good else np.inf
        good = good and err <= 2e-6
        print(f"{name} (f32): {'ok' if good else 'MISMATCH'} (relative error {err:.1e})")
        ok = ok and good
    # Without eps = 0.5 the scaled rows (mean square ~0.03) would differ.
    if np.max(np.abs(y["scaled"] - rms_norm(scaled_x, p["scaled.weight"]))) < 1e-2:
        print("scaled: eps has no effect")
        ok = False

    xb, wb = bf16(x["shifted"]), bf16(p["half.weight"])
    ok = within_one_ulp(y, {"half": ("bf16", bf16(rms_norm(xb)) * wb)}) and ok
    narrow = sequential_sum(xb ** 2, "bf16")[:, None] / 512
    ok = far_off("half", "bf16", bf16(rms_norm(xb, mean_square=narrow)) * wb,
                 bf16(rms_norm(xb)) * wb) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
