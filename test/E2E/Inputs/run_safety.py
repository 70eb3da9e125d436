#!/usr/bin/env python3
"""Failures around a training run (issue 13), on a real program.

  run_safety.py PROGRAM WORKDIR SCENARIO

PROGRAM is examples/fashion_mlp.mdl built for the CPU. Each scenario runs it
the way a user would hit the failure, checks that it ends as docs/runtime/
cli.md says (the exit status, one clear line, nothing lost, nothing written
outside the named paths, no hang: every command has a timeout), and prints
`SCENARIO: ok` or the first failed check (exit 1). Scenarios:

  divergence   lr 1e6: exit 3 naming the last good checkpoint; resuming
               from it reaches the last finite loss again, bitwise
  preflight    --save into a missing directory, a --log that cannot be
               created: exit 2 before any step
  log-full     --log on /dev/full: exit 2 after the first logged step, with a
               checkpoint; --log-errors warn goes on
  stdout-full  stdout on /dev/full: exit 2
  links        links planted at the old temporary names of --save, a
               checkpoint and infer --output are not written through
  stale        another run's checkpoints are refused without --resume;
               --overwrite-checkpoints removes them
  fifo         a FIFO as --init or --data: exit 2 at once
  ulimit       an address-space limit too small for OpenBLAS: exit 2, no hang
  shrink       a mapped data file truncated during training: exit 2 naming it
  time-limit   --time-limit stops with a checkpoint that resumes bitwise
  restart-loop kill -9 and SIGTERM at random moments (before the first
               checkpoint, during checkpoint writes), relaunching the same
               --resume command: the final parameters are bitwise those of an
               uninterrupted run
  ro-dir       (root) a read-only checkpoint directory: exit 2 before any step
  full-ckpt    (root) the final checkpoint on a full disk: --save still written
  full-save    (root) --save on a full disk: the final checkpoint is kept
"""
import json
import os
import random
import signal
import stat
import subprocess
import sys
import time

import numpy as np

PROG, WORK, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
BASE = ["train", "--cpu", "--set", "warmup=1"]


class CheckFailed(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise CheckFailed(what + "".join("\n--- " + str(c) for c in context))


def run(args, timeout=120, stdout=None, preexec=None):
    """Runs PROG with `args`; returns (status, stdout, stderr)."""
    p = subprocess.run([PROG] + args, cwd=WORK, timeout=timeout,
                       stdout=stdout if stdout is not None else subprocess.PIPE,
                       stderr=subprocess.PIPE, preexec_fn=preexec, text=True)
    # An error message that ends in strerror(0) hides the reason (issue 13:
    # an ignored error code read "...: Success").
    check(": Success" not in p.stderr, "an error reads ': Success'", p.stderr)
    return p.returncode, p.stdout or "", p.stderr


def path(name):
    return os.path.join(WORK, name)


def error_lines(err):
    return [l for l in err.splitlines() if "error:" in l]


def losses(log):
    out = {}
    with open(path(log)) as f:
        for line in f:
            j = json.loads(line)
            if not j.get("eval"):
                out[j["step"]] = j["loss"]
    return out


def read(name):
    with open(path(name), "rb") as f:
        return f.read()


def divergence():
    args = BASE + ["--steps", "50", "--set", "lr=1e6", "--set", "log.every=1",
                   "--checkpoint-every", "1", "--checkpoint-dir", "dv"]
    code, _, err = run(args + ["--log", "a.jsonl"])
    check(code == 3, "exit 3 on divergence", code, err)
    first = losses("a.jsonl")
    s = max(first) + 1
    good = f"dv/step_{s - 2}"
    check(f"training diverged at step {s}" in err, "the step", err)
    check(f"the last good checkpoint is {good}: resume from it" in err,
          "names step s-2", err)
    check(len(error_lines(err)) == 1, "one error line", err)
    check(os.path.isdir(path(f"dv/step_{s - 1}.diverged")), "s-1 set aside")
    # Resumed as the message says, with the same settings: step s-1 again.
    code, _, err = run(args + ["--resume", "dv", "--log", "b.jsonl"])
    check(code == 3, "diverges again", code, err)
    check(f"resuming from {good}" in err, "resumed from the named one", err)
    second = losses("b.jsonl")
    check(min(second) == s - 1, "first step is s-1", second)
    check(second[s - 1] == first[s - 1] and np.isfinite(second[s - 1]),
          "step s-1's loss again, bitwise and finite", first, second)
    check(f"the last good checkpoint is {good}" in err,
          "the second message names a checkpoint too", err)


def preflight():
    for extra, what in (
            (["--save", "no/such/w.safetensors"], "--save no/such/w.safetensors:"
             " the directory no/such does not exist"),
            (["--log", "no/such/log.jsonl"], "--log no/such/log.jsonl: cannot "
             "open for writing: No such file or directory")):
        code, out, err = run(BASE + ["--steps", "3", "--checkpoint-dir", "pf"]
                             + extra)
        check(code == 2, "exit 2", extra, code, err)
        check(what in err, "the message", err)
        check("step " not in out, "before any step", out)
        check(len(error_lines(err)) == 1, "one line", err)


def log_full():
    code, out, err = run(BASE + ["--steps", "30", "--log", "/dev/full",
                                 "--checkpoint-dir", "lf"])
    check(code == 2, "exit 2", code, err)
    check("--log /dev/full: cannot write: No space left on device" in err,
          "names the log", err)
    check("after step 10; checkpoint lf/step_10 (continue with --resume lf)"
          in err, "stopped after the first logged step with a checkpoint", err)
    code, _, err = run(BASE + ["--steps", "12", "--log", "/dev/full",
                               "--log-errors", "warn", "--save", "lw.st"])
    check(code == 0 and "warning: --log /dev/full: cannot write" in err,
          "--log-errors warn goes on", code, err)
    check(os.path.exists(path("lw.st")), "and saves")


def stdout_full():
    with open("/dev/full", "w") as full:
        code, _, err = run(BASE + ["--steps", "10", "--checkpoint-dir", "sf"],
                           stdout=full)
    check(code == 2, "exit 2", code, err)
    check("cannot write to the standard output" in err, "says so", err)


def links():
    with open(path("victim"), "w") as f:
        f.write("precious")
    os.makedirs(path("lk"), exist_ok=True)
    os.symlink(path("victim"), path("w.safetensors.tmp"))
    os.symlink(path("victim"), path("lk/.step_5.tmp"))
    os.symlink(path("victim"), path("out.npy.tmp"))
    code, _, err = run(BASE + ["--steps", "5", "--save", "w.safetensors",
                               "--checkpoint-dir", "lk"])
    check(code == 0, "trains", code, err)
    np.save(path("images.npy"), np.zeros((3, 28, 28), np.uint8))
    code, _, err = run(["infer", "--cpu", "--weights", "w.safetensors",
                        "--input", "image=images.npy", "--output", "out.npy"])
    check(code == 0, "infers", code, err)
    check(read("victim") == b"precious", "the victim is untouched")
    for name in ("w.safetensors", "out.npy", "lk/step_5"):
        check(not os.path.islink(path(name)), name + " is not a link")
    check(np.load(path("out.npy")).shape == (3,), "the output is there")


def stale():
    code, _, err = run(BASE + ["--steps", "4", "--checkpoint-dir", "st"])
    check(code == 0, "first run", code, err)
    code, out, err = run(BASE + ["--steps", "4", "--checkpoint-dir", "st",
                                 "--set", "lr=0.01"])
    check(code == 2, "another run is refused", code, err)
    check("holds checkpoints of another run (st/step_4 is of lr=0.001" in err
          and "--resume st" in err and "--overwrite-checkpoints" in err,
          "the message names both ways on", err)
    check("step " not in out, "before any step")
    code, _, err = run(BASE + ["--steps", "4", "--checkpoint-dir", "st",
                               "--set", "lr=0.01", "--overwrite-checkpoints"])
    check(code == 0 and "removed 1 checkpoint from st" in err,
          "--overwrite-checkpoints", code, err)


def fifo():
    os.mkfifo(path("pipe"))
    for extra in (["--init", "pipe"], ["--data", "image=pipe"]):
        start = time.time()
        code, _, err = run(BASE + ["--steps", "3"] + extra, timeout=30)
        check(code == 2 and "pipe: not a regular file (a FIFO)" in err,
              "refused", extra, code, err)
        check(time.time() - start < 20, "at once")


def ulimit():
    # 64 MiB: the data cannot be mapped (then OpenBLAS's exit handler used to
    # wait forever); 100 MiB: an allocation fails (was "internal error:
    # std::bad_alloc"); 200 MiB: OpenBLAS's buffers do not fit (it spun).
    for mib in (64, 100, 200):
        def limit():
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
        code, _, err = run(BASE + ["--steps", "3", "--checkpoint-dir", "ul"],
                           timeout=60, preexec=limit)
        check(code == 2, f"exit 2 under {mib} MiB", code, err)
        check("memory" in err and "internal error" not in err,
              "says so", err)
        check(len(error_lines(err)) == 1, "one line", err)


def shrink():
    images = np.random.default_rng(0).integers(0, 255, (60000, 28, 28),
                                               dtype=np.uint8)
    np.save(path("big.npy"), images)
    p = subprocess.Popen([PROG] + BASE + ["--steps", "100000", "--set",
                                          "log.every=1", "--data",
                                          "image=big.npy"],
                         cwd=WORK, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    check(line.startswith("step "), "training started", line)
    os.truncate(path("big.npy"), 4096)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        raise CheckFailed("no end after the file shrank")
    check(p.returncode == 2, "exit 2", p.returncode, err)
    check("big.npy: the file became shorter while the program read it" in err,
          "names the file", err)


def time_limit():
    # A limit shorter than the start-up: every launch runs one step.
    code, _, err = run(BASE + ["--steps", "12", "--save", "tl_ref.st"])
    check(code == 0, "reference", code, err)
    cmd = BASE + ["--steps", "12", "--time-limit", "0.001s", "--resume", "tl",
                  "--save", "tl.st"]
    for runs in range(1, 40):
        code, _, err = run(cmd)
        check(code == 0, "each run exits 0", code, err)
        if os.path.exists(path("tl.st")):
            break
        check(f"time limit 0.001s reached after step {runs}; checkpoint "
              f"tl/step_{runs} (continue with --resume tl)" in err,
              "says how", err)
    check(runs == 12, "one step a launch", runs)
    check(read("tl.st") == read("tl_ref.st"), "bitwise the reference")


def restart_loop():
    # 200 steps with a checkpoint each take longer than any delay below, so
    # every launch but the last is killed; the last one runs to the end.
    steps = ["--steps", "200", "--checkpoint-every", "1", "--set",
             "log.every=5"]
    code, _, err = run(BASE + steps + ["--save", "rl_ref.st"])
    check(code == 0, "reference", code, err)
    cmd = [PROG] + BASE + steps + ["--resume", "rl", "--save", "rl.st"]
    rng = random.Random(13)
    during_write = before_first = 0
    for attempt in range(8):
        p = subprocess.Popen(cmd, cwd=WORK, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        # From before the data is loaded (the first one always) to well into
        # the checkpoint writes.
        delay = 0.02 if attempt == 0 else 0.05 + rng.random() * 0.9
        time.sleep(delay)
        sig = signal.SIGKILL if rng.random() < 0.8 else signal.SIGTERM
        if attempt in (2, 5):
            # Into a checkpoint write: as soon as its temporary directory
            # shows.
            sig, deadline = signal.SIGKILL, time.time() + 5
            while time.time() < deadline and not (
                    os.path.isdir(path("rl")) and
                    any(n.startswith(".step_") for n in os.listdir(path("rl")))):
                pass
        p.send_signal(sig)
        code = p.wait(timeout=60)
        err = p.stderr.read()
        check(code in (-signal.SIGKILL, -signal.SIGTERM, 143),
              "a killed run ends by the signal", sig, code, err)
        names = os.listdir(path("rl")) if os.path.isdir(path("rl")) else []
        during_write += any(n.startswith(".step_") for n in names)
        before_first += not any(n.startswith("step_") for n in names)
    p = subprocess.run(cmd, cwd=WORK, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    check(p.returncode == 0, "the last run finishes", p.returncode, p.stderr)
    check(during_write >= 1 and before_first >= 1,
          "killed during a checkpoint write and before the first checkpoint",
          during_write, before_first)
    check(read("rl.st") == read("rl_ref.st"), "bitwise the uninterrupted run")


def tmpfs(name, size, options=""):
    os.makedirs(path(name), exist_ok=True)
    opts = f"size={size}" + ("," + options if options else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", path(name)],
                   check=True)


def umount(name):
    subprocess.run(["umount", path(name)], check=True)


def ro_dir():
    tmpfs("ro", "1m", "ro")
    try:
        code, out, err = run(BASE + ["--steps", "3", "--checkpoint-dir", "ro"])
        check(code == 2, "exit 2", code, err)
        check("checkpoint directory ro/step_0: cannot write there" in err
              and "Read-only file system" in err, "says why", err)
        check("step " not in out, "before any step", out)
    finally:
        umount("ro")


def full_ckpt():
    tmpfs("small", "1m")
    try:
        code, _, err = run(BASE + ["--steps", "5", "--checkpoint-dir", "small",
                                   "--save", "fc.st"])
        check("warning: small has" in err, "warned at the start", err)
        check(code == 2, "exit 2", code, err)
        check("the final checkpoint failed" in err
              and "No space left on device" in err
              and "the trained parameters are in fc.st" in err, "says", err)
        check(os.path.getsize(path("fc.st")) > 800000, "--save written")
        check(os.listdir(path("small")) == [], "nothing half-written left",
              os.listdir(path("small")))
    finally:
        umount("small")


def full_save():
    tmpfs("small2", "512k")
    try:
        code, _, err = run(BASE + ["--steps", "5", "--checkpoint-dir", "fs",
                                   "--save", "small2/w.st"])
        check(code == 2, "exit 2", code, err)
        check("--save failed" in err and "No space left on device" in err and
              "the trained parameters are in the final checkpoint fs/step_5"
              in err, "says", err)
        check(os.path.exists(path("fs/step_5/model.safetensors")), "kept")
        check(os.listdir(path("small2")) == [], "no temporary left",
              os.listdir(path("small2")))
    finally:
        umount("small2")


SCENARIOS = {
    "divergence": divergence, "preflight": preflight, "log-full": log_full,
    "stdout-full": stdout_full, "links": links, "stale": stale, "fifo": fifo,
    "ulimit": ulimit, "shrink": shrink, "time-limit": time_limit,
    "restart-loop": restart_loop, "ro-dir": ro_dir, "full-ckpt": full_ckpt,
    "full-save": full_save,
}

if __name__ == "__main__":
    os.makedirs(WORK, exist_ok=True)
    try:
        SCENARIOS[SCENARIO]()
    except CheckFailed as e:
        print(f"{SCENARIO}: FAILED: {e}")
        sys.exit(1)
    print(f"{SCENARIO}: ok")
