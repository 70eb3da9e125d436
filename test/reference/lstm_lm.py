#!/usr/bin/python3
"""The LSTM language model of examples/lstm_lm.mdl in NumPy, forward and
backward by hand (float64), for comparison:

  lstm_lm.py init OUT.safetensors --vocab V --emsize E --nhid H --nlayers L
                  [--seed S] [--dtype f32|f64]
  lstm_lm.py train --init W --text FILE --length T --vocab V --nlayers L
                   --batch B --steps N --lr LR [--clip C] --out-losses L.json

The model is pytorch/examples' word_language_model (RNNModel with
rnn_type LSTM, untied, dropout 0) on bytes, written from torch.nn's
documentation (not from modelc's code): ids [B, T];
x = encoder.weight[ids]; torch.nn.LSTM(E, H, L, batch_first=True) from a
zero state (layers.lstm, layer by layer, names rnn.weight_ih_l{k} ...);
logits = decoder(output); mean cross-entropy of each byte against the
next. The data are the windows of T + 1 bytes of FILE that
`windows(file(FILE))` makes (window i starts at byte i * T), in file order,
B per step, wrapping after the last full batch. Training: torch.optim.SGD
with clip_grad_norm_(C) before each step when C > 0, as its main.py. The
losses (before each step) go to L.json as {"loss": [...]}.
"""
import argparse
import json
import sys

import numpy as np

import layers
import optim
import safetensors_np


def shapes(V, E, H, L):
    out = {"encoder.weight": (V, E)}
    for k in range(L):
        n = "rnn."
        out.update({n + f"weight_ih_l{k}": (4 * H, E if k == 0 else H),
                    n + f"weight_hh_l{k}": (4 * H, H),
                    n + f"bias_ih_l{k}": (4 * H,), n + f"bias_hh_l{k}": (4 * H,)})
    out.update({"decoder.weight": (V, H), "decoder.bias": (V,)})
    return out


def loss_and_grads(p, ids, targets, nlayers):
    """Mean next-byte cross-entropy of ids [B, T] against targets [B, T], and every gradient."""
    b = ids.shape[0]
    x = p["encoder.weight"][ids]
    backs = []
    for k in range(nlayers):
        hidden = p[f"rnn.weight_hh_l{k}"].shape[1]
        zero = np.zeros((b, hidden), x.dtype)
        (x, _, _), back = layers.lstm(x, zero, zero, p[f"rnn.weight_ih_l{k}"], p[f"rnn.weight_hh_l{k}"],
                                      p[f"rnn.bias_ih_l{k}"], p[f"rnn.bias_hh_l{k}"])
        backs.append(back)
    logits, decoder_back = layers.linear(x, p["decoder.weight"], p["decoder.bias"])
    vocab = logits.shape[-1]
    loss, ce_back = layers.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
    g = {}
    dx, g["decoder.weight"], g["decoder.bias"] = decoder_back(ce_back().reshape(logits.shape))
    for k in reversed(range(nlayers)):
        n = "rnn."
        dx, _, _, *grads = backs[k](dx)
        for name, grad in zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"), grads):
            g[n + f"{name}_l{k}"] = grad
    dtable = np.zeros_like(p["encoder.weight"])
    np.add.at(dtable, ids.reshape(-1), dx.reshape(-1, dx.shape[-1]))
    g["encoder.weight"] = dtable
    return float(loss), g


def windows(path, length):
    """`windows(file(path))` for u8[length + 1]: window i is bytes [i T, i T + T + 1)."""
    data = np.fromfile(path, dtype=np.uint8)
    span = length + 1
    count = (len(data) - span) // length + 1
    return np.stack([data[i * length:i * length + span] for i in range(count)])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["init", "train"])
    ap.add_argument("path", nargs="?")
    for name in ("vocab", "emsize", "nhid", "nlayers", "length", "batch", "steps", "seed"):
        ap.add_argument("--" + name, type=int, default=0)
    for name in ("lr", "clip"):
        ap.add_argument("--" + name, type=float, default=0.0)
    for name in ("init", "text", "out-losses"):
        ap.add_argument("--" + name)
    ap.add_argument("--dtype", choices=["f32", "f64"], default="f32",
                    help="of the init file (f64 for a program built with --widen-f64)")
    a = ap.parse_args(argv)
    if a.command == "init":
        rng = np.random.default_rng(a.seed)
        w = {name: 0.3 * rng.standard_normal(shape)
             for name, shape in shapes(a.vocab, a.emsize, a.nhid, a.nlayers).items()}
        # Values of f32 precision either way, so that both files hold one model.
        dtype = np.float64 if a.dtype == "f64" else np.float32
        safetensors_np.save(a.path, {n: v.astype(np.float32).astype(dtype) for n, v in w.items()})
        return 0
    params = {n: v.astype(np.float64) for n, v in safetensors_np.load(a.init)[0].items()}
    data = windows(a.text, a.length).astype(np.int64)
    opt = optim.SGD()
    per_epoch = len(data) // a.batch
    losses = []
    for step in range(1, a.steps + 1):
        start = ((step - 1) % per_epoch) * a.batch
        rows = data[start:start + a.batch]
        loss, grads = loss_and_grads(params, rows[:, :-1], rows[:, 1:], a.nlayers)
        losses.append(loss)
        if a.clip > 0:
            optim.clip_grad_norm(grads, a.clip)
        opt.step(params, grads, a.lr)
    with open(a.out_losses, "w") as f:
        json.dump({"loss": losses}, f)
    print(f"lstm_lm: {a.steps} steps, last loss {losses[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
