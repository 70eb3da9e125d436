#!/usr/bin/python3
"""Compares two safetensors files, or two loss logs, element by element within a relative tolerance.

An element passes when |a − b| <= rtol · max(|a|, |b|, atol_floor): relative
for ordinary values, absolute (rtol·atol_floor) near zero. NaN or inf never
passes. Prints the worst element with its tensor name and index, and exits 1
on any mismatch (also on differing names or shapes), 2 on unreadable input.

Loss logs may be train_ref.py's JSON ({"loss": [...], "lr": [...]}, entry i is
step i+1) or a program's --log JSONL (one {"step", "loss", "lr", ...} per logged
step). Every step of the shorter log must be in the other; the values compared
are "loss" and, when both have them, "lr", f16's "loss_scale" and
"skipped_steps" and the eval records' loss ("eval_loss"), indexed by step. The last two must be equal exactly: both
runs must skip the same steps at the same scales.
"""
import argparse
import json
import sys

import numpy as np

import safetensors_np

SERIES = ("loss", "lr", "loss_scale", "skipped_steps", "eval_loss")
EXACT = ("loss_scale", "skipped_steps")


def parse_args(argv):
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance (default 1e-4)")
    p.add_argument("--atol-floor", type=float, default=1e-2,
                   help="below this magnitude the check is absolute, rtol*floor (default 1e-2)")
    return p.parse_args(argv)


def load_tensors(path):
    """{name: float64 array} of a safetensors file."""
    tensors, _ = safetensors_np.load(path)
    return {n: t.astype(np.float64) for n, t in tensors.items()}


def load_log(path):
    """{"loss": {step: value}, "lr": {...}} from train_ref JSON or a program's JSONL log."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("loss"), list):
        return {key: dict(enumerate(values, 1)) for key, values in whole.items()
                if key in SERIES and isinstance(values, list)}
    series = {key: {} for key in SERIES}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            step = record["step"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise ValueError(f"{path}:{number}: neither train_ref JSON nor a JSONL log with 'step'") from None
        # An eval record ({"eval": true}) has its own series, eval_loss.
        for key in SERIES:
            name = "eval_" + key if record.get("eval") else key
            if key in record and name in series:
                series[name][step] = record[key]
    return {key: values for key, values in series.items() if values}


def logs_as_tensors(a, b):
    """The two logs as aligned arrays per series, and the steps each array position stands for."""
    shorter, longer = sorted((a, b), key=lambda log: len(log.get("loss", {})))
    missing = sorted(set(shorter.get("loss", {})) - set(longer.get("loss", {})))
    if missing or not shorter.get("loss"):
        raise ValueError(f"the logs share no loss steps, or one has steps the other lacks: {missing[:5]}")
    out_a, out_b, steps = {}, {}, {}
    for key in SERIES:
        if key in a and key in b:
            steps[key] = sorted(a[key].keys() & b[key].keys())
            out_a[key] = np.array([a[key][s] for s in steps[key]], np.float64)
            out_b[key] = np.array([b[key][s] for s in steps[key]], np.float64)
    return out_a, out_b, steps


def error_ratios(a, b, rtol, floor):
    """|a−b| / (rtol·max(|a|, |b|, floor)) per element: above 1 fails; inf where either is not finite."""
    allowance = rtol * np.maximum(np.maximum(np.abs(a), np.abs(b)), floor)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(a) & np.isfinite(b), np.abs(a - b) / allowance, np.inf)


def compare(a, b, rtol, floor, steps=None):
    """Prints the failing counts and the worst element; returns True when everything passes."""
    if a.keys() != b.keys():
        only_a, only_b = sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
        print(f"MISMATCH names: only in a {only_a}, only in b {only_b}")
        return False
    ok, worst = True, (-1.0, None, 0)
    for name in sorted(a):
        if a[name].shape != b[name].shape:
            print(f"MISMATCH shape of {name}: {list(a[name].shape)} vs {list(b[name].shape)}")
            ok = False
            continue
        if a[name].size == 0:
            continue
        if name in EXACT:
            ratios = np.where(a[name] == b[name], 0.0, np.inf)
        else:
            ratios = error_ratios(a[name], b[name], rtol, floor)
        bad = int((ratios > 1).sum())
        if bad:
            print(f"MISMATCH {name}: {bad} of {a[name].size} elements outside rtol {rtol:g}")
            ok = False
        flat = int(np.argmax(ratios))
        if ratios.flat[flat] > worst[0]:
            worst = (ratios.flat[flat], name, flat)
    _, name, flat = worst
    if name is not None:
        where = steps[name][flat] if steps else list(np.unravel_index(flat, a[name].shape))
        va, vb = a[name].flat[flat], b[name].flat[flat]
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = abs(va - vb) / max(abs(va), abs(vb), floor)
        print(f"worst {name}[{where}]: a={float(va)!r} b={float(vb)!r} rel={rel:.3e} "
              f"(rtol {rtol:g}, floor {floor:g})")
    print("OK" if ok else "FAILED")
    return ok


def main(argv=None):
    """Entry point: 0 when the files agree, 1 when they do not, 2 when one cannot be read."""
    args = parse_args(argv)
    try:
        if args.a.endswith(".safetensors") and args.b.endswith(".safetensors"):
            a, b, steps = load_tensors(args.a), load_tensors(args.b), None
        else:
            a, b, steps = logs_as_tensors(load_log(args.a), load_log(args.b))
    except (OSError, ValueError) as e:
        print(f"compare: error: {e}", file=sys.stderr)
        return 2
    return 0 if compare(a, b, args.rtol, args.atol_floor, steps) else 1


if __name__ == "__main__":
    sys.exit(main())
