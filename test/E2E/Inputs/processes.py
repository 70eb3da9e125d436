#!/usr/bin/python3
"""Runs of two processes on this machine (issue 15; docs/runtime/
distributed.md, "Several processes"), each one node of a 2-node run on a
free port of 127.0.0.1.

Usage: processes.py MODE PROGRAM WORKDIR [I] ARGS...  (ARGS: the run's flags;
I: the node that kill and term stop)

  flags     --nnodes 2 --node-rank I --master 127.0.0.1:PORT; prints each
            process's exit status
  torchrun  the same from torchrun's variables (RANK, WORLD_SIZE,
            LOCAL_RANK, MASTER_ADDR, MASTER_PORT), no flags
  kill I    kill -9 of node I once node 0 logged 25 steps (ARGS must hold
            --log, a checkpoint directory and checkpoint.every): the other
            node's status, its last line and how long it took to exit after
            the kill; then both nodes again with --resume: their statuses
  stop I    SIGSTOP of node I once node 0 logged 25 steps (its sockets stay
            open, so no collective fails): the other node's status, its
            last line and whether it exited within 60 s of the stop; then
            node I is killed
  missing   node 0 alone (node 1 never starts): its status and last line;
            then node 1 alone: the same
  term I    SIGTERM to node I once node 0 logged 3 steps: both statuses,
            each last line
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(program, args, node, port, mode, extra_env=None):
    env = dict(os.environ)
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    if mode == "torchrun":
        env.update(RANK=str(node), WORLD_SIZE="2", LOCAL_RANK=str(node),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        flags = []
    else:
        flags = ["--nnodes", "2", "--node-rank", str(node), "--master", f"127.0.0.1:{port}"]
    env.update(extra_env or {})
    return subprocess.Popen([program, *args, *flags], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def status(proc):
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode


def last_line(err):
    lines = err.strip().splitlines()
    return lines[-1] if lines else ""


def logged_steps(log):
    try:
        return [json.loads(line)["step"] for line in open(log) if line.strip()]
    except (OSError, ValueError):
        return []


def flag_value(args, name):
    return args[args.index(name) + 1]


def wait_for_steps(log, n, procs, limit=120):
    deadline = time.time() + limit
    while time.time() < deadline and all(p.poll() is None for p in procs):
        if len(logged_steps(log)) >= n:
            return True
        time.sleep(0.02)
    return False


def start_running(program, args, steps):
    """Both nodes, once node 0 logged `steps` steps (its --log)."""
    port = free_port()
    procs = [start(program, args, node, port, "flags") for node in (0, 1)]
    ok = wait_for_steps(flag_value(args, "--log"), steps, procs)
    print("running" if ok else f"never logged {steps} steps")
    return procs


def pair(program, args, mode):
    port = free_port()
    procs = [start(program, args, node, port, mode) for node in (0, 1)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    print("exit", *[status(p) for p in procs])
    for node, err in enumerate(errs):
        if status(procs[node]) != 0:
            print(f"node {node}:", last_line(err))


def survive(procs, victim, sig, then=None):
    """Sends `sig` to node `victim` once both run, calls `then` on it, then
    prints how the other node ended and how long after the signal."""
    procs[victim].send_signal(sig)
    sent = time.time()
    if then:
        then(procs[victim])
    survivor = procs[1 - victim]
    try:
        err = survivor.communicate(timeout=120)[1]
    except subprocess.TimeoutExpired:
        survivor.kill()
        err = survivor.communicate()[1]
        print("survivor hung")
    took = time.time() - sent
    print("survivor exit", status(survivor))
    print("survivor:", last_line(err))
    print("within 60 s" if took < 60 else f"took {took:.0f} s")


def kill(program, args, victim):
    survive(start_running(program, args, 25), victim, signal.SIGKILL,
            lambda p: p.wait())
    port = free_port()
    resumed = [start(program, [*args, "--resume"], node, port, "flags") for node in (0, 1)]
    errs = [p.communicate(timeout=300)[1] for p in resumed]
    print("resumed exit", *[status(p) for p in resumed])
    print(*[line for line in errs[0].splitlines() if "resuming from" in line])
    for node, err in enumerate(errs):
        if status(resumed[node]) != 0:
            print(f"node {node}:", last_line(err))


def stop(program, args, victim):
    procs = start_running(program, args, 25)
    survive(procs, victim, signal.SIGSTOP)
    procs[victim].kill()
    procs[victim].wait()


def missing(program, args):
    for node in (0, 1):
        alone = start(program, args, node, free_port(), "flags")
        err = alone.communicate(timeout=120)[1]
        print(f"node {node} alone: exit", status(alone))
        print(f"node {node}:", last_line(err))


def term(program, args, victim):
    procs = start_running(program, args, 3)
    procs[victim].send_signal(signal.SIGTERM)
    errs = [p.communicate(timeout=120)[1] for p in procs]
    print("exit", *[status(p) for p in procs])
    for node, err in enumerate(errs):
        print(f"node {node}:", last_line(err))


def main():
    mode, program, work = sys.argv[1], sys.argv[2], sys.argv[3]
    rest = sys.argv[4:]
    os.chdir(work)
    if mode in ("flags", "torchrun"):
        pair(program, rest, mode)
    elif mode == "kill":
        kill(program, rest[1:], int(rest[0]))
    elif mode == "stop":
        stop(program, rest[1:], int(rest[0]))
    elif mode == "missing":
        missing(program, rest)
    elif mode == "term":
        term(program, rest[1:], int(rest[0]))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
