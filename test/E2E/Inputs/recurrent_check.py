#!/usr/bin/python3
"""recurrent.test's data and check.

  lstm_check.py write DIR   -- x.npy, h0.npy, c0.npy ([b, layers, h]) and w.safetensors
                               (torch's names)
  lstm_check.py check DIR OUT.npz
                            -- each output against test/reference/layers.lstm and gru in f64
                               from the same f32 inputs: `NAME ok` within 1e-5
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import layers  # noqa: E402
import safetensors_np  # noqa: E402


def shapes():
    out = {}
    for prefix, layers_count, n in (("rnn.", 2, 5), ("rnn_from.", 2, 5)):
        for k in range(layers_count):
            out.update({prefix + f"weight_ih_l{k}": (24, n if k == 0 else 6),
                        prefix + f"weight_hh_l{k}": (24, 6),
                        prefix + f"bias_ih_l{k}": (24,), prefix + f"bias_hh_l{k}": (24,)})
    out.update({"bare.weight_ih": (16, 5), "bare.weight_hh": (16, 4)})
    for k in range(2):
        out.update({f"gru.weight_ih_l{k}": (18, 5 if k == 0 else 6), f"gru.weight_hh_l{k}": (18, 6),
                    f"gru.bias_ih_l{k}": (18,), f"gru.bias_hh_l{k}": (18,),
                    f"gru_from.weight_ih_l{k}": (18, 5 if k == 0 else 6),
                    f"gru_from.weight_hh_l{k}": (18, 6)})
    return out


def gru_stack(x, h0, w, prefix, bias):
    hs = []
    for k in range(2):
        names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh") if bias else ("weight_ih", "weight_hh")
        (x, h), _ = layers.gru(x, h0[k], *(w[prefix + f"{name}_l{k}"] for name in names))
        hs.append(h)
    return x, np.stack(hs, axis=1)


def stack(x, h0, c0, w, prefix):
    hs, cs = [], []
    for k in range(2):
        (x, h, c), _ = layers.lstm(x, h0[k], c0[k], *(w[prefix + f"{name}_l{k}"] for name in
                                                       ("weight_ih", "weight_hh", "bias_ih", "bias_hh")))
        hs.append(h)
        cs.append(c)
    # Batch-first, as the program's outputs.
    return x, np.stack(hs, axis=1), np.stack(cs, axis=1)


def main():
    if sys.argv[1] == "write":
        d = sys.argv[2]
        rng = np.random.default_rng(4)
        np.save(os.path.join(d, "x.npy"), rng.standard_normal((3, 7, 5)).astype(np.float32))
        np.save(os.path.join(d, "h0.npy"), rng.standard_normal((3, 2, 6)).astype(np.float32))
        np.save(os.path.join(d, "c0.npy"), rng.standard_normal((3, 2, 6)).astype(np.float32))
        safetensors_np.save(os.path.join(d, "w.safetensors"),
                            {n: (0.4 * rng.standard_normal(s)).astype(np.float32) for n, s in shapes().items()})
        return 0
    d, out = sys.argv[2], np.load(sys.argv[3])
    x, h0, c0 = (np.load(os.path.join(d, n + ".npy")).astype(np.float64) for n in ("x", "h0", "c0"))
    w = {n: v.astype(np.float64) for n, v in safetensors_np.load(os.path.join(d, "w.safetensors"))[0].items()}
    zero = np.zeros((2, 3, 6))
    expected = dict(zip(("y", "h_n", "c_n"), stack(x, zero, zero, w, "rnn.")))
    expected.update(zip(("y_from", "h_from", "c_from"),
                        stack(x, h0.transpose(1, 0, 2), c0.transpose(1, 0, 2), w, "rnn_from.")))
    (y, _, c), _ = layers.lstm(x, np.zeros((3, 4)), np.full((3, 4), 0.5), w["bare.weight_ih"], w["bare.weight_hh"])
    expected.update({"y_bare": y, "c_bare": c})
    expected.update(zip(("g", "g_n"), gru_stack(x, zero, w, "gru.", True)))
    expected.update(zip(("g_from", "g_from_n"), gru_stack(x, h0.transpose(1, 0, 2), w, "gru_from.", False)))
    for name in sorted(expected):
        got = out[name]
        error = np.abs(got - expected[name]).max() / max(np.abs(expected[name]).max(), 1.0)
        ok = got.shape == expected[name].shape and error < 1e-5
        print(f"{name} {'ok' if ok else 'MISMATCH'} {list(got.shape)} {error:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
