#!/usr/bin/python3
"""interpolate.test: `bilinear_ref.py IN.npy OUT.npz NAME:S ...` checks each
output NAME of the program against torch's bilinear upsampling
(align_corners=False) by the whole factor S, from its definition
(upsample_bilinear2d: source = (o + 0.5) / S - 0.5, clamped below at 0;
i0 = floor, i1 = min(i0 + 1, L - 1), lambda = source - i0), computed in f64
with loops here; prints `NAME ok` within 1e-6 (the program computes in
f32). An output named *_one_row takes the first row of the input only."""
import math
import sys

import numpy as np


def upsample_axis(x, axis, s):
    length = x.shape[axis]
    taken = []
    for o in range(length * s):
        src = max((o + 0.5) / s - 0.5, 0.0)
        i0 = math.floor(src)
        i1 = min(i0 + 1, length - 1)
        lam = src - i0
        taken.append((1 - lam) * np.take(x, i0, axis) + lam * np.take(x, i1, axis))
    return np.stack(taken, axis)


x = np.load(sys.argv[1]).astype(np.float64)
out = np.load(sys.argv[2])
ok = True
for spec in sys.argv[3:]:
    name, s = spec.split(":")
    src = x[:, :, 0:1, :] if name.endswith("_one_row") else x
    want = upsample_axis(upsample_axis(src, 2, int(s)), 3, int(s))
    got = out[name]
    err = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
    good = err <= 1e-6
    print(f"{name} {'ok' if good else 'MISMATCH'} {list(got.shape)} ({err:.1e})")
    ok &= good
sys.exit(0 if ok else 1)
