#!/usr/bin/python3
"""A one-block GPT (nanoGPT's shape) in NumPy, in f32 and in bf16/f16 mixed precision, for comparison.

  attn.py init OUT.safetensors [--seed S]
  attn.py train --init W --tokens TOKENS.npy --batch B --steps N --lr LR
                [--precision f32|bf16|f16] [--growth-interval N]
                --out-losses L.json --out-params P.safetensors

The model of test/E2E/Inputs/attn_lm.mdl (stdlib nn.gpt with vocab 16,
block_size 8, one layer, two heads of 16, width 32): token + position
embeddings, x + c_proj(attention(split(c_attn(ln_1(x))))), x + c_proj(gelu(
c_fc(ln_2(x)))), ln_f, logits = x @ wte^T (tied), mean cross-entropy over
every position. Parameter names are the program's (`gpt.transformer...`).

Mixed precision follows the rules of spec §8 and docs/passes/amp.md (written
from them, not from modelc's code; r rounds to the 16-bit type):
- linear layers: amp.rules' linear (16-bit operands, f32 sums, the product
  and the bias add each rounded once); the tied head r(r(x) @ r(wte)^T);
- attention as scaled_dot_product_attention, one fused op on 16-bit q, k,
  v (docs/codegen/attention.md): scores s = (q @ k^T) * 0.25 in f32, the
  causal mask, the row maximum m, e = exp(s - m) and l = sum(e) in f32,
  o = r((r(e) @ v) / l) (the unnormalised probabilities rounded before the
  product, as tensor cores take them), and the log-sum-exp L = m + log(l);
- gelu on a 16-bit input: in f32, rounded once; its gradient likewise;
- embeddings, the residual stream (f32 + 16-bit is f32), layer norms and the
  loss in f32;
- backward: a gradient flowing into a 16-bit value is rounded where an op
  makes it; attention's is FlashAttention-2's, in f32 from the saved o and
  L: p = exp(s - L), D = sum(do * o), dp = do @ v^T, ds = r(p * (dp - D)),
  dv = r(r(p)^T @ do), dq = r(0.25 * (ds @ k)), dk = r(0.25 * (ds^T @ q)).
f16 trains with GradScaler as train_ref.py does (grad_scaler.py).
Training: the windows of TOKENS ([N, 9] int) in file order, B per step
(wrapping each epoch), SGD with momentum 0.9 as optim.SGD. (Not Adam: the
key projection's bias has a gradient of exactly 0 in exact arithmetic, as
softmax ignores a constant added to a query's scores, so its computed
gradient is rounding noise, which Adam would normalise into full steps.)
"""
import argparse
import json
import math
import sys

import numpy as np

import amp
import grad_scaler
import layers
import optim
import safetensors_np

V, T, C, H = 16, 8, 32, 2
D = C // H
P = "gpt.transformer."
SHAPES = {
    "wte.weight": (V, C), "wpe.weight": (T, C),
    "h.0.ln_1.weight": (C,), "h.0.ln_1.bias": (C,),
    "h.0.attn.c_attn.weight": (3 * C, C), "h.0.attn.c_attn.bias": (3 * C,),
    "h.0.attn.c_proj.weight": (C, C), "h.0.attn.c_proj.bias": (C,),
    "h.0.ln_2.weight": (C,), "h.0.ln_2.bias": (C,),
    "h.0.mlp.c_fc.weight": (4 * C, C), "h.0.mlp.c_fc.bias": (4 * C,),
    "h.0.mlp.c_proj.weight": (C, 4 * C), "h.0.mlp.c_proj.bias": (C,),
    "ln_f.weight": (C,), "ln_f.bias": (C,),
}


def init(seed):
    """Weights normal(0, 0.2) (larger than nanoGPT's 0.02, so that 16-bit
    rounding shows), norms' weights near 1, biases small."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in SHAPES.items():
        if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
            w = 1 + 0.1 * rng.standard_normal(shape)
        elif name.endswith(".bias"):
            w = 0.1 * rng.standard_normal(shape)
        else:
            w = 0.2 * rng.standard_normal(shape)
        out[P + name] = w.astype(np.float32)
    return out


def loss_and_grads(params, idx, labels, precision, dloss=None):
    """Mean cross-entropy and {name: gradient} of one batch of windows."""
    p = {n[len(P):]: a for n, a in params.items()}
    mixed = precision in amp.ROUNDING
    R = amp.rules(precision) if mixed else None
    r = R.round if mixed else (lambda a: a)
    linear = R.linear if mixed else layers.linear
    B = idx.shape[0]

    x0 = p["wte.weight"][idx] + p["wpe.weight"][np.arange(T)]
    h1, ln1_back = layers.layer_norm(x0, p["h.0.ln_1.weight"], p["h.0.ln_1.bias"])
    qkv, attn_in_back = linear(h1, p["h.0.attn.c_attn.weight"], p["h.0.attn.c_attn.bias"])
    q, k, v = (qkv[..., i * C:(i + 1) * C].reshape(B, T, H, D).transpose(0, 2, 1, 3)
               for i in range(3))
    scale = np.float32(1 / math.sqrt(D))
    causal = np.tril(np.ones((T, T), bool))
    s = np.where(causal, (q @ k.transpose(0, 1, 3, 2)) * scale, np.float32(-np.inf))
    smax = s.max(axis=-1, keepdims=True)
    e = np.exp(s - smax)
    ssum = e.sum(axis=-1, keepdims=True)
    o = r((r(e) @ v) / ssum)
    lse = smax + np.log(ssum)
    merged = o.transpose(0, 2, 1, 3).reshape(B, T, C)
    a, attn_out_back = linear(merged, p["h.0.attn.c_proj.weight"], p["h.0.attn.c_proj.bias"])
    x1 = x0 + a
    h2, ln2_back = layers.layer_norm(x1, p["h.0.ln_2.weight"], p["h.0.ln_2.bias"])
    f, fc_back = linear(h2, p["h.0.mlp.c_fc.weight"], p["h.0.mlp.c_fc.bias"])
    g32, gelu_back = layers.gelu(f)
    g = r(g32)
    m, mlp_out_back = linear(g, p["h.0.mlp.c_proj.weight"], p["h.0.mlp.c_proj.bias"])
    x2 = x1 + m
    h3, lnf_back = layers.layer_norm(x2, p["ln_f.weight"], p["ln_f.bias"])
    h3r, wter = r(h3), r(p["wte.weight"])
    logits = r(h3r @ wter.T)
    ce = R.cross_entropy if mixed else layers.cross_entropy
    loss, ce_back = ce(logits.reshape(B * T, V), labels.reshape(B * T))

    grads = {}
    dlogits = (ce_back() if dloss is None else ce_back(dloss)).reshape(B, T, V)
    rows_dl, rows_h = dlogits.reshape(-1, V), h3r.reshape(-1, C)
    dh3 = r(dlogits @ wter)
    dwte_head = r(rows_dl.T @ rows_h)
    dx2, grads["ln_f.weight"], grads["ln_f.bias"] = lnf_back(dh3)
    dg, grads["h.0.mlp.c_proj.weight"], grads["h.0.mlp.c_proj.bias"] = mlp_out_back(r(dx2))
    df = r(gelu_back(dg))
    dh2, grads["h.0.mlp.c_fc.weight"], grads["h.0.mlp.c_fc.bias"] = fc_back(df)
    dx1 = dx2 + ln2_back(dh2)[0]
    grads["h.0.ln_2.weight"], grads["h.0.ln_2.bias"] = ln2_back(dh2)[1:]
    dmerged, grads["h.0.attn.c_proj.weight"], grads["h.0.attn.c_proj.bias"] = attn_out_back(r(dx1))
    do = dmerged.reshape(B, T, H, D).transpose(0, 2, 1, 3)
    prob = np.where(causal, np.exp(s - lse), np.float32(0))
    rowdot = (do * o).sum(axis=-1, keepdims=True)
    dprob = do @ v.transpose(0, 1, 3, 2)
    ds = r(prob * (dprob - rowdot))
    dv = r(r(prob).transpose(0, 1, 3, 2) @ do)
    dq = r(scale * (ds @ k))
    dk = r(scale * (ds.transpose(0, 1, 3, 2) @ q))
    dqkv = np.concatenate([t.transpose(0, 2, 1, 3).reshape(B, T, C) for t in (dq, dk, dv)], -1)
    dh1, grads["h.0.attn.c_attn.weight"], grads["h.0.attn.c_attn.bias"] = attn_in_back(dqkv)
    dx0 = dx1 + ln1_back(dh1)[0]
    grads["h.0.ln_1.weight"], grads["h.0.ln_1.bias"] = ln1_back(dh1)[1:]
    dwte = np.zeros_like(p["wte.weight"])
    np.add.at(dwte, idx.reshape(-1), dx0.reshape(-1, C))
    grads["wte.weight"] = dwte + dwte_head
    grads["wpe.weight"] = dx0.sum(axis=0)
    return float(loss), {P + n: g.astype(np.float32) for n, g in grads.items()}


def train(a):
    params, _ = safetensors_np.load(a.init)
    params = {n: t.astype(np.float32) for n, t in params.items()}
    tokens = np.load(a.tokens).astype(np.int64)
    per_epoch = len(tokens) // a.batch
    opt = optim.make_optimizer("sgd", 0.9)
    scaler = grad_scaler.GradScaler(growth_interval=a.growth_interval) \
        if a.precision == "f16" else None
    log = {"loss": [], "lr": []}
    if scaler:
        log.update(loss_scale=[], skipped_steps=[])
    skipped = 0
    for step in range(1, a.steps + 1):
        start = ((step - 1) % per_epoch) * a.batch
        window = tokens[start:start + a.batch]
        scale = scaler.scale if scaler else None
        loss, grads = loss_and_grads(params, window[:, :T], window[:, 1:T + 1], a.precision,
                                     None if scale is None else np.float32(scale))
        found_inf = False
        if scaler:
            found_inf = any(not np.all(np.isfinite(g)) for g in grads.values())
            inverse = np.float32(1.0 / float(scale))
            with np.errstate(invalid="ignore", over="ignore"):
                grads = {n: g * inverse for n, g in grads.items()}
        if not found_inf:
            opt.step(params, grads, a.lr)
        log["loss"].append(loss)
        log["lr"].append(a.lr)
        if scaler:
            skipped += found_inf
            log["loss_scale"].append(float(scale))
            log["skipped_steps"].append(skipped)
            scaler.update(found_inf)
    with open(a.out_losses, "w", encoding="utf-8") as f:
        json.dump(log, f)
    safetensors_np.save(a.out_params, params)
    print(f"attn: {a.steps} steps, last loss {log['loss'][-1]:.6f}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    i = sub.add_parser("init")
    i.add_argument("out")
    i.add_argument("--seed", type=int, default=0)
    t = sub.add_parser("train")
    t.add_argument("--init", required=True)
    t.add_argument("--tokens", required=True)
    t.add_argument("--batch", type=int, required=True)
    t.add_argument("--steps", type=int, required=True)
    t.add_argument("--lr", type=float, required=True)
    t.add_argument("--precision", choices=["f32", "bf16", "f16"], default="f32")
    t.add_argument("--growth-interval", type=int, default=2000)
    t.add_argument("--out-losses", required=True)
    t.add_argument("--out-params", required=True)
    a = p.parse_args(argv)
    try:
        if a.command == "init":
            safetensors_np.save(a.out, init(a.seed))
        else:
            train(a)
    except (OSError, ValueError) as e:
        print(f"attn: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
