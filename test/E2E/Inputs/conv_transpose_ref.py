#!/usr/bin/python3
"""conv-transpose.test: `write DIR` writes the input x.npy and the weights
(w, b and the `up` layer's, f64 for a --widen-f64 program); `check DIR
OUT.npz` computes torch.nn.functional.
conv_transpose2d from its definition, written with loops here (each input
pixel scatters weight[c, o] scaled by it into the output at
i * stride - padding + k * dilation, groups splitting the channels), and
compares each output of the program (1e-12, f64)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import safetensors_np  # noqa: E402


def conv_transpose2d(x, w, b=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0),
                     groups=1, dilation=(1, 1)):
    n, cin, h, wd = x.shape
    _, opg, kh, kw = w.shape
    cout = opg * groups
    ho = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    wo = (wd - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    y = np.zeros((n, cout, ho, wo))
    ipg = cin // groups
    for c in range(cin):
        g = c // ipg
        for o in range(opg):
            for i in range(h):
                for j in range(wd):
                    for p in range(kh):
                        for q in range(kw):
                            r = i * stride[0] - padding[0] + p * dilation[0]
                            s = j * stride[1] - padding[1] + q * dilation[1]
                            if 0 <= r < ho and 0 <= s < wo:
                                y[:, g * opg + o, r, s] += x[:, c, i, j] * w[c, o, p, q]
    if b is not None:
        y += b[None, :, None, None]
    return y


def write(out):
    rng = np.random.default_rng(3)
    np.save(os.path.join(out, "x.npy"), rng.normal(0, 1, (3, 4, 5, 6)).astype(np.float32))
    safetensors_np.save(os.path.join(out, "w.safetensors"),
                        {"w": rng.normal(0, 1, (4, 3, 3, 2)), "b": rng.normal(0, 1, (6,)),
                         "up.weight": rng.normal(0, 1, (4, 5, 4, 4)), "up.bias": rng.normal(0, 1, (5,))})


def check(out, result):
    x = np.load(os.path.join(out, "x.npy")).astype(np.float64)
    up, _ = safetensors_np.load(os.path.join(out, "w.safetensors"))
    w, b = up["w"], up["b"]
    want = {"plain": conv_transpose2d(x, w),
            "strided": conv_transpose2d(x, w, b, (2, 3), (1, 0), (1, 2), 2),
            "dilated": conv_transpose2d(x, w, padding=(1, 1), dilation=(2, 2)),
            "layer": conv_transpose2d(x, up["up.weight"], up["up.bias"], (2, 2), (1, 1))}
    got = np.load(result)
    ok = True
    for name in sorted(want):
        g = got[name]
        err = float(np.max(np.abs(g - want[name]))) if g.shape == want[name].shape else float("inf")
        good = err <= 1e-12
        print(f"{name}: {'ok' if good else 'MISMATCH'} {list(g.shape)} ({err:.1e})")
        ok &= good
    return ok


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        sys.exit(0 if check(sys.argv[2], sys.argv[3]) else 1)
