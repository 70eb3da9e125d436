#!/usr/bin/python3
"""SIGTERM to a run on CPU ranks (issue 15): every rank finishes the step,
rank 0 writes one checkpoint, the program exits 143; --resume then ends
bitwise where an uninterrupted run ends.

Usage: ranks_signal.py PROGRAM WORKDIR ARGS... (ARGS are the run's flags,
without --log, --checkpoint-dir, --resume and --save).
"""
import json
import os
import signal
import subprocess
import sys
import time


def main():
    program, work, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    log = os.path.join(work, "sig.jsonl")
    ck = os.path.join(work, "sig-ck")
    run = subprocess.Popen([program, *args, "--set", "log.every=1", "--log", log,
                            "--checkpoint-dir", ck],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Wait until the ranks have trained two steps (at most 120 s), then stop them.
    deadline = time.time() + 120
    while time.time() < deadline and run.poll() is None:
        try:
            steps = [json.loads(line)["step"] for line in open(log) if line.strip()]
        except (OSError, ValueError):
            steps = []
        if len(steps) >= 2:
            break
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)
    err = run.communicate(timeout=120)[1]
    print("exit", run.returncode if run.returncode >= 0 else 128 - run.returncode)
    print(err.strip().splitlines()[-1])
    kept = sorted(os.listdir(ck))
    print("checkpoints", len(kept))
    resumed = subprocess.run([program, *args, "--resume", ck, "--save",
                              os.path.join(work, "sig-resumed.safetensors")],
                             capture_output=True, text=True)
    print("resumed exit", resumed.returncode)
    whole = subprocess.run([program, *args, "--save", os.path.join(work, "sig-whole.safetensors")],
                           capture_output=True, text=True)
    print("whole exit", whole.returncode)
    same = open(os.path.join(work, "sig-resumed.safetensors"), "rb").read() == \
        open(os.path.join(work, "sig-whole.safetensors"), "rb").read()
    print("bitwise" if same else "differ")


if __name__ == "__main__":
    main()
