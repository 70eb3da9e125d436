#!/usr/bin/python3
"""Acceptance benchmark for LeNet on the CPU: compiles examples/lenet.mdl
(AdamW 1e-3, weight_decay 0.01, batch 64, warmup_cosine(warmup = 100),
3 epochs), trains it, and prints JSON with the final test accuracy (the
program's last eval line), seconds per epoch and samples/s. Long (minutes per
epoch on 2 cores), so not part of CI.

bench/lenet_accuracy.py [--build build] [--epochs 3] [--precision f32|bf16|f16]

Issue 14's acceptance (LeNet in bf16 within 0.5 % of f32) is this script
run with --precision f32 and --precision bf16: 0.8926 and 0.8928 on
2026-12-04.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--precision", choices=["f32", "bf16", "f16"],
                        help="modelc --precision (default: the example's)")
    args = parser.parse_args()
    modelc = os.path.join(args.build, "bin", "modelc")
    with tempfile.TemporaryDirectory() as tmp:
        program = os.path.join(tmp, "lenet")
        precision = ["--precision", args.precision] if args.precision else []
        subprocess.run([modelc, os.path.join(ROOT, "examples", "lenet.mdl"), "-o",
                        program, "--target", "cpu"] + precision, check=True)
        log = os.path.join(tmp, "log.jsonl")
        start = time.perf_counter()
        proc = subprocess.run([program, "--cpu", "--epochs", str(args.epochs),
                               "--log", log], capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"lenet exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
        evals = re.findall(r"eval step (\d+) loss ([0-9.]+) accuracy ([0-9.]+)", proc.stdout)
        lines = [json.loads(line) for line in open(log)]
        rates = [line["samples_per_s"] for line in lines
                 if not line.get("eval") and line.get("samples_per_s")]
    result = {
        "epochs": args.epochs,
        "precision": args.precision or "as written",
        "test_accuracy": float(evals[-1][2]) if evals else None,
        "eval_accuracy_per_epoch": [float(e[2]) for e in evals],
        "seconds_per_epoch": round(elapsed / args.epochs, 1),
        "samples_per_s": round(sum(rates) / len(rates), 1) if rates else None,
        "pytorch_1.13_reference_accuracy": 0.894,
    }
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
