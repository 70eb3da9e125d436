#!/usr/bin/env python3
"""Robustness: random well-typed models through modelc and the programs it makes.

For each seed, gen_program.py writes one `.mdl` program (built-ins, stdlib
layers, user blocks, several entries; the program depends only on the seed)
and the data it needs. This script builds it for `cuda,cpu` (PTX and ptxas
for sm_80 and sm_90) and for `cpu`, writes the data files, runs `describe`,
every train entry and every infer entry on the CPU, and checks that every
exit is 0 and every loss, saved weight and infer output is finite. Each
program is classified as

  ok, rejected (modelc exit 1 with a source diagnostic), internal (modelc
  exit 3, a backend error such as a failing link, or an internal-error
  message anywhere), signal, timeout, run-failed (a program exits non-zero),
  nonfinite (a NaN or inf in a loss, metric, weight or output)

and a failure is shrunk (lines deleted, whole blocks and entries first, and
small edits) while it fails the same way; the original, the smallest
program found and a log of the commands go to the output directory.
docs/testing.md describes the generator, the classes and longer runs.

Usage:
  gen_models.py --seeds 0:300 [--modelc PATH] [--runtime-dir DIR] [--stdlib DIR]
                [--jobs J] [--out DIR] [--full | --target-only cpu] [--fast]
  gen_models.py --seeds S --emit-only          print the program of seed S
  gen_models.py --seeds S --replay FILE        run FILE with the data of seed S
"""
import argparse
import concurrent.futures
import copy
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_program  # noqa: E402

try:
    import numpy as np
except ImportError:  # --emit-only needs no NumPy
    np = None

CLASSES = ("ok", "rejected", "internal", "signal", "timeout", "run-failed", "nonfinite")
INTERNAL_MARKERS = ("internal error", "op left after", "LLVM ERROR", "Assertion",
                    "PLEASE submit", "Stack dump", "terminate called",
                    "failed to verify", "verification failed", "failed to legalize")
NP_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "i32": "int32",
             "i64": "int64", "u8": "uint8", "u16": "uint16", "bool": "bool"}
ST_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2"}
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class Stop(Exception):
    """Ends a run early: the step being shrunk has passed."""


class Failure(Exception):
    """The first thing that went wrong with a program: its class, the step
    (e.g. `modelc cuda,cpu`, `train`) and the first line of what it said."""

    def __init__(self, cls, step, line):
        super().__init__(f"{cls}: {step}: {line}")
        self.cls, self.step, self.line = cls, step, line

    def signature(self):
        masked = re.sub(r"%[\w.#]+", "%V", re.sub(r"0x[0-9a-fA-F]+", "0x", self.line))
        return self.cls, re.sub(r"\d+", "N", masked)


# -- data and parameter files ----------------------------------------------------

def make_array(spec, shape, rng):
    """Values as the program expects them: floats in [-1, 1], integers in
    [lo, hi), and ignore_index at inner positions of label rows."""
    dtype = NP_DTYPES[spec["dtype"]]
    if spec["dtype"] == "bool":
        return rng.random(shape) < 0.5
    if spec["dtype"] in ("f32", "f64", "f16"):
        return rng.uniform(-1, 1, shape).astype(dtype)
    a = rng.integers(spec["lo"], spec["hi"], shape).astype(dtype)
    if spec.get("ignore") is not None and len(shape) >= 2 and shape[-1] >= 3:
        mask = rng.random(shape) < 0.3
        mask[..., 0] = mask[..., -1] = False
        a[mask] = spec["ignore"]
    return a


def write_data(meta, wd):
    for path, spec in meta["files"].items():
        rng = np.random.default_rng([meta["seed"], zlib.crc32(path.encode())])
        full = os.path.join(wd, path)
        if spec["kind"] == "npz":
            np.savez(full, **{k: make_array(s, s["shape"], rng)
                              for k, s in spec["members"].items()})
        elif spec["kind"] == "raw":
            make_array(spec, spec["shape"], rng).tofile(full)
        else:
            np.save(full, make_array(spec, spec["shape"], rng))


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        if info["dtype"] == "BF16":
            raw = np.frombuffer(data[lo:hi], "<u2").astype("<u4") << 16
            out[name] = raw.view("<f4")
        else:
            out[name] = np.frombuffer(data[lo:hi], ST_DTYPES.get(info["dtype"], "<f4"))
    return out


def write_safetensors(path, params, seed):
    """Parameters for an infer-only program, drawn like their initialisers
    (as `describe --json` lists them)."""
    rng = np.random.default_rng(seed)
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for p in params:
        shape, args, init = p["shape"], p.get("init_args", []), p.get("init", "")
        if init == "zeros":
            a = np.zeros(shape)
        elif init in ("ones", "full"):
            a = np.full(shape, args[0] if args else 1.0)
        elif init == "uniform":
            a = rng.uniform(args[0] if args else 0, args[1] if len(args) > 1 else 1, shape)
        elif init in ("normal", "truncated_normal"):
            a = np.clip(rng.normal(0, args[-1] if args else 1, shape), -2, 2)
        else:
            a = rng.uniform(-0.3, 0.3, shape)
        code = {"f32": "F32", "f64": "F64", "f16": "F16"}.get(p["dtype"], "F32")
        blob = a.astype({"F32": "<f4", "F64": "<f8", "F16": "<f2"}[code]).tobytes()
        header[p["name"]] = {"dtype": code, "shape": shape,
                             "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def input_file(meta, wd, entry, inp, batch):
    """The file for an infer input: the generator's, or (when the program
    was edited by hand or shrunk into another shape) one made from the
    input's declared type, with ids in the ranges `describe` checks."""
    path = meta["infer_inputs"].get(entry["name"], {}).get(inp["name"])
    if path:
        spec = meta["files"].get(path)
        untyped = not inp["dtype"]   # as describe shows them, for want of a type
        if spec and (untyped or (spec["dtype"] == inp["dtype"] and
                                 spec["shape"][1:] == inp["shape"][1:])):
            return path
    if not inp["dtype"]:
        raise Failure("run-failed", "describe",
                      f"describe gives infer input '{inp['name']}' no type")
    path = f"{entry['name']}_{inp['name']}.gen.npy"
    checks = inp.get("checks") or []
    hi = min([c["end"] for c in checks] + [4])
    spec = {"dtype": inp["dtype"], "lo": 0, "hi": max(hi, 1)}
    rng = np.random.default_rng(meta["seed"])
    np.save(os.path.join(wd, path), make_array(spec, [batch] + inp["shape"][1:], rng))
    return path


def nonfinite(arrays):
    for name, a in arrays:
        a = np.asarray(a)
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            return name
    return None


# -- running one program -------------------------------------------------------

class Runner:
    """Builds and runs one program in a work directory, logging each
    command and what it printed; raises Failure at the first problem."""

    def __init__(self, opts, wd, until=None):
        self.opts, self.wd, self.until = opts, wd, until
        self.log = []

    def cmd(self, argv, step, modelc=False):
        self.log.append("$ " + " ".join(argv))
        timeout = self.opts.timeout
        try:
            p = subprocess.run(argv, cwd=self.wd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.log.append(f"(no exit within {timeout} s)")
            raise Failure("timeout", step, f"no exit within {timeout} s")
        out = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        self.log.append((out + err).rstrip() + f"\n(exit {p.returncode})")
        lines = [ln.strip() for ln in (err + out).splitlines() if ln.strip()]
        if p.returncode < 0:
            raise Failure("signal", step, f"killed by signal {-p.returncode}")
        marked = [ln for ln in lines if any(m in ln for m in INTERNAL_MARKERS)]
        if marked:
            raise Failure("internal", step, marked[0])
        if p.returncode == 0:
            return out
        diagnostics = [ln for ln in lines if re.search(r":\d+:\d+: error: ", ln)]
        if modelc:
            # Exit 1 with a source diagnostic is a program modelc refuses;
            # anything else (a failing link, exit 3) is modelc's own trouble.
            if p.returncode == 1 and diagnostics:
                raise Failure("rejected", step, diagnostics[0])
            detail = [ln for ln in lines if "undefined reference" in ln] + \
                [ln for ln in lines if "error" in ln] + lines + ["(no output)"]
            raise Failure("internal", step, detail[0])
        errors = [ln for ln in lines if "error" in ln] or lines or ["(no output)"]
        if p.returncode == 3 and re.search(r"NaN|nan|inf|diverge", err + out):
            raise Failure("nonfinite", step, errors[0])
        raise Failure("run-failed", step, f"exit {p.returncode}: {errors[0]}")

    def stop(self, step):
        """Ends the run after `step` when shrinking a failure of that step."""
        if self.until == step:
            raise Stop

    def modelc(self, target, link):
        o = self.opts
        argv = [o.modelc, "P.mdl", "--stdlib", o.stdlib]
        if o.runtime_dir:
            argv += ["--runtime-dir", o.runtime_dir]
        if target == "cpu":
            argv += ["--target", "cpu"]
        argv += ["-o", "P" if target != "cpu" else "P.cpu"] if link else \
            ["--emit=obj", "-o", os.devnull]
        step = f"modelc {target}"
        self.cmd(argv, step, modelc=True)
        self.stop(step)

    def run(self, text, meta):
        with open(os.path.join(self.wd, "P.mdl"), "w") as f:
            f.write(text)
        o = self.opts
        exes = []
        if o.target_only != "cpu" and self.until != "modelc cpu":
            self.modelc("cuda,cpu", link=not o.fast)
            if not o.fast:
                exes.append("./P")
        if o.target_only != "cuda,cpu":
            link = o.full or o.fast or o.target_only == "cpu"
            self.modelc("cpu", link=link)
            if link:
                exes.append("./P.cpu")
        if exes:
            write_data(meta, self.wd)
        for exe in exes:
            self.run_exe(exe, meta)

    def run_exe(self, exe, meta):
        desc = json.loads(self.cmd([exe, "describe", "--json"], "describe"))
        weights = None
        for t in desc["train"]:
            for name in ("L.jsonl", "W.safetensors"):
                if os.path.exists(os.path.join(self.wd, name)):
                    os.remove(os.path.join(self.wd, name))
            self.cmd([exe, "train", t["name"], "--cpu", "--log", "L.jsonl",
                      "--save", "W.safetensors", "--set", "log.every=1"], "train")
            with open(os.path.join(self.wd, "L.jsonl")) as f:
                records = [json.loads(ln) for ln in f if ln.strip()]
            values = [(f"{k} at step {r.get('step')}", v) for r in records
                      for k, v in r.items() if isinstance(v, float) and
                      not k.endswith("_per_s")]
            bad = nonfinite(values)
            if bad:
                raise Failure("nonfinite", "train", f"train {t['name']}: {bad} is not finite")
            bad = nonfinite(read_safetensors(os.path.join(self.wd, "W.safetensors")).items())
            if bad:
                raise Failure("nonfinite", "train", f"train {t['name']}: saved {bad} is not finite")
            weights = "W.safetensors"
        if desc["parameters"] and weights is None:
            weights = "G.safetensors"
            write_safetensors(os.path.join(self.wd, weights), desc["parameters"], meta["seed"])
        for e in desc["infer"]:
            argv = [exe, "infer", e["name"], "--cpu", "--output", "O.npz"]
            for inp in e["inputs"]:
                path = input_file(meta, self.wd, e, inp, e["batch"])
                argv += ["--input", f"{inp['name']}={path}"]
            if desc["parameters"]:
                argv += ["--weights", weights]
            self.cmd(argv, "infer")
            with np.load(os.path.join(self.wd, "O.npz")) as z:
                bad = nonfinite((k, z[k]) for k in z.files)
            if bad:
                raise Failure("nonfinite", "infer", f"infer {e['name']}: output {bad} is not finite")


def attempt(opts, text, meta, until=None, keep=None):
    """(Failure or None, log text) for one run of `text`."""
    wd = tempfile.mkdtemp(prefix=f"gen-{meta['seed']}-", dir=opts.work_dir)
    runner = Runner(opts, wd, until)
    failure = None
    try:
        runner.run(text, meta)
    except Failure as f:
        failure = f
    except Stop:
        pass
    finally:
        if keep:
            shutil.copytree(wd, keep, dirs_exist_ok=True)
        shutil.rmtree(wd, ignore_errors=True)
    return failure, "\n".join(runner.log)


# -- shrinking -------------------------------------------------------------------

def groups(lines):
    """Line ranges [start, end) that can be deleted as a unit: each `{ ... }`
    (blocks and entries, then nested ones), then single statement lines."""
    spans, stack = [], []
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s.startswith("}") and stack and not s.endswith("{"):
            start = stack.pop()
            spans.append((start, i + 1))
        elif s.endswith("{") and not s.startswith("}"):
            stack.append(i)
    spans.sort(key=lambda sp: (sp[0] != 0 and lines[sp[0]].startswith(" "), sp[0]))
    singles = [(i, i + 1) for i, ln in enumerate(lines)
               if ln.strip() and "{" not in ln and "}" not in ln
               and not ln.startswith(("import", "#"))]
    return spans + singles[::-1]


def edits(lines):
    """Programs one small edit away, each a smaller program if it still
    fails: `let a = b` inlined into the uses of a; one term of a `+` chain
    (a loss) dropped; one keyword argument dropped; `let v = f(a, ...)`
    replaced by `let v = a` (an op taken out of a chain when the operand
    has the result's type)."""
    for i, ln in enumerate(lines):
        alias = re.match(r"\s*let (\w+) = ([\w.]+)$", ln)
        if alias:
            a, b = alias.groups()
            yield lines[:i] + [re.sub(rf"\b{a}\b(?!\.)", b, x) for x in lines[i + 1:]]
        rhs = re.match(r"(\s*(?:let \w+|loss|output \w+) = )(.+)$", ln)
        if not rhs:
            continue
        head, expr = rhs.groups()
        terms = expr.split(" + ")
        if len(terms) > 1 and all(t.count("(") == t.count(")") for t in terms):
            for k in range(len(terms)):
                yield lines[:i] + [head + " + ".join(terms[:k] + terms[k + 1:])] + lines[i + 1:]
        for m in re.finditer(r", \w+ = [\w.\-\"]+(?=[,)])", ln):
            yield lines[:i] + [ln[:m.start()] + ln[m.end():]] + lines[i + 1:]
        if head.strip().startswith("let"):
            for name in dict.fromkeys(re.findall(r"\b(?:v\d+|x\d?|y|z|batch\.\w+)\b", expr)):
                if name != expr:
                    yield lines[:i] + [head + name] + lines[i + 1:]


def shrink(opts, text, meta, failure):
    """The smallest program found that fails with the same signature,
    within opts.shrink_attempts runs and opts.shrink_seconds."""
    lines = text.rstrip("\n").split("\n")
    want = failure.signature()
    until = failure.step if failure.step.startswith("modelc") else None
    deadline = time.monotonic() + opts.shrink_seconds
    tries = 0
    run = (opts, until)

    def same(trial):
        nonlocal tries
        tries += 1
        f, _ = attempt(run[0], "\n".join(trial) + "\n", meta, run[1])
        return f is not None and f.signature() == want

    # A cheaper pipeline where it fails the same way: the cuda,cpu build to
    # an object file only, or the CPU build alone (a failing link, a run).
    cpu_only = copy.copy(opts)
    cpu_only.full, cpu_only.fast, cpu_only.target_only = False, False, "cpu"
    obj_only = copy.copy(opts)
    obj_only.fast, obj_only.target_only = True, None
    cheaper = [(cpu_only, "modelc cpu" if until else None)]
    if failure.step == "modelc cuda,cpu":
        cheaper.insert(0, (obj_only, until))
    elif failure.step == "modelc cpu":
        cheaper = []
    for run in cheaper:
        if same(lines):
            break
    else:
        run = (opts, until)

    def budget():
        return tries < opts.shrink_attempts and time.monotonic() < deadline

    progress = True
    while progress and budget():
        progress = False
        pos = 0
        while budget():
            cands = groups(lines)
            if pos >= len(cands):
                break
            start, end = cands[pos]
            trial = lines[:start] + lines[end:]
            if same(trial):
                lines, progress = trial, True
            else:
                pos += 1
        for trial in edits(lines):
            if not budget():
                break
            if same(trial):
                lines, progress = trial, True
                break
    return "\n".join(lines) + "\n", tries


# -- the driver --------------------------------------------------------------------

def check_seed(opts, seed):
    """(seed, class, message) after running seed's program, shrinking and
    writing the files of a failure."""
    text, meta = gen_program.generate(seed)
    failure, log = attempt(opts, text, meta)
    if failure is None:
        return seed, "ok", ""
    os.makedirs(opts.out, exist_ok=True)
    base = os.path.join(opts.out, f"seed-{seed}")
    with open(base + ".mdl", "w") as f:
        f.write(text)
    small, tries = (text, 0) if opts.no_shrink else shrink(opts, text, meta, failure)
    with open(base + ".min.mdl", "w") as f:
        f.write(small)
    _, small_log = attempt(opts, small, meta)
    with open(base + ".log", "w") as f:
        f.write(f"seed {seed}: {failure}\n\n== original ==\n{log}\n\n"
                f"== minimized ({tries} shrink runs, {small.count(chr(10))} lines) ==\n"
                f"{small_log}\n")
    return seed, failure.cls, f"{failure.step}: {failure.line} ({base}.min.mdl, " \
                              f"{small.count(chr(10))} lines)"


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        if ":" in part:
            a, b = part.split(":")
            seeds += range(int(a), int(b))
        else:
            seeds.append(int(part))
    return seeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", required=True, help="A:B (B excluded), S, or a list S,T,A:B")
    ap.add_argument("--modelc", default="modelc")
    ap.add_argument("--runtime-dir", help="passed to modelc (default: its own)")
    ap.add_argument("--stdlib", default=os.path.join(ROOT, "stdlib"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", default="gen-failures", help="where failures are written")
    ap.add_argument("--work-dir", help="parent of the temporary work directories")
    ap.add_argument("--full", action="store_true",
                    help="link the cpu build too and run both executables")
    ap.add_argument("--target-only", choices=["cpu", "cuda,cpu"],
                    help="build and run only this target")
    ap.add_argument("--fast", action="store_true",
                    help="cuda,cpu only to an object file (PTX, ptxas); link and run cpu")
    ap.add_argument("--emit-only", action="store_true", help="print the programs, run nothing")
    ap.add_argument("--replay", metavar="FILE",
                    help="run FILE (e.g. an edited seed-S.min.mdl) with the data of --seeds S")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per command")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--shrink-attempts", type=int, default=150)
    ap.add_argument("--shrink-seconds", type=float, default=60)
    opts = ap.parse_args()
    seeds = parse_seeds(opts.seeds)
    if opts.emit_only:
        for s in seeds:
            sys.stdout.write(gen_program.generate(s)[0])
        return 0
    if np is None:
        print("gen_models.py: NumPy is needed to run programs (/usr/bin/python3 has it)",
              file=sys.stderr)
        return 2
    if shutil.which(opts.modelc) is None:
        print(f"gen_models.py: no modelc at {opts.modelc}", file=sys.stderr)
        return 2
    opts.modelc = os.path.abspath(shutil.which(opts.modelc))
    opts.stdlib = os.path.abspath(opts.stdlib)
    if opts.runtime_dir:
        opts.runtime_dir = os.path.abspath(opts.runtime_dir)
    opts.out = os.path.abspath(opts.out)
    if opts.replay:
        with open(opts.replay) as f:
            text = f.read()
        failure, log = attempt(opts, text, gen_program.generate(seeds[0])[1])
        print(log)
        print(failure or "ok")
        return 1 if failure else 0

    counts = dict.fromkeys(CLASSES, 0)
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        for seed, cls, msg in pool.map(lambda s: check_seed(opts, s), seeds):
            counts[cls] += 1
            if cls != "ok":
                print(f"seed {seed}: {cls}: {msg}", flush=True)
    print(f"{len(seeds)} programs: " + ", ".join(f"{counts[c]} {c}" for c in CLASSES))
    return 0 if counts["ok"] == len(seeds) else 1


if __name__ == "__main__":
    sys.exit(main())
