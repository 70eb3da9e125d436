"""Checks the sums of Inputs/sums.mdl (accurate-sum.test) against NumPy's
f64 sums of the same f32 inputs: the error of each result relative to the
sum of its terms' magnitudes (for terms of one sign, the sum itself), the
measure a summation order is judged by when terms cancel."""
import sys

import numpy as np

out = np.load(sys.argv[1])
x = np.load("x.npy").astype(np.float64)
a = np.load("a.npy").astype(np.float64)
c = np.load("c.npy").astype(np.float64)


def error(name, ref, magnitude):
    got = out[name].astype(np.float64)
    assert got.shape == ref.shape, (name, got.shape, ref.shape)
    return float(np.max(np.abs(got - ref) / magnitude))


total = x.sum(axis=-1)
in_order = float(np.cumsum(np.load("x.npy")[0], dtype=np.float32)[-1])
sequential = abs(in_order - total[0]) / total[0]
for name, ref, tol in [("s", total, 1e-7), ("m", x.mean(axis=-1), 1e-7)]:
    e = error(name, ref, np.abs(ref))
    note = ""
    if name == "s":
        note = " (in order in f32: %s)" % ("worse than 1e-6" if sequential > 1e-6 else "%.1e" % sequential)
    print("%s 2^20 terms: %s%s" % (name, "within 1e-7" if e <= tol else "OFF BY %.3e" % e, note))
for name, ref, magnitude in [
        ("s0", a.sum(axis=1), np.abs(a).sum(axis=1)),
        ("s01", a.mean(axis=(1, 2), keepdims=True), np.abs(a).mean(axis=(1, 2), keepdims=True)),
        ("m1", c.sum(axis=2), c.sum(axis=2)),
        ("n02", c.sum(axis=(1, 3)), c.sum(axis=(1, 3)))]:
    e = error(name, ref, magnitude)
    print("%s: %s" % (name, "within 5e-7" if e <= 5e-7 else "OFF BY %.3e" % e))
