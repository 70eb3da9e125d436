#!/usr/bin/python3
"""Attention and GPT-2 small on a GPU: modelc's programs against PyTorch, side
by side on the same GPU, printed as one JSON object.

  bench/gpu_attention.py --programs DIR [--steps N]

DIR holds two programs modelc built elsewhere (bench/prepare_gpu_check.sh):
- `attention_gpt2`: attention alone at GPT-2 small's shapes (batch 16, 12
  heads, context 1024, head size 64, causal, bf16 operands cast from f32
  parameters), loss sum(attention(q, k, v) * w), SGD at lr 0: one step is
  the casts, the fused forward, the loss, its backward through the fused
  backward, and an update;
- `gpt2_small`: examples/gpt2_small.mdl with -D ACCUM=1 (bf16, batch 16,
  context 1024), on a synthetic llm.c token shard written here.

PyTorch (on the same GPU, after warm-up, timed with CUDA events):
- the same attention step (bf16 casts, F.scaled_dot_product_attention with
  the flash backend, is_causal, the same loss and SGD update), and SDPA's
  forward and backward alone;
- a nanoGPT twin of GPT-2 small (tied embeddings, GELU-tanh MLP, pre-norm,
  AdamW(6e-4, betas 0.9/0.95, weight decay 0.1), grad clipping 1.0,
  torch.autocast bf16) compiled with torch.compile, on the same tokens.
modelc's figures are its programs' own log (steps/s, tokens/s after the
first log line).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

B, H, T, D = 16, 12, 1024, 64
VOCAB, LAYERS, WIDTH = 50257, 12, 768


def modelc_log(program, args, steps, tmp):
    log = os.path.join(tmp, os.path.basename(program) + ".jsonl")
    cmd = [program, "--gpus", "1", "--steps", str(steps), "--log", log,
           "--set", "log.every=5", "--checkpoint-dir",
           os.path.join(tmp, "ck-" + os.path.basename(program))] + args
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip()[-400:]
    rows = [json.loads(line) for line in open(log)]
    rows = [r for r in rows if not r.get("eval")][1:]
    return rows, None


def mean(rows, key):
    values = [r[key] for r in rows if r.get(key)]
    return sum(values) / len(values) if values else None


def write_shard(path, tokens):
    """An llm.c token shard: a 256-int32 header (magic, version, count)."""
    import numpy as np
    header = np.zeros(256, np.int32)
    header[:3] = (20240520, 1, len(tokens))
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(tokens.astype(np.uint16).tobytes())


def cuda_time(fn, steps, warmup=3):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(True), torch.cuda.Event(True)
    start.record()
    for _ in range(steps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / steps  # ms


def torch_attention(steps):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    g = torch.Generator(device="cuda").manual_seed(0)
    shape = (B, H, T, D)
    q, k, v = (torch.randn(shape, device="cuda", generator=g, requires_grad=True)
               for _ in range(3))
    w = torch.randn(shape, device="cuda", generator=g)
    opt = torch.optim.SGD([q, k, v], lr=0.0)

    def step():
        opt.zero_grad(set_to_none=True)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            o = F.scaled_dot_product_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(),
                                               is_causal=True)
        (o.float() * w).sum().backward()
        opt.step()

    qb, kb, vb = (t.detach().bfloat16().requires_grad_() for t in (q, k, v))
    grad = w.bfloat16()

    def sdpa_only():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            o = F.scaled_dot_product_attention(qb, kb, vb, is_causal=True)
        o.backward(grad)

    return cuda_time(step, steps), cuda_time(sdpa_only, steps)


def torch_gpt2(tokens, steps):
    """tokens/s of nanoGPT's GPT-2 small, torch.compile, bf16 autocast."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
            self.c_attn = nn.Linear(WIDTH, 3 * WIDTH)
            self.c_proj = nn.Linear(WIDTH, WIDTH)
            self.c_fc = nn.Linear(WIDTH, 4 * WIDTH)
            self.mlp_proj = nn.Linear(4 * WIDTH, WIDTH)

        def forward(self, x):
            q, k, v = self.c_attn(self.ln_1(x)).split(WIDTH, dim=2)
            q, k, v = (t.view(x.shape[0], T, H, D).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).reshape(x.shape))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, WIDTH), nn.Embedding(T, WIDTH)
            self.h = nn.ModuleList(Block() for _ in range(LAYERS))
            self.ln_f = nn.LayerNorm(WIDTH)

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
            for block in self.h:
                x = block(x)
            logits = self.ln_f(x) @ self.wte.weight.t()
            return F.cross_entropy(logits.float().view(-1, VOCAB), targets.view(-1))

    torch.backends.cuda.matmul.allow_tf32 = True
    model = GPT().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95),
                            weight_decay=0.1, fused=True)
    compiled = torch.compile(model)
    data = torch.from_numpy(tokens.astype("int64")).cuda()
    windows = (len(tokens) - 1) // (T + 1)
    state = {"i": 0}

    def step():
        i = state["i"] % (windows // B)
        state["i"] += 1
        rows = data[i * B * (T + 1):(i + 1) * B * (T + 1)].view(B, T + 1)
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = compiled(rows[:, :T], rows[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    start = time.perf_counter()
    step()
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - start
    ms = cuda_time(step, steps, warmup=3)
    return B * T / (ms / 1000), compile_s


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--programs", required=True)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    import numpy as np
    out = {"shapes": {"batch": B, "heads": H, "context": T, "head_size": D}}
    with tempfile.TemporaryDirectory() as tmp:
        rng = np.random.default_rng(0)
        shard = os.path.join(tmp, "tokens.bin")
        tokens = rng.integers(0, VOCAB, 2_000_000)
        write_shard(shard, tokens)
        np.save(os.path.join(tmp, "w.npy"),
                rng.standard_normal((B, H, T, D)).astype(np.float32))

        rows, error = modelc_log(os.path.join(args.programs, "attention_gpt2"),
                                 ["--data", "w=" + os.path.join(tmp, "w.npy")],
                                 args.steps, tmp)
        attention = {"modelc_step_ms": None, "error": error}
        if rows:
            rate = mean(rows, "steps_per_s")
            attention = {"modelc_step_ms": round(1000 / rate, 3) if rate else None}
        try:
            step_ms, sdpa_ms = torch_attention(args.steps)
            attention.update(torch_step_ms=round(step_ms, 3),
                             torch_sdpa_fwd_bwd_ms=round(sdpa_ms, 3))
            if attention.get("modelc_step_ms"):
                attention["torch_over_modelc"] = round(step_ms / attention["modelc_step_ms"], 3)
        except Exception as e:  # no PyTorch, or no flash backend
            attention["torch_error"] = repr(e)[:300]
        out["attention"] = attention

        rows, error = modelc_log(os.path.join(args.programs, "gpt2_small"),
                                 ["--data", "tokens=" + shard, "--eval-data", "tokens=" + shard,
                                  "--set", "warmup=5", "--set", f"eval.every={args.steps * 10}"],
                                 args.steps, tmp)
        gpt2 = {"modelc_tokens_per_s": round(mean(rows, "tokens_per_s")) if rows else None,
                "error": error}
        try:
            rate, compile_s = torch_gpt2(tokens, args.steps)
            gpt2.update(torch_compile_tokens_per_s=round(rate),
                        torch_compile_s=round(compile_s, 1))
            if gpt2["modelc_tokens_per_s"]:
                gpt2["modelc_over_torch"] = round(gpt2["modelc_tokens_per_s"] / rate, 3)
        except Exception as e:
            gpt2["torch_error"] = repr(e)[:300]
        out["gpt2_small"] = gpt2
    print(json.dumps(out, indent=2))
    return 0 if out["attention"].get("modelc_step_ms") and out["gpt2_small"]["modelc_tokens_per_s"] else 1


if __name__ == "__main__":
    sys.exit(main())
