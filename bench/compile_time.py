#!/usr/bin/python3
"""Compile time, kernels and program size of every example, side by side in
one run, printed as one JSON object.

bench/compile_time.py [--build build] [--repeats 1] [--jobs N]
                      [--layers 2,4,8,12] [--examples a,b,...]

For every example (examples/*.mdl), with the default target (cuda,cpu:
sm_80 and sm_90 PTX, cubins when ptxas is found, and the CPU) and with
--target cpu: the wall time of `modelc FILE -o OUT` (the median of the
repeats), the program's size in bytes, its distinct GPU kernels (`OUT
describe --json`) and the kernel entries of its sm_90 PTX (`modelc
--emit=ptx --arch sm_90`); then the same for char_gpt at each -D
N_LAYER=... of --layers. Each repeat compiles everything once, in turn, so
that noise on a shared machine hits every program alike. The machine's
cores and load average (before and after) come with the figures: compile
times on a busy machine are longer, and only the ratios measured in one run
compare.
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


def run(cmd):
    """Runs `cmd`; exits with its error on failure."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"compile_time: {' '.join(cmd)} failed: {proc.stderr.strip()[-600:]}")
    return proc


def timed(cmd):
    start = time.perf_counter()
    run(cmd)
    return time.perf_counter() - start


def count_entries(ptx_path):
    with open(ptx_path) as f:
        return sum(1 for line in f if line.startswith(".visible .entry"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=0,
                    help="modelc -j (default: modelc's, every core)")
    ap.add_argument("--layers", default="2,4,8,12")
    ap.add_argument("--examples", default="",
                    help="comma-separated example names (default: all)")
    args = ap.parse_args()
    modelc = os.path.join(args.build, "bin", "modelc")
    examples = sorted(f[:-4] for f in os.listdir(os.path.join(ROOT, "examples"))
                      if f.endswith(".mdl"))
    if args.examples:
        examples = [e for e in examples if e in args.examples.split(",")]
    # (name, example, extra flags)
    programs = [(e, e, []) for e in examples]
    programs += [(f"char_gpt@{n}", "char_gpt", ["-D", f"N_LAYER={n}"])
                 for n in args.layers.split(",") if n]
    targets = {"cuda,cpu": [], "cpu": ["--target", "cpu"]}
    jobs = ["-j", str(args.jobs)] if args.jobs else []

    load_before = os.getloadavg()
    times = {(p[0], t): [] for p in programs for t in targets}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            for name, example, flags in programs:
                source = os.path.join(ROOT, "examples", example + ".mdl")
                for target, target_flags in targets.items():
                    out = os.path.join(tmp, f"{name}.{target}")
                    times[(name, target)].append(
                        timed([modelc, source, *flags, *target_flags, *jobs, "-o", out]))
        for name, example, flags in programs:
            source = os.path.join(ROOT, "examples", example + ".mdl")
            entry = {}
            for target in targets:
                out = os.path.join(tmp, f"{name}.{target}")
                figures = {"seconds": round(statistics.median(times[(name, target)]), 3),
                           "bytes": os.path.getsize(out)}
                if target == "cuda,cpu":
                    described = json.loads(run([out, "describe", "--json"]).stdout)
                    figures["kernels"] = described["gpu"]["kernels"]
                    steps = described["gpu"]["optimizer_steps"]
                    if steps:
                        figures["graph_nodes_per_step"] = {
                            k: v["graph_nodes"] for k, v in steps.items()}
                    ptx = os.path.join(tmp, f"{name}.ptx")
                    run([modelc, source, *flags, "--emit=ptx", "--arch", "sm_90", "-o", ptx])
                    figures["ptx_entries_sm_90"] = count_entries(ptx)
                entry[target] = figures
            results[name] = entry
    load_after = os.getloadavg()

    reference = results.get("fashion_mlp", {}).get("cuda,cpu", {}).get("seconds")
    ratios = {}
    if reference:
        for name, entry in results.items():
            ratios[name] = round(entry["cuda,cpu"]["seconds"] / reference, 2)
    print(json.dumps({
        "machine": {"cores": os.cpu_count(),
                    "load_before": [round(x, 2) for x in load_before],
                    "load_after": [round(x, 2) for x in load_after]},
        "jobs": args.jobs or "all cores",
        "repeats": args.repeats,
        "programs": results,
        "over_fashion_mlp_cuda_cpu": ratios,
    }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
