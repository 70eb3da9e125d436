"""Inputs for argmax_long.mdl with the cases a chunked argmax must keep
(torch.argmax: the first maximum, a NaN beating every number and a later
NaN), and the check of the program's outputs against numpy's argmax."""
import sys

import numpy as np


def inputs(out_dir):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3000)).astype(np.float32)
    x[0, 1500] = x[0, 2999] = 9.0      # a tie across chunks: the first wins
    x[1, 1023] = x[1, 1024] = 9.0      # a tie on a chunk boundary
    x[2, 2100] = np.nan                # a NaN in a later chunk wins
    x[2, 5] = 50.0
    x[3, :] = -np.inf                  # all lowest: index 0
    y = rng.standard_normal((4, 2500, 3)).astype(np.float32)
    y[0, 2499, 0] = 20.0               # the last element of the last chunk
    y[1, 7, 1] = np.nan
    y[1, 2000, 1] = np.nan             # the first NaN wins
    y[2, :, 2] = 1.0                   # all equal: index 0
    np.save(f"{out_dir}/x.npy", x)
    np.save(f"{out_dir}/y.npy", y)


def expected(x, axis):
    # numpy's argmax returns the first NaN too.
    return np.argmax(x, axis=axis)


def check(out_dir, outputs):
    got = np.load(outputs)
    x = np.load(f"{out_dir}/x.npy")
    y = np.load(f"{out_dir}/y.npy")
    for name, want in [("last", expected(x, -1)), ("middle", expected(y, 1))]:
        if not np.array_equal(got[name], want):
            sys.exit(f"{name}: got {got[name]}, want {want}")
    print("argmax ok")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        inputs(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
