"""16-bit rounding for the 16-bit lowering tests (gemm_16bit_ref.py,
nn_16bit_ref.py): values rounded to bf16 or f16 (to nearest, ties to even)
and returned as f64, and the size of one 16-bit ulp at a value."""
import numpy as np


def bf16(x):
    """Values rounded to bf16 (nearest, ties to even), as f64."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def f16(x):
    """Values rounded to f16 (NumPy's float16 rounds to nearest even), as f64."""
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float64)


ROUND = {"bf16": bf16, "f16": f16}
MANTISSA = {"bf16": 7, "f16": 10}


def ulp(x, dtype):
    """One ulp of `dtype` at |x| (normal numbers; 2^-14 and below count as 2^-14)."""
    exponent = np.floor(np.log2(np.maximum(np.abs(x), 2.0 ** -14)))
    return 2.0 ** (exponent - MANTISSA[dtype])


def load_case(argv, seed, make_inputs, make_weights):
    """The command line `write DIR` or `check DIR Y.npz`: the inputs and
    weights drawn from `seed`; `write` saves them (each input as DIR/NAME.npy,
    the weights as DIR/w.safetensors) and returns None, `check` returns them
    with the program's outputs."""
    import os
    import safetensors_np
    rng = np.random.default_rng(seed)
    inputs, weights = make_inputs(rng), make_weights(rng)
    if argv[0] == "write":
        for name, value in inputs.items():
            np.save(os.path.join(argv[1], name + ".npy"), value)
        safetensors_np.save(os.path.join(argv[1], "w.safetensors"), weights)
        return None
    return inputs, weights, np.load(argv[2])


def sequential_sum(terms, dtype):
    """terms summed along the last axis in a 16-bit accumulator, each term
    and each partial sum rounded."""
    r = ROUND[dtype]
    total = np.zeros(terms.shape[:-1])
    for k in range(terms.shape[-1]):
        total = r(total + r(terms[..., k]))
    return total


def within_one_ulp(y, want, unrounded=()):
    """Prints a line per output of `want` ({name: (dtype, exact value)}):
    ok when the program's y[name] is within one ulp of the exact value
    rounded once to dtype (not rounded for the names in `unrounded`)."""
    ok = True
    for name, (dtype, exact) in want.items():
        expected = exact if name in unrounded else ROUND[dtype](exact)
        got = y[name].astype(np.float64)
        good = got.shape == expected.shape
        ulps = np.max(np.abs(got - expected) / ulp(expected, dtype)) if good else np.inf
        good = good and ulps <= 1
        print(f"{name} ({dtype}): {'ok' if good else 'MISMATCH'} "
              f"(at most {ulps:.2f} ulp off)")
        ok = ok and good
    return ok


def far_off(name, dtype, narrow, exact):
    """Prints whether `narrow` (a 16-bit accumulator's result) is more than
    4 ulps from `exact` rounded; the data must make it so, or the check of
    the program could not fail."""
    ulps = np.max(np.abs(ROUND[dtype](narrow) - ROUND[dtype](exact)) / ulp(exact, dtype))
    print(f"{name}: a {dtype} accumulator would be {'far' if ulps > 4 else 'NOT far'} off")
    return ulps > 4


def conv2d_pad1(x, w, bias=None):
    """A 3x3 convolution with padding 1, NCHW by OIHW, in f64."""
    b, c, h, wd = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((b, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            patch = padded[:, :, i:i + h, j:j + wd]
            out += np.einsum("bchw,oc->bohw", patch, w[:, :, i, j])
    return out if bias is None else out + bias[None, :, None, None]
