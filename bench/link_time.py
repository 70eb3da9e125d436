#!/usr/bin/python3
"""Link time of `modelc -o` with each linker the C++ driver can use (GNU ld,
gold, lld), side by side in one run, printed as one JSON object.

bench/link_time.py [--build build] [--example fashion_mlp] [--repeats 5]

Each repeat builds the example once to an object file (`--emit=obj`) and
once per linker to an executable (`-o OUT --fuse-ld=NAME`), in turn, so
that noise on a shared machine hits all of them alike; a linker's time is
the median executable build minus the median object build. Compare the
ratios, not the absolute numbers.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINKERS = {"bfd": "ld.bfd", "gold": "ld.gold", "lld": "ld.lld"}


def timed(cmd):
    """Seconds that `cmd` took; exits on failure."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"link_time: {' '.join(cmd)} failed: {proc.stderr.strip()[-400:]}")
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--example", default="fashion_mlp")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    modelc = os.path.join(args.build, "bin", "modelc")
    source = os.path.join(ROOT, "examples", args.example + ".mdl")
    linkers = [name for name, tool in LINKERS.items() if shutil.which(tool)]
    with tempfile.TemporaryDirectory() as tmp:
        times = {name: [] for name in linkers}
        compile_only = []
        for _ in range(args.repeats):
            compile_only.append(timed([modelc, source, "--target", "cpu",
                                       "--emit=obj", "-o", os.path.join(tmp, "p.o")]))
            for name in linkers:
                times[name].append(timed([modelc, source, "--target", "cpu",
                                          "-o", os.path.join(tmp, "p-" + name),
                                          "--fuse-ld=" + name]))
        base = statistics.median(compile_only)
        link = {name: max(statistics.median(t) - base, 1e-3) for name, t in times.items()}
        result = {
            "example": args.example,
            "repeats": args.repeats,
            "compile_to_object_s": round(base, 3),
            "link_s": {name: round(s, 3) for name, s in link.items()},
        }
        if "bfd" in link:
            result["speedup_vs_bfd"] = {name: round(link["bfd"] / s, 2)
                                        for name, s in link.items() if name != "bfd"}
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
