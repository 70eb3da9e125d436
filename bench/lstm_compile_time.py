#!/usr/bin/python3
"""Compile time of examples/lstm_lm.mdl (a 2-layer LSTM language model) at
several sequence lengths, side by side in one run, printed as one JSON
object (issue 16, acceptance 5: under 10 s for the default target, and not
growing with the sequence).

bench/lstm_compile_time.py [--build build] [--lengths 32,64,128] [--repeats 3]
                           [--target cuda,cpu]

Each repeat compiles the example once per length (`-D T=...`, the default
target `cuda,cpu` with ptxas when found), in turn, so that noise on a shared
machine hits all lengths alike; each length's time is the median. The
ratio of the longest to the shortest is the number to look at: an unrolled
recurrence grows linearly with T, a loop over time stays flat.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    """Seconds that `cmd` took; exits on failure."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"lstm_compile_time: {' '.join(cmd)} failed: {proc.stderr.strip()[-400:]}")
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--lengths", default="32,64,128")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--target", default="cuda,cpu")
    args = ap.parse_args()
    modelc = os.path.join(args.build, "bin", "modelc")
    source = os.path.join(ROOT, "examples", "lstm_lm.mdl")
    lengths = [int(t) for t in args.lengths.split(",")]
    times = {t: [] for t in lengths}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            for t in lengths:
                times[t].append(timed([modelc, source, "--target", args.target, "-D", f"T={t}",
                                       "-o", os.path.join(tmp, f"lm{t}")]))
    seconds = {str(t): round(statistics.median(v), 3) for t, v in times.items()}
    result = {
        "example": "lstm_lm",
        "target": args.target,
        "repeats": args.repeats,
        "seconds": seconds,
        "longest_over_shortest": round(statistics.median(times[max(lengths)]) /
                                       statistics.median(times[min(lengths)]), 3),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
