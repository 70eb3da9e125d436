#!/usr/bin/python3
"""GPU-versus-CPU checks of a program modelc built with the cuda,cpu target.

Runs on any machine with a CUDA device and NumPy, with or without modelc
(the lit tests in this directory build the programs; on a GPU machine
without the compiler, bench/gpu_check.sh passes prebuilt ones):

  gpu_suite.py train PROG --steps N [--rtol R] [--losses-only]
                    [--data FIELD=PATH ...] [--eval-data FIELD=PATH ...]
      trains N steps from the same seed, without shuffling, on the CPU
      (--cpu) and on GPU 0 (--gpus 1); every step's loss and the final
      parameters must agree within R (relative, see compare.py); with
      --losses-only the parameters are not compared (f32 models whose
      parameters drift chaotically; their f64 twins compare them). An f16
      program's logged loss scales and skipped-step counts must be equal
      (both devices overflow at the same steps).
  gpu_suite.py infer PROG --weights W --input NAME=PATH [--rtol R]
      the infer entry's outputs on the GPU equal the CPU's within R.
  gpu_suite.py kernels PROG
      every kernel of every function on the GPU against its CPU
      counterpart on random arenas (the program's `kernelcheck` command).

Exit status 0 when everything agrees, 1 on a mismatch, 2 on usage errors.
Each check prints one line "PASS: ..." or "FAIL: ...".
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))

import numpy as np  # noqa: E402

import compare  # noqa: E402


def run(args, what):
    """Runs a program; a failure ends the suite with its output."""
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        print(f"FAIL: {what}: {' '.join(args)} exited with {r.returncode}\n"
              f"{r.stdout}{r.stderr}")
        sys.exit(1)
    return r


def scales(log):
    """[(step, loss_scale, skipped_steps)] of an f16 run's --log ([] otherwise)."""
    import json
    out = []
    with open(log) as f:
        for line in f:
            j = json.loads(line)
            if not j.get("eval") and "loss_scale" in j:
                out.append((j["step"], j["loss_scale"], j["skipped_steps"]))
    return out


def check_train(a):
    data = sum((["--data", d] for d in a.data), []) + sum(
        (["--eval-data", d] for d in a.eval_data), [])
    with tempfile.TemporaryDirectory() as tmp:
        logs, params = {}, {}
        for device, flags in (("cpu", ["--cpu"]), ("gpu", ["--gpus", "1"])):
            logs[device] = os.path.join(tmp, device + ".jsonl")
            params[device] = os.path.join(tmp, device + ".safetensors")
            # Each run checkpoints into a directory of its own: the
            # current directory may hold another run's (which a run
            # refuses) or be read-only.
            r = run([a.prog, "train", *flags, "--steps", str(a.steps),
                     "--seed", "0", "--set", "shuffle=false", "--set", "warmup=0", "--set",
                     "log.every=1", "--set", f"eval.every={a.steps * 10}",
                     "--checkpoint-dir", os.path.join(tmp, device + "-checkpoints"),
                     "--log", logs[device], "--save", params[device], *data],
                    f"train on the {device}")
            if device == "gpu" and "GPU" not in r.stderr:
                print(f"FAIL: the --gpus run did not say it ran on a GPU:\n"
                      f"{r.stderr}")
                sys.exit(1)
        ok = True
        pairs = [("losses", logs["cpu"], logs["gpu"])]
        if not a.losses_only:
            pairs.append(("parameters", params["cpu"], params["gpu"]))
        for what, x, y in pairs:
            code = compare.main([x, y, "--rtol", str(a.rtol)])
            print(("PASS" if code == 0 else "FAIL") +
                  f": {os.path.basename(a.prog)} {what} after {a.steps} steps, "
                  f"GPU vs CPU, rtol {a.rtol}")
            ok = ok and code == 0
        cpu, gpu = scales(logs["cpu"]), scales(logs["gpu"])
        if cpu or gpu:
            first = next((i for i, (c, g) in enumerate(zip(cpu, gpu))
                          if c != g), min(len(cpu), len(gpu)))
            same = cpu == gpu
            where = ("" if same else
                     f" (first difference, (step, scale, skipped): CPU "
                     f"{cpu[first:first + 1]}, GPU {gpu[first:first + 1]})")
            print(("PASS" if same else "FAIL") +
                  f": {os.path.basename(a.prog)} f16 loss scales and skipped "
                  f"steps, GPU vs CPU{where}")
            ok = ok and same
    return 0 if ok else 1


def check_infer(a):
    inputs = sum((["--input", i] for i in a.input), [])
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for device, flags in (("cpu", ["--cpu"]), ("gpu", ["--gpus", "1"])):
            out[device] = os.path.join(tmp, device + ".npz")
            run([a.prog, "infer", *flags, "--weights", a.weights, *inputs,
                 "--output", out[device]], f"infer on the {device}")
        cpu, gpu = np.load(out["cpu"]), np.load(out["gpu"])
        ok = sorted(cpu.files) == sorted(gpu.files)
        for name in cpu.files:
            x, y = cpu[name].astype(np.float64), gpu[name].astype(np.float64)
            bad = np.abs(x - y) > a.rtol * np.maximum(
                np.maximum(np.abs(x), np.abs(y)), 1e-2)
            good = x.shape == y.shape and not bad.any()
            ok = ok and good
            print(("PASS" if good else "FAIL") +
                  f": infer output {name} GPU vs CPU, rtol {a.rtol}" +
                  ("" if good else f" ({int(bad.sum())} elements differ)"))
    return 0 if ok else 1


def check_kernels(a):
    r = run([a.prog, "kernelcheck"], "kernelcheck")
    print(r.stdout, end="")
    print(f"PASS: {os.path.basename(a.prog)} kernels GPU vs CPU")
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="check", required=True)
    t = sub.add_parser("train")
    t.add_argument("prog")
    t.add_argument("--steps", type=int, default=20)
    t.add_argument("--rtol", type=float, default=2e-3)
    t.add_argument("--data", action="append", default=[])
    t.add_argument("--eval-data", action="append", default=[])
    t.add_argument("--losses-only", action="store_true",
                   help="compare the losses, not the final parameters")
    i = sub.add_parser("infer")
    i.add_argument("prog")
    i.add_argument("--weights", required=True)
    i.add_argument("--input", action="append", default=[])
    i.add_argument("--rtol", type=float, default=1e-4)
    k = sub.add_parser("kernels")
    k.add_argument("prog")
    a = p.parse_args(argv)
    return {"train": check_train, "infer": check_infer,
            "kernels": check_kernels}[a.check](a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
