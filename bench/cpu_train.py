#!/usr/bin/python3
"""CPU benchmark: modelc's compile time per example, and training throughput
of the Fashion-MNIST MLP and LeNet next to the same models in PyTorch eager
on the same cores, printed as one JSON object.

bench/cpu_train.py [--build build] [--steps 300] [--threads N] [--examples a,b]

Throughput is measured side by side in one run (shared machines are noisy:
compare the ratio, not the absolute numbers). modelc's samples/s is the
program's own --log figure averaged over the logged steps after the first;
PyTorch's is timed the same way (after warm-up steps), with the recipe of the
.mdl file: AdamW(1e-3, weight_decay 0.01), batch 128 (MLP) / 64 (LeNet).
Needs Debian's python3-torch for the PyTorch side (skipped with a note
otherwise).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["fashion_mlp", "lenet", "char_gpt", "gpt2_small"]


def compile_example(modelc, name, out):
    """Seconds for `modelc EX -o OUT --target cpu`, or an error string."""
    start = time.perf_counter()
    proc = subprocess.run([modelc, os.path.join(ROOT, "examples", name + ".mdl"),
                           "-o", out, "--target", "cpu"],
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1:]
    return elapsed, None


def modelc_throughput(program, steps, threads):
    """Mean samples/s over the logged steps after the first log line."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "log.jsonl")
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
        proc = subprocess.run([program, "--cpu", "--steps", str(steps), "--log",
                               log, "--set", "log.every=10"],
                              capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            return None, proc.stderr.strip()[-300:]
        rates = [json.loads(line).get("samples_per_s") for line in open(log)]
        rates = [r for r in rates[1:] if r]
        if not rates:
            return None, "no samples_per_s in the log"
        return sum(rates) / len(rates), None


def torch_throughput(model_name, steps, threads):
    """samples/s of the same model and recipe in PyTorch eager."""
    import torch_models
    return torch_models.throughput(model_name, steps, threads=threads)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--examples", default=",".join(EXAMPLES),
                        help="comma-separated examples to compile (mlp and lenet always)")
    args = parser.parse_args()
    modelc = os.path.join(args.build, "bin", "modelc")
    result = {"threads": args.threads, "compile_s": {}, "train": {}}
    with tempfile.TemporaryDirectory() as tmp:
        programs = {}
        names = [n for n in EXAMPLES if n in args.examples.split(",")
                 or n in ("fashion_mlp", "lenet")]
        for name in names:
            out = os.path.join(tmp, name)
            seconds, error = compile_example(modelc, name, out)
            result["compile_s"][name] = round(seconds, 3) if seconds else {"error": error}
            programs[name] = out if seconds else None
        for model_name, example in (("mlp", "fashion_mlp"), ("lenet", "lenet")):
            entry = {}
            if programs[example]:
                rate, error = modelc_throughput(programs[example], args.steps, args.threads)
                entry["modelc_samples_per_s"] = round(rate, 1) if rate else {"error": error}
            try:
                entry["pytorch_samples_per_s"] = round(
                    torch_throughput(model_name, args.steps, args.threads), 1)
            except ImportError as e:
                entry["pytorch_samples_per_s"] = {"error": f"needs python3-torch ({e})"}
            mine, theirs = entry.get("modelc_samples_per_s"), entry.get("pytorch_samples_per_s")
            if isinstance(mine, float) and isinstance(theirs, float):
                entry["ratio_modelc_over_pytorch"] = round(mine / theirs, 3)
            result["train"][model_name] = entry
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
