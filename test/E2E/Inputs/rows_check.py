#!/usr/bin/python3
"""infer-row-independence.test: `write DIR DESCRIBE.json` writes random
weights for every parameter the program describes and 7 rows of inputs
(a full batch of 4 and a padded one of 3), and the same rows permuted;
`check A.npz B.npz` compares each output of the permuted run, row by row,
with the original (relative 1e-5: a GEMM may sum a row in another order
when its batch differs). The output `control` uses batch statistics on
purpose: it must be found to depend on the other rows."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import safetensors_np  # noqa: E402

PERM = np.array([5, 2, 6, 0, 3, 1, 4])


def write(out, describe):
    rng = np.random.default_rng(7)
    params = json.load(open(describe))["parameters"]
    def value(p):
        # Module buffers: batch norm's running statistics (a positive
        # variance) and its i64 counter.
        if p["dtype"] == "i64":
            return np.array(rng.integers(0, 100), np.int64).reshape(p["shape"])
        if p["name"].endswith("running_var"):
            return rng.uniform(0.5, 2, p["shape"]).astype(np.float32)
        return rng.normal(0, 0.3, p["shape"]).astype(np.float32)
    safetensors_np.save(os.path.join(out, "w.safetensors"), {p["name"]: value(p) for p in params})
    pad = np.zeros((7, 6), bool)
    pad[:, 4:] = rng.uniform(size=(7, 2)) < 0.5
    inputs = {"x": rng.normal(0, 1, (7, 6, 8)).astype(np.float32),
              "img": rng.uniform(0, 1, (7, 1, 28, 28)).astype(np.float32),
              "ids": rng.integers(0, 16, (7, 6)).astype(np.int32),
              "pad": pad}
    for name, value in inputs.items():
        np.save(os.path.join(out, name + ".npy"), value)
        np.save(os.path.join(out, name + "_perm.npy"), value[PERM])


def check(a, b):
    a, b = np.load(a), np.load(b)
    ok = True
    for name in sorted(a.files):
        want, got = a[name][PERM].astype(np.float64), b[name].astype(np.float64)
        err = np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-3))
        good = got.shape == want.shape and got.shape[0] == 7 and err <= 1e-5
        if name == "control":
            print(f"control: {'NOT SEEN' if good else 'depends on other rows, as it must'}")
            good = not good
        else:
            print(f"{name}: {'ok' if good else 'DEPENDS ON OTHER ROWS'} ({err:.1e})")
        ok = ok and good
    return ok


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    else:
        sys.exit(0 if check(sys.argv[2], sys.argv[3]) else 1)
