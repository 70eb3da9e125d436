#!/usr/bin/python3
"""The Transformer-encoder text classifier of examples/text_classifier.mdl in
NumPy, forward and backward by hand (float64), for comparison:

  encoder.py init OUT.safetensors --length T --width D --layers L --classes K
                  [--seed S] [--dtype f32|f64]
  encoder.py train --init W --tokens X.npy --labels Y.npy --length T
                   --width D --heads H --layers L --classes K --batch B
                   --steps N --lr LR [--weight-decay WD] [--warmup W]
                   --out-losses L.json

The model, written from torch.nn's documentation (not from modelc's code):
tokens [B, T] of bytes, 0 = padding; x = tok.weight[tokens] +
pos.weight[0:T]; L times torch.nn.TransformerEncoderLayer(D, H,
dim_feedforward = 4 D, dropout 0, relu, batch_first, norm_first false) with
src_key_padding_mask = (tokens == 0):
  x = norm1(x + out_proj(attention(in_proj(x))))   (padding keys get -inf)
  x = norm2(x + linear2(relu(linear1(x))))
then the mean over the non-padding positions, head (a Linear), mean
cross-entropy. Training: samples in file order, B per step, AdamW (as
torch.optim.AdamW, betas 0.9/0.999, eps 1e-8) with warmup_cosine(warmup = W)
over the N steps (spec §8). The losses (before each step) go to L.json as
{"loss": [...]}.
"""
import argparse
import json
import math
import sys

import numpy as np

import layers
import optim
import safetensors_np


def shapes(T, D, L, K):
    out = {"pos.weight": (T, D), "tok.weight": (256, D)}
    for i in range(L):
        n = f"layers.{i}."
        out.update({n + "self_attn.in_proj_weight": (3 * D, D), n + "self_attn.in_proj_bias": (3 * D,),
                    n + "self_attn.out_proj.weight": (D, D), n + "self_attn.out_proj.bias": (D,),
                    n + "norm1.weight": (D,), n + "norm1.bias": (D,),
                    n + "linear1.weight": (4 * D, D), n + "linear1.bias": (4 * D,),
                    n + "linear2.weight": (D, 4 * D), n + "linear2.bias": (D,),
                    n + "norm2.weight": (D,), n + "norm2.bias": (D,)})
    out.update({"head.weight": (K, D), "head.bias": (K,)})
    return out


def attention(x, pad, p, n, heads):
    """nn.MultiheadAttention(x, x, x, key_padding_mask=pad) and its backward."""
    b, t, d = x.shape
    hd = d // heads
    qkv, in_back = layers.linear(x, p[n + "in_proj_weight"], p[n + "in_proj_bias"])
    q, k, v = (a.reshape(b, t, heads, hd).transpose(0, 2, 1, 3) for a in np.split(qkv, 3, axis=-1))
    scale = 1 / math.sqrt(hd)
    visible = ~pad[:, None, None, :]
    s = np.where(visible, q @ k.transpose(0, 1, 3, 2) * scale, -np.inf)
    prob, softmax_back = layers.softmax(s)
    o = prob @ v
    merged = o.transpose(0, 2, 1, 3).reshape(b, t, d)
    y, out_back = layers.linear(merged, p[n + "out_proj.weight"], p[n + "out_proj.bias"])

    def backward(dy):
        g = {}
        dmerged, g[n + "out_proj.weight"], g[n + "out_proj.bias"] = out_back(dy)
        do = dmerged.reshape(b, t, heads, hd).transpose(0, 2, 1, 3)
        dprob = do @ v.transpose(0, 1, 3, 2)
        dv = prob.transpose(0, 1, 3, 2) @ do
        ds = np.where(visible, softmax_back(dprob), 0) * scale
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        dqkv = np.concatenate([a.transpose(0, 2, 1, 3).reshape(b, t, d) for a in (dq, dk, dv)], -1)
        dx, g[n + "in_proj_weight"], g[n + "in_proj_bias"] = in_back(dqkv)
        return dx, g

    return y, backward


def encoder_layer(x, pad, p, n, heads):
    """nn.TransformerEncoderLayer (post-norm, relu, no dropout) and its backward."""
    sa, sa_back = attention(x, pad, p, n + "self_attn.", heads)
    y1, ln1_back = layers.layer_norm(x + sa, p[n + "norm1.weight"], p[n + "norm1.bias"])
    f1, l1_back = layers.linear(y1, p[n + "linear1.weight"], p[n + "linear1.bias"])
    r, relu_back = layers.relu(f1)
    f2, l2_back = layers.linear(r, p[n + "linear2.weight"], p[n + "linear2.bias"])
    y2, ln2_back = layers.layer_norm(y1 + f2, p[n + "norm2.weight"], p[n + "norm2.bias"])

    def backward(dy2):
        g = {}
        dz2, g[n + "norm2.weight"], g[n + "norm2.bias"] = ln2_back(dy2)
        dr, g[n + "linear2.weight"], g[n + "linear2.bias"] = l2_back(dz2)
        dy1, g[n + "linear1.weight"], g[n + "linear1.bias"] = l1_back(relu_back(dr))
        dz1, g[n + "norm1.weight"], g[n + "norm1.bias"] = ln1_back(dy1 + dz2)
        dsa, ga = sa_back(dz1)
        g.update(ga)
        return dz1 + dsa, g

    return y2, backward


def loss_and_grads(p, tokens, labels, heads, layers_count):
    b, t = tokens.shape
    pad = tokens == 0
    x = p["tok.weight"][tokens] + p["pos.weight"][:t]
    backs = []
    for i in range(layers_count):
        x, back = encoder_layer(x, pad, p, f"layers.{i}.", heads)
        backs.append(back)
    keep = (~pad).astype(x.dtype)
    count = keep.sum(axis=1)[:, None]
    pooled = (x * keep[..., None]).sum(axis=1) / count
    logits, head_back = layers.linear(pooled, p["head.weight"], p["head.bias"])
    loss, ce_back = layers.cross_entropy(logits, labels)
    g = {}
    dpooled, g["head.weight"], g["head.bias"] = head_back(ce_back())
    dx = (dpooled / count)[:, None, :] * keep[..., None]
    for back in reversed(backs):
        dx, gl = back(dx)
        g.update(gl)
    dtok = np.zeros_like(p["tok.weight"])
    np.add.at(dtok, tokens.reshape(-1), dx.reshape(-1, dx.shape[-1]))
    g["tok.weight"] = dtok
    dpos = np.zeros_like(p["pos.weight"])
    dpos[:t] = dx.sum(axis=0)
    g["pos.weight"] = dpos
    return float(loss), g


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["init", "train"])
    ap.add_argument("path", nargs="?")
    for name in ("length", "width", "heads", "layers", "classes", "batch", "steps", "warmup", "seed"):
        ap.add_argument("--" + name, type=int, default=0)
    for name in ("lr", "weight-decay"):
        ap.add_argument("--" + name, type=float, default=0.0)
    for name in ("init", "tokens", "labels", "out-losses"):
        ap.add_argument("--" + name)
    ap.add_argument("--dtype", choices=["f32", "f64"], default="f32",
                    help="of the init file (f64 for a program built with --widen-f64)")
    a = ap.parse_args(argv)
    if a.command == "init":
        rng = np.random.default_rng(a.seed)
        w = {}
        for name, shape in shapes(a.length, a.width, a.layers, a.classes).items():
            if "norm" in name and name.endswith("weight"):
                w[name] = 1 + 0.1 * rng.standard_normal(shape)
            else:
                w[name] = 0.3 * rng.standard_normal(shape)
        # Values of f32 precision either way, so that both files hold one model.
        dtype = np.float64 if a.dtype == "f64" else np.float32
        safetensors_np.save(a.path, {n: v.astype(np.float32).astype(dtype) for n, v in w.items()})
        return 0
    params = {n: v.astype(np.float64) for n, v in safetensors_np.load(a.init)[0].items()}
    tokens = np.load(a.tokens).astype(np.int64)
    labels = np.load(a.labels).astype(np.int64)
    opt = optim.AdamW(weight_decay=a.weight_decay)
    schedule = ("warmup_cosine", {"warmup": a.warmup, "min_lr": 0.0})
    per_epoch = len(tokens) // a.batch
    losses = []
    for step in range(1, a.steps + 1):
        start = ((step - 1) % per_epoch) * a.batch
        rows = slice(start, start + a.batch)
        loss, grads = loss_and_grads(params, tokens[rows], labels[rows], a.heads, a.layers)
        losses.append(loss)
        opt.step(params, grads, optim.scheduled_lr(schedule, a.lr, step, a.steps))
    with open(a.out_losses, "w") as f:
        json.dump({"loss": losses}, f)
    print(f"encoder: {a.steps} steps, last loss {losses[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
