#!/usr/bin/python3
"""ZeRO-1 on CPU ranks (docs/runtime/zero.md): throughput and memory of
`parallel { zero = 1 }` next to plain data parallelism, printed as one JSON
object.

bench/zero_cpu.py [--build build] [--example char_gpt] [--ranks 2]
                  [--steps 60] [--define K=V ...]

Both programs are the same example compiled with -D ZERO=0 and -D ZERO=1,
trained side by side in one run on the same ranks (shared machines are
noisy: compare the ratios). samples/s (tokens/s for text) is the program's own --log figure
averaged over the logged steps after the first; peak memory is the
process's maximum resident set (all ranks are threads of it), from
wait4's rusage of the child. The whole state and the per-rank share come from
`describe --json`.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(program, args):
    """(mean samples/s after the first log line, peak RSS in bytes)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "log.jsonl")
        err = os.path.join(tmp, "err")
        with open(err, "w") as e:
            proc = subprocess.Popen([program, *args, "--log", log],
                                    stdout=subprocess.DEVNULL, stderr=e)
            # wait4 gives this child's own rusage (all ranks are its
            # threads).
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            sys.exit(f"{program}: {open(err).read().strip()[-400:]}")
        lines = [json.loads(line) for line in open(log)]
        # Text data logs tokens/s, other data samples/s.
        rates = [r.get("samples_per_s", r.get("tokens_per_s")) for r in lines]
        rates = [r for r in rates[1:] if r]
        return (sum(rates) / len(rates) if rates else None,
                usage.ru_maxrss * 1024)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--example", default="char_gpt")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--define", "-D", action="append", default=[])
    a = ap.parse_args()
    modelc = os.path.join(a.build, "bin", "modelc")
    src = os.path.join(ROOT, "examples", a.example + ".mdl")
    defines = [x for d in a.define for x in ("-D", d)]
    out = {"example": a.example, "ranks": a.ranks, "steps": a.steps,
           "defines": a.define}
    with tempfile.TemporaryDirectory() as tmp:
        programs = {}
        for zero in (0, 1):
            p = os.path.join(tmp, f"zero{zero}")
            subprocess.run([modelc, src, "--precision", "f32", "-D",
                            f"ZERO={zero}", *defines, "-o", p, "--target",
                            "cpu"], check=True)
            programs[zero] = p
        described = json.loads(subprocess.run(
            [programs[1], "describe", "--json"], capture_output=True,
            text=True, check=True).stdout)
        entry = described["train"][0]
        out["optimizer_state_bytes"] = entry["optimizer_state_bytes"]
        out["optimizer_state_bytes_per_rank"] = \
            entry["optimizer_state_bytes_per_rank"]
        args = ["--cpu", "--ranks", str(a.ranks), "--steps", str(a.steps),
                "--set", "warmup=1", "--set", "log.every=10", "--set",
                "eval.every=1000000"]
        rate0, rss0 = run(programs[0], args)
        rate1, rss1 = run(programs[1], args)
        out["per_s"] = {"zero0": rate0, "zero1": rate1}
        if rate0 and rate1:
            out["throughput_zero1_over_zero0"] = round(rate1 / rate0, 3)
        out["peak_rss_bytes"] = {"zero0": rss0, "zero1": rss1}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
