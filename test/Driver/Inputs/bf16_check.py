#!/usr/bin/python3
"""bf16-portable.test: writes the input of Inputs/bf16_rounding.mdl, or checks
the program's outputs against bf16 rounding (to nearest, ties to even) done
here with NumPy bit operations.

  bf16_check.py write X.npy
  bf16_check.py check X.npy Y.npz
"""
import sys

import numpy as np

# 1 + 2^-8 and 1 + 3*2^-8 are ties (to 1 and 1 + 2^-6: the even ones), then
# a value just above a tie, a large one, a negative one and a NaN.
VALUES = [1.0, 1.00390625, 1.01171875, 1.0039064, 3.0e38, float("nan")]


def bf16(x):
    """f32 values rounded to bf16 (nearest, ties to even), as f32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)


def main(argv):
    if argv[0] == "write":
        np.save(argv[1], np.array(VALUES, np.float32))
        return 0
    x = np.load(argv[1]).reshape(6)
    y = np.load(argv[2])
    b = bf16(x)
    np.seterr(over="ignore")
    want = {"rounded": b,
            "summed": bf16(b + bf16(b * np.float32(0.5))),
            "biggest": np.maximum(b, np.float32(1.0))}
    ok = True
    for name, expected in want.items():
        got = y[name].reshape(6)
        same = np.array_equal(got.view(np.uint32), expected.view(np.uint32))
        print(f"{name}: {'ok' if same else 'MISMATCH'} {got.tolist()}")
        ok = ok and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
