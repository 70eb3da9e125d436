#!/usr/bin/env python3
"""Robustness: modelc must end every run with status 0 or 1 -- never a signal,
a hang, or an internal error -- on every truncation of every example and on
random byte mutations of the examples and of the standard library.

Usage: fuzz_modelc.py --modelc PATH --examples DIR --stdlib DIR
                      [--mutations N] [--seed S] [--jobs J]
"""
import argparse
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys
import tempfile

TIMEOUT_S = 20
INTERNAL_MARKERS = (b"LLVM ERROR", b"PLEASE submit a bug report", b"Assertion",
                    b"Stack dump", b"terminate called", b"internal error")


def run(modelc, path, stdlib, label):
    try:
        proc = subprocess.run(
            [modelc, path, "--emit=mdl", "-o", os.devnull, "--stdlib", stdlib],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"{label}: hang (no exit within {TIMEOUT_S} s)"
    if proc.returncode < 0:
        return f"{label}: killed by signal {-proc.returncode}"
    if proc.returncode not in (0, 1):
        return f"{label}: exit status {proc.returncode}"
    for marker in INTERNAL_MARKERS:
        if marker in proc.stderr:
            return f"{label}: internal error: {proc.stderr[:400]!r}"
    if proc.returncode == 1 and b"error" not in proc.stderr:
        return f"{label}: exit 1 without an error message"
    return None


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(5)
        pos = rng.randrange(len(data) + 1)
        if op == 0 and data:    # flip a byte
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif op == 1:           # insert a random or syntactically loaded byte
            data[pos:pos] = bytes([rng.choice(b"()[]{},;:.=*&#\"\n0123456789-+@!")
                                   if rng.random() < 0.7 else rng.randrange(256)])
        elif op == 2 and data:  # delete a run
            del data[pos:pos + rng.randint(1, 16)]
        elif op == 3 and data:  # duplicate a run elsewhere
            start = rng.randrange(len(data))
            chunk = data[start:start + rng.randint(1, 64)]
            data[pos:pos] = chunk
        else:                   # swap two tokens-ish runs
            a, b = sorted(rng.randrange(len(data) + 1) for _ in range(2))
            data[a:b] = data[a:b][::-1]
    return bytes(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modelc", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--stdlib", required=True)
    ap.add_argument("--mutations", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()

    examples = sorted(os.path.join(args.examples, f)
                      for f in os.listdir(args.examples) if f.endswith(".mdl"))
    if not examples:
        print("no examples found", file=sys.stderr)
        return 1
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="modelc-fuzz-")
    nn_source = open(os.path.join(args.stdlib, "nn.mdl"), "rb").read()
    jobs = []  # (path, stdlib dir, label)
    for ex in examples:
        data = open(ex, "rb").read()
        name = os.path.basename(ex)
        for n in range(len(data) + 1):
            path = os.path.join(work, f"trunc-{name}-{n}.mdl")
            with open(path, "wb") as f:
                f.write(data[:n])
            jobs.append((path, args.stdlib, f"{name} truncated to {n} bytes"))
    sources = [(ex, open(ex, "rb").read()) for ex in examples]
    for i in range(args.mutations):
        if i % 4 == 3:  # mutate the standard library under an intact example
            lib = os.path.join(work, f"stdlib-{i}")
            os.mkdir(lib)
            with open(os.path.join(lib, "nn.mdl"), "wb") as f:
                f.write(mutate(rng, nn_source))
            ex = rng.choice(examples)
            jobs.append((ex, lib, f"{os.path.basename(ex)} with mutated nn.mdl #{i} ({lib})"))
        else:
            ex, data = rng.choice(sources)
            path = os.path.join(work, f"mut-{i}.mdl")
            with open(path, "wb") as f:
                f.write(mutate(rng, data))
            jobs.append((path, args.stdlib, f"mutation #{i} of {os.path.basename(ex)} ({path})"))

    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for result in pool.map(lambda j: run(args.modelc, *j), jobs):
            if result:
                failures.append(result)
    print(f"{len(jobs)} runs, {len(failures)} failures")
    for f in failures[:50]:
        print("FAIL:", f)
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"inputs kept in {work}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
