#!/usr/bin/python3
"""CPU attention: this tree's fused attention against another modelc build
(e.g. one from before attention was fused), side by side in one run,
printed as one JSON object.

bench/cpu_attention.py --baseline DIR [--build build] [--repeats 5]
                       [--steps 40] [--threads 1]

DIR is an installed or built modelc of another revision: DIR/bin/modelc and
its runtime in DIR/lib (passed as --runtime-dir). Two programs are built by
each compiler (--target cpu) and trained, alternating baseline and this
tree's build `--repeats` times so that noise on a shared machine hits both
alike:
- `attention`: attention alone at char_gpt's shapes (batch 32, 4 heads,
  context 128, head size 32, causal), forward and backward: the parameters
  are q, k, v and the loss sum(attention(q, k, v) * w);
- `char_gpt`: the example as it is (examples/char_gpt.mdl, on the GPL-3
  text of Debian's base-files), with a warmup of 5 steps for the short run.
Both in f32 and bf16 (`--precision`). The figure is the program's own
samples/s (--log, every 10 steps, the first log line dropped), the median
over the repeats; `ratio` is this tree's over the baseline's (above 1:
faster); char_gpt logs tokens/s, which stands in for samples/s.
OPENBLAS_NUM_THREADS is --threads for both.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ATTENTION = """
const B = 32
const H = 4
const T = 128
const D = 32

block f(w: f32[b, h, t, d]) -> f32[] {
  param q: f32[b, h, t, d] = normal(0.0, 1.0)
  param k: f32[b, h, t, d] = normal(0.0, 1.0)
  param v: f32[b, h, t, d] = normal(0.0, 1.0)
  return sum(attention(q, k, v, causal = true) * w)
}

data d {
  w: f32[H, T, D] = npy("w.npy")
}

train t {
  data = d
  batch = B
  loss = f(batch.w)
  optimizer = sgd(lr = 0.0)
  steps = 1000
}
"""


def run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        sys.exit(f"cpu_attention: {' '.join(cmd)} failed: {proc.stderr.strip()[-600:]}")
    return proc


def samples_per_s(program, args, steps, threads, cwd):
    log = os.path.join(cwd, "log.jsonl")
    if os.path.exists(log):
        os.remove(log)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    run([program, "--cpu", "--steps", str(steps), "--log", log,
         "--set", "log.every=10"] + args, env=env, cwd=cwd)
    # samples/s, or tokens/s for programs over token windows.
    rows = [json.loads(line) for line in open(log)]
    rates = [r.get("samples_per_s") or r.get("tokens_per_s") for r in rows[1:]]
    rates = [r for r in rates if r]
    if not rates:
        sys.exit(f"cpu_attention: no samples_per_s in {program}'s log")
    return sum(rates) / len(rates)


def build_programs(compilers, sources, tmp):
    """Each (name, .mdl, -D defines, run arguments) of `sources` built by
    each compiler (--target cpu) in f32 and bf16: {(name, precision,
    side): (program, run arguments)}."""
    programs = {}
    for name, mdl, defines, data in sources:
        for precision in ["f32", "bf16"]:
            for side, compiler in compilers.items():
                out = os.path.join(tmp, f"{name}-{precision}-{side}")
                run([compiler[0], mdl, "-o", out, "--target", "cpu",
                     "--precision", precision] + defines + compiler[1:])
                programs[(name, precision, side)] = (out, data)
    return programs


def compare(programs, compilers, args, tmp, unit, this):
    """The median rate of each program over `args.repeats` runs, baseline
    and `this` side alternating, and their ratio (above 1: `this` faster),
    keyed `NAME_PRECISION`; the rates are `baseline_UNIT` and `THIS_UNIT`."""
    results = {}
    for name, precision in sorted({(n, p) for n, p, _ in programs}):
        figures = {side: [] for side in compilers}
        for _ in range(args.repeats):
            for side in compilers:
                program, data = programs[(name, precision, side)]
                figures[side].append(samples_per_s(
                    program, data, args.steps, args.threads, tmp))
        medians = {side: statistics.median(v) for side, v in figures.items()}
        results[f"{name}_{precision}"] = {
            f"baseline_{unit}": round(medians["baseline"], 2),
            f"{this}_{unit}": round(medians[this], 2),
            "ratio": round(medians[this] / medians["baseline"], 3),
        }
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", required=True,
                        help="a modelc build of another revision (bin/, lib/)")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import numpy as np

    compilers = {
        "baseline": [os.path.join(args.baseline, "bin", "modelc"),
                     "--runtime-dir", os.path.join(args.baseline, "lib")],
        "fused": [os.path.join(args.build, "bin", "modelc")],
    }
    with tempfile.TemporaryDirectory() as tmp:
        rng = np.random.default_rng(0)
        np.save(os.path.join(tmp, "w.npy"),
                rng.standard_normal((320, 4, 128, 32)).astype(np.float32))
        source = os.path.join(tmp, "attention.mdl")
        open(source, "w").write(ATTENTION)

        programs = build_programs(compilers, [
            ("attention", source, [], []),
            ("char_gpt", os.path.join(ROOT, "examples", "char_gpt.mdl"), [],
             ["--set", "warmup=5"])], tmp)
        results = compare(programs, compilers, args, tmp,
                          "samples_per_s", "fused")
    print(json.dumps({"threads": args.threads, "repeats": args.repeats,
                      "steps": args.steps, "loadavg": os.getloadavg(),
                      "results": results}, indent=2))


if __name__ == "__main__":
    main()
