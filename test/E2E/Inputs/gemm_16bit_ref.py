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
import safetensors_np  # noqa: E402


def bf16(x):
    """Values rounded to bf16 (nearest, ties to even), as f64."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def f16(x):
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float64)


ROUND = {"bf16": bf16, "f16": f16}
MANTISSA = {"bf16": 7, "f16": 10}


def ulp(x, dtype):
    exponent = np.floor(np.log2(np.maximum(np.abs(x), 2.0 ** -14)))
    return 2.0 ** (exponent - MANTISSA[dtype])


def conv2d_pad1(x, w):
    b, c, h, wd = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((b, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            patch = padded[:, :, i:i + h, j:j + wd]
            out += np.einsum("bchw,oc->bohw", patch, w[:, :, i, j])
    return out


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


def accumulated_in(dtype, a, w):
    """a @ w summed term by term in a 16-bit accumulator."""
    r = ROUND[dtype]
    total = np.zeros((a.shape[0], w.shape[1]))
    for i in range(a.shape[1]):
        total = r(total + r(np.outer(a[:, i], w[i])))
    return total


def main(argv):
    out = argv[1]
    rng = np.random.default_rng(16)
    x, p = inputs(rng), weights(rng)
    if argv[0] == "write":
        for name, value in x.items():
            np.save(os.path.join(out, name + ".npy"), value)
        safetensors_np.save(os.path.join(out, "w.safetensors"), p)
        return 0
    y = np.load(argv[2])
    want = {
        "mm": ("bf16", bf16(x["a"]) @ bf16(p["mm.w"])),
        "mm_f16": ("f16", f16(x["a"]) @ f16(p["mm_f16.w"])),
        "bmm": ("bf16", bf16(x["s"]) @ bf16(p["bmm.w"])),
        "conv": ("bf16", conv2d_pad1(bf16(x["x"]), bf16(p["conv.weight"]))),
    }
    ok = True
    for name, (dtype, exact) in want.items():
        expected = ROUND[dtype](exact)
        got = y[name].astype(np.float64)
        ulps = np.max(np.abs(got - expected) / ulp(expected, dtype))
        good = got.shape == expected.shape and ulps <= 1
        print(f"{name} ({dtype}): {'ok' if good else 'MISMATCH'} "
              f"(at most {ulps:.0f} ulp off)")
        ok = ok and good
    for name, dtype in (("mm", "bf16"), ("mm_f16", "f16")):
        wide = want[name][1]
        narrow = accumulated_in(dtype, ROUND[dtype](x["a"]),
                                ROUND[dtype](p[name + ".w"]))
        ulps = np.max(np.abs(narrow - ROUND[dtype](wide)) / ulp(wide, dtype))
        print(f"{name}: a {dtype} accumulator would be {'far' if ulps > 4 else 'NOT far'} off")
        ok = ok and ulps > 4
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
