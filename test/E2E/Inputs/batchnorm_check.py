#!/usr/bin/python3
"""batch-norm.test: `write DIR` writes 20 samples (x.npy, t.npy) and 6
rows to predict (rows.npy); `check DIR STEPS [RANKS BATCH]` checks, in
NumPy from torch.nn.BatchNorm's documentation, the program's saved state
(final.safetensors) after STEPS steps in file order, each of RANKS ranks
at BATCH (default 1 and 4):
- bn.running_mean/var: momentum 0.1 updates from each batch's mean and
  unbiased variance over (n, h, w), from 0 and 1; with several ranks,
  rank 0's slice of each global batch (spec §7: the first BATCH samples)
  only, as DDP's broadcast_buffers leaves every rank with rank 0's;
  bn.num_batches_tracked is STEPS (i64) and head.num_batches_tracked too;
- the optimizer never touched them: with weight decay 0.1 it would have;
- infer (predict.npz) is the model in eval mode: the running statistics,
  from the saved weights;
- the last eval of the run's log (log.jsonl: the mean squared error over
  all 20 samples, sharded over the ranks) is the model in eval mode with
  those statistics on every rank."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import safetensors_np  # noqa: E402


def write(out):
    rng = np.random.default_rng(11)
    np.save(os.path.join(out, "x.npy"), rng.normal(2, 3, (20, 3, 2, 2)).astype(np.float32))
    np.save(os.path.join(out, "t.npy"), rng.normal(0, 1, (20, 3)).astype(np.float32))
    np.save(os.path.join(out, "rows.npy"), rng.normal(2, 3, (6, 3, 2, 2)).astype(np.float32))


def report(name, got, want, tol=1e-12):
    err = float(np.max(np.abs(np.asarray(got, np.float64) - want) / np.maximum(np.abs(want), 1)))
    ok = err <= tol and np.shape(got) == np.shape(want)
    print(f"{name}: {'ok' if ok else 'MISMATCH'} ({err:.1e})")
    return ok


def check(out, steps, ranks=1, per_rank=4):
    w, _ = safetensors_np.load(os.path.join(out, "final.safetensors"))
    x = np.load(os.path.join(out, "x.npy")).astype(np.float64)
    rm, rv = np.zeros(3), np.ones(3)
    for s in range(steps):
        start = s * ranks * per_rank
        batch = x[start:start + per_rank]
        n = batch.size // 3
        rm = 0.9 * rm + 0.1 * batch.mean(axis=(0, 2, 3))
        rv = 0.9 * rv + 0.1 * batch.var(axis=(0, 2, 3)) * n / (n - 1)
    ok = report("bn.running_mean", w["bn.running_mean"], rm)
    ok &= report("bn.running_var", w["bn.running_var"], rv)
    for name in ("bn.num_batches_tracked", "head.num_batches_tracked"):
        good = w[name].dtype == np.int64 and w[name].shape == () and int(w[name]) == steps
        print(f"{name}: {'ok' if good else 'MISMATCH'} ({w[name].dtype} {w[name].shape} {w[name]})")
        ok &= good

    def norm(v, p, axes_shape):
        g = lambda k: w[p + k].reshape(axes_shape)
        return (v - g("running_mean")) / np.sqrt(g("running_var") + 1e-5) * g("weight") + g("bias")

    def model(v):
        h = norm(v, "bn.", (1, 3, 1, 1)).mean(axis=(2, 3))
        return norm(h @ w["fc.weight"].T + w["fc.bias"], "head.", (1, 3))

    rows = np.load(os.path.join(out, "rows.npy")).astype(np.float64)
    ok &= report("infer (running statistics)", np.load(os.path.join(out, "predict.npz"))["y"], model(rows))
    t = np.load(os.path.join(out, "t.npy")).astype(np.float64)
    records = [json.loads(line) for line in open(os.path.join(out, "log.jsonl"))]
    evals = [r["loss"] for r in records if r.get("eval")]
    ok &= report("eval (every rank's statistics)", evals[-1], np.mean((model(x) - t) ** 2))
    return ok


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        sys.exit(0 if check(sys.argv[2], *map(int, sys.argv[3:])) else 1)
