#!/usr/bin/python3
"""torch.amp.GradScaler's update rule, as a small Python model, and a check of a program's f16 log against it.

  grad_scaler.py LOG.jsonl [--init-scale S] [--growth-factor G]
                 [--backoff-factor B] [--growth-interval N]

The model is written from torch/amp/grad_scaler.py and ATen's
_amp_update_scale_ (not from modelc's code): the scale is a float32; after a
step whose gradients held an inf or NaN it becomes float32(scale * backoff)
and the growth tracker 0; after a finite one the tracker counts up, and when
it reaches the growth interval the scale becomes float32(scale * growth)
(kept only if finite) and the tracker 0.

LOG is a compiled f16 program's --log (spec §10; eval lines are ignored): every
step has `loss_scale` (the scale its backward used) and `skipped_steps` (the
steps skipped so far, this one included). The steps whose count went up are
the overflowed ones; the model, fed those, must give exactly the logged scale
at every step, and the log must have every step from 1 (log.every = 1).
Prints `grad_scaler: N steps, K skipped, scales ok` and exits 0, or names the
first step where the log and the model differ and exits 1; 2 on bad input.
"""
import argparse
import json
import sys

import numpy as np


class GradScaler:
    """The scale and growth tracker of torch.amp.GradScaler (enabled, on one device)."""

    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self.scale = np.float32(init_scale)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self.tracker = 0

    def update(self, found_inf):
        """_amp_update_scale_: the products taken in double, stored as float."""
        if found_inf:
            self.scale = np.float32(float(self.scale) * self.backoff_factor)
            self.tracker = 0
            return
        successful = self.tracker + 1
        if successful == self.growth_interval:
            grown = np.float32(float(self.scale) * self.growth_factor)
            if np.isfinite(grown):
                self.scale = grown
            self.tracker = 0
        else:
            self.tracker = successful


def read_log(path):
    """[(step, loss_scale, skipped_steps)] of the train lines of a --log file."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            record = json.loads(line)
            if record.get("eval"):
                continue
            if "loss_scale" not in record or "skipped_steps" not in record:
                raise ValueError(f"{path}:{n}: step {record.get('step')} has no "
                                 "loss_scale/skipped_steps (not an f16 run?)")
            rows.append((record["step"], record["loss_scale"], record["skipped_steps"]))
    return rows


def check(rows, scaler):
    """None when the log follows the model, else the first difference."""
    skipped = 0
    for i, (step, scale, count) in enumerate(rows):
        if step != i + 1:
            return f"the log has step {step} where step {i + 1} was expected (log.every = 1?)"
        if scale != float(scaler.scale):
            return (f"step {step}: the log's loss_scale {scale!r}, the model's "
                    f"{float(scaler.scale)!r}")
        if count not in (skipped, skipped + 1):
            return f"step {step}: skipped_steps went from {skipped} to {count}"
        found_inf = count == skipped + 1
        skipped = count
        scaler.update(found_inf)
    return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("log")
    p.add_argument("--init-scale", type=float, default=65536.0)
    p.add_argument("--growth-factor", type=float, default=2.0)
    p.add_argument("--backoff-factor", type=float, default=0.5)
    p.add_argument("--growth-interval", type=int, default=2000)
    a = p.parse_args(argv)
    try:
        rows = read_log(a.log)
    except (OSError, ValueError) as e:
        print(f"grad_scaler: error: {e}", file=sys.stderr)
        return 2
    if not rows:
        print(f"grad_scaler: error: {a.log} has no train steps", file=sys.stderr)
        return 2
    problem = check(rows, GradScaler(a.init_scale, a.growth_factor, a.backoff_factor,
                                     a.growth_interval))
    if problem:
        print(f"grad_scaler: {problem}")
        return 1
    print(f"grad_scaler: {len(rows)} steps, {rows[-1][2]} skipped, scales ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
