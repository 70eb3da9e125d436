#!/usr/bin/python3
"""gemm-16bit.test: writes the inputs and weights of Inputs/gemm_16bit.mdl, or
checks its outputs against GEMMs computed here with NumPy: operands rounded to
bf16/f16 (nearest, ties to even), products summed in f64, the result rounded
once to the 16-bit type. A program may sum in another order in f32, so each
element may differ by one 16-bit ulp at most; a GEMM that accumulated in
16 bits would be many ulps off on this data (printed, and required, so that
the check can fail).

  gemm_16bit_ref.py write DIR
  gemm_16bit_ref.py check DIR Y.npz
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
from halves import (ROUND, bf16, conv2d_pad1, f16, far_off, load_case,  # noqa: E402
                    sequential_sum, within_one_ulp)


def inputs(rng):
    # Positive operands: the sums grow to about 1,150, where a 16-bit
    # accumulator's spacing (8 in bf16) swallows most of each term.
    return {"a": rng.uniform(1, 2, (4, 512)).astype(np.float32),
            "s": rng.normal(0, 1, (4, 3, 64)).astype(np.float32),
            "x": rng.normal(0, 1, (4, 3, 6, 6)).astype(np.float32)}


def weights(rng):
    return {"mm.w": rng.uniform(1, 2, (512, 8)).astype(np.float32),
            "mm_f16.w": rng.uniform(1, 2, (512, 8)).astype(np.float32),
            "bmm.w": rng.normal(0, 1, (64, 5)).astype(np.float32),
            "conv.weight": rng.normal(0, 1, (4, 3, 3, 3)).astype(np.float32)}


def main(argv):
    case = load_case(argv, 16, inputs, weights)
    if case is None:
        return 0
    x, p, y = case
    want = {
        "mm": ("bf16", bf16(x["a"]) @ bf16(p["mm.w"])),
        "mm_f16": ("f16", f16(x["a"]) @ f16(p["mm_f16.w"])),
        "bmm": ("bf16", bf16(x["s"]) @ bf16(p["bmm.w"])),
        "conv": ("bf16", conv2d_pad1(bf16(x["x"]), bf16(p["conv.weight"]))),
    }
    ok = within_one_ulp(y, want)
    for name, dtype in (("mm", "bf16"), ("mm_f16", "f16")):
        a, w = ROUND[dtype](x["a"]), ROUND[dtype](p[name + ".w"])
        narrow = sequential_sum(a[:, None, :] * w.T[None, :, :], dtype)
        ok = far_off(name, dtype, narrow, want[name][1]) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
