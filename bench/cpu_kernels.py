#!/usr/bin/python3
"""CPU training speed of this tree against another modelc build (e.g. one
from before the fused layer norm gradient, the multi-tensor update, the
reductions that start from their fill and the gradients accumulated in
place), side by side in one run, printed as one JSON object.

bench/cpu_kernels.py --baseline DIR [--build build] [--repeats 5]
                     [--steps 40] [--threads 1]

DIR is an installed or built modelc of another revision: DIR/bin/modelc and
its runtime in DIR/lib (passed as --runtime-dir). Each compiler builds
(--target cpu), in f32 and bf16 (`--precision`):
- `char_gpt`: the example as it is (examples/char_gpt.mdl, on the GPL-3
  text of Debian's base-files), warmup 5 steps;
- `gpt2_shaped`: examples/gpt2_small.mdl at a size a CPU trains in seconds
  (2 layers, 4 heads, width 256, context 128, batch 8, a 2,048-token
  vocabulary, accumulate 1) on an llm.c-format shard of random tokens
  written here: GPT-2's layers, layer norms, AdamW with clipping and its
  tied embedding.
The programs are trained alternating baseline and this tree's build
`--repeats` times so that noise on a shared machine hits both alike. The
figure is the program's own tokens/s (--log, every 10 steps, the first log
line dropped), the median over the repeats; `ratio` is this tree's over the
baseline's (above 1: faster). OPENBLAS_NUM_THREADS is --threads for both.
"""
import argparse
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_attention import build_programs, compare  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GPT2_SHAPED = ["-D", "N_LAYER=2", "-D", "N_HEAD=4", "-D", "N_EMBD=256",
               "-D", "T=128", "-D", "B=8", "-D", "VOCAB=2048", "-D", "ACCUM=1"]


def write_shard(path, tokens):
    """An llm.c token shard: 256 int32 (magic, version, count), then u16s."""
    header = [20240520, 1, len(tokens)] + [0] * 253
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.write(struct.pack(f"<{len(tokens)}H", *tokens))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", required=True,
                        help="a modelc build of another revision (bin/, lib/)")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import random
    compilers = {
        "baseline": [os.path.join(args.baseline, "bin", "modelc"),
                     "--runtime-dir", os.path.join(args.baseline, "lib")],
        "this": [os.path.join(args.build, "bin", "modelc")],
    }
    with tempfile.TemporaryDirectory() as tmp:
        rng = random.Random(0)
        shard = os.path.join(tmp, "tokens.bin")
        write_shard(shard, [rng.randrange(2048) for _ in range(200_000)])
        programs = build_programs(compilers, [
            ("char_gpt", os.path.join(ROOT, "examples", "char_gpt.mdl"), [],
             ["--set", "warmup=5"]),
            ("gpt2_shaped", os.path.join(ROOT, "examples", "gpt2_small.mdl"),
             GPT2_SHAPED, ["--data", f"tokens={shard}",
                           "--eval-data", f"tokens={shard}",
                           "--set", "warmup=5"])], tmp)
        results = compare(programs, compilers, args, tmp, "tokens_per_s",
                          "this")
    print(json.dumps({"threads": args.threads, "repeats": args.repeats,
                      "steps": args.steps, "loadavg": os.getloadavg(),
                      "results": results}, indent=2))


if __name__ == "__main__":
    main()
