#!/usr/bin/python3
"""GPU training throughput: modelc's programs against PyTorch eager.

Builds nothing: it takes programs that modelc built elsewhere (default
target cuda,cpu), because a GPU machine need not have the compiler's
dependencies. Runs the Fashion-MNIST MLP (batch 128) and LeNet (batch 64)
for a fixed number of steps on GPU 0, and the same models in PyTorch eager
on the same GPU with the same batch size and optimizer, and prints JSON:
steps/s and samples/s of each and the ratio modelc / PyTorch.

  bench/gpu_train.py --programs DIR [--data DIR] [--steps N]

DIR holds `fashion_mlp_f32` and `lenet` (modelc examples/X.mdl -o DIR/X,
the MLP with --precision f32);
--data is a directory with Fashion-MNIST's four idx .gz files (default
Debian's /usr/share/datasets/fashion-mnist).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch_models

# f32 builds: PyTorch eager trains these in f32.
MODELS = {"mlp": "fashion_mlp_f32", "lenet": "lenet"}


def modelc_rates(program, steps, data_dir):
    """(steps/s, samples/s) from the program's log, after the first line."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "log.jsonl")
        args = [program, "--gpus", "1", "--steps", str(steps), "--log", log,
                "--set", "log.every=10", "--set", f"eval.every={steps * 10}",
                "--checkpoint-dir", os.path.join(tmp, "checkpoints")]
        # The eval set too: the program opens it before the first step, and
        # its compiled-in path need not exist on the GPU machine.
        for flag, split in (("--data", "train"), ("--eval-data", "t10k")):
            for field, kind in (("image", "images-idx3"),
                                ("label", "labels-idx1")):
                name = f"{split}-{kind}-ubyte.gz"
                args += [flag, f"{field}={os.path.join(data_dir, name)}"]
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode != 0:
            return {"error": proc.stderr.strip()[-400:]}
        rates = [json.loads(line).get("samples_per_s") for line in open(log)]
        rates = [r for r in rates[1:] if r]
        if not rates:
            return {"error": "no samples_per_s in the log"}
        return {"samples_per_s": sum(rates) / len(rates),
                "banner": [l for l in proc.stderr.splitlines()
                           if l.startswith(("train ", "parameters "))]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--programs", required=True)
    p.add_argument("--data", default=torch_models.DATA)
    p.add_argument("--steps", type=int, default=1000)
    a = p.parse_args()
    out = {"steps": a.steps, "models": {}}
    for model, example in MODELS.items():
        batch = torch_models.BATCH[model]
        m = modelc_rates(os.path.join(a.programs, example), a.steps, a.data)
        try:
            t = torch_models.throughput(model, a.steps, a.data, device="cuda")
            torch = {"samples_per_s": round(t, 1),
                     "steps_per_s": round(t / batch, 1)}
        except Exception as e:  # report, keep the other numbers
            torch = {"error": f"{type(e).__name__}: {e}"}
        entry = {"batch": batch, "modelc": m, "pytorch_eager": torch}
        if "samples_per_s" in m:
            m["steps_per_s"] = round(m["samples_per_s"] / batch, 1)
            m["samples_per_s"] = round(m["samples_per_s"], 1)
            if "samples_per_s" in torch:
                entry["ratio_modelc_over_pytorch"] = round(
                    m["samples_per_s"] / torch["samples_per_s"], 3)
        out["models"][model] = entry
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
