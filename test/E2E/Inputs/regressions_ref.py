"""The NumPy reference of the regression programs of issue 12 (Inputs/regress_*.mdl).

regressions_ref.py padded-conv DIR       writes DIR/x.npy, DIR/init.safetensors
regressions_ref.py param-only-block DIR  and the reference run of two sgd steps:
                                         DIR/ref.json (losses), DIR/ref.safetensors
regressions_ref.py softmax X.npy Y.npy   checks an infer output against softmax(x)

Both train programs use sgd(lr = 0.1) on a batch of 2 in file order
(shuffle = false) for 2 steps, as in their .mdl files.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import layers  # noqa: E402
import safetensors_np  # noqa: E402

LR = np.float32(0.1)
BATCH = 2
STEPS = 2


def padded_conv(x, params):
    """loss = mean(y * y) with y = conv2d(x, w, padding = 1); returns loss, grads."""
    y, backward = layers.conv2d(x, params["w"], padding=1)
    loss = np.mean(y * y, dtype=np.float32)
    dy = (2 * y / np.float32(y.size)).astype(np.float32)
    _, dw, _ = backward(dy)
    return loss, {"w": dw}


def param_only_block(x, params):
    """loss = mean(h * h) with h = x + token (token [1, 4], broadcast over rows)."""
    h = x + params["token"]
    loss = np.mean(h * h, dtype=np.float32)
    dh = (2 * h / np.float32(h.size)).astype(np.float32)
    return loss, {"token": dh.sum(axis=0, keepdims=True)}


MODELS = {
    # name: (per-sample shape of x, parameter shapes, loss and gradients)
    "padded-conv": ((3, 4, 4), {"w": (3, 3, 3, 3)}, padded_conv),
    "param-only-block": ((4,), {"token": (1, 4)}, param_only_block),
}


def train(name, out):
    """Writes the data and initial parameters, then the reference run of sgd."""
    shape, param_shapes, step = MODELS[name]
    rng = np.random.default_rng(12)
    x = rng.uniform(-1, 1, (BATCH * STEPS,) + shape).astype(np.float32)
    params = {k: rng.normal(0, 0.3, s).astype(np.float32) for k, s in param_shapes.items()}
    np.save(os.path.join(out, "x.npy"), x)
    safetensors_np.save(os.path.join(out, "init.safetensors"), params)
    losses = []
    for s in range(STEPS):
        loss, grads = step(x[s * BATCH:(s + 1) * BATCH], params)
        losses.append(float(loss))
        params = {k: (v - LR * grads[k]).astype(np.float32) for k, v in params.items()}
    with open(os.path.join(out, "ref.json"), "w", encoding="utf-8") as f:
        json.dump({"loss": losses}, f)
    safetensors_np.save(os.path.join(out, "ref.safetensors"), params)


def check_softmax(x_path, y_path):
    """The infer output equals softmax over the last axis within 1e-6."""
    x, y = np.load(x_path), np.load(y_path)
    expected, _ = layers.softmax(x.astype(np.float64), axis=-1)
    if y.shape != x.shape or y.dtype != np.float32:
        sys.exit(f"output {y.dtype}{list(y.shape)}, expected float32{list(x.shape)}")
    err = float(np.abs(y - expected).max())
    if not err <= 1e-6:
        sys.exit(f"softmax differs from NumPy by {err:.3e}")
    print(f"softmax matches NumPy on {x.shape[0]} rows (max error {err:.1e})")


def main():
    if len(sys.argv) == 3 and sys.argv[1] in MODELS:
        train(sys.argv[1], sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "softmax":
        check_softmax(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
