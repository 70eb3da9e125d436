"""torch.optim's update rules, spec §8's learning-rate schedules and clip_grad_norm_, in NumPy.

The optimizers follow the algorithms in PyTorch's documentation and its
single-tensor (for-loop) implementation, step for step, so that float32 runs
differ from PyTorch's only by rounding. Parameters, gradients and state are
dicts of arrays keyed by parameter name; state keeps the parameters' dtype.
"""
import math
import re

import numpy as np


class SGD:
    """torch.optim.SGD with dampening 0: weight decay is L2 added to the gradient;
    the first momentum buffer is the gradient itself (not momentum·0 + g)."""

    def __init__(self, momentum=0.0, weight_decay=0.0, nesterov=False):
        if nesterov and momentum <= 0:
            raise ValueError("Nesterov momentum requires a momentum")
        self.momentum, self.weight_decay, self.nesterov = momentum, weight_decay, nesterov
        self.buffers = {}

    def step(self, params, grads, lr):
        """Updates params in place with learning rate lr."""
        for name, p in params.items():
            g = grads[name]
            if self.weight_decay:
                g = g + self.weight_decay * p
            if self.momentum:
                buf = self.buffers.get(name)
                buf = g.copy() if buf is None else self.momentum * buf + g
                self.buffers[name] = buf
                g = g + self.momentum * buf if self.nesterov else buf
            p -= lr * g


class Adam:
    """torch.optim.Adam (amsgrad off): weight decay is L2 added to the gradient.

    m ← lerp(m, g, 1−β1); v ← β2·v + (1−β2)·g²;
    denom = sqrt(v)/sqrt(1−β2^t) + eps; p ← p − lr/(1−β1^t) · m/denom.
    PyTorch updates m with lerp, which rounds differently from β1·m + (1−β1)·g
    in float32, and applies the step as addcdiv, (step_size·m)/denom; this
    does the same operations in the same order.
    """
    decoupled = False

    def __init__(self, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.beta1, self.beta2 = betas
        self.eps, self.weight_decay = eps, weight_decay
        self.t = 0
        self.m, self.v = {}, {}

    def step(self, params, grads, lr):
        """Updates params in place with learning rate lr; one step of t for all of them."""
        self.t += 1
        bias_correction1 = 1 - self.beta1 ** self.t
        bias_correction2_sqrt = (1 - self.beta2 ** self.t) ** 0.5
        for name, p in params.items():
            g = grads[name]
            if self.decoupled:
                p *= 1 - lr * self.weight_decay
            elif self.weight_decay:
                g = g + self.weight_decay * p
            m = self.m.setdefault(name, np.zeros_like(p))
            v = self.v.setdefault(name, np.zeros_like(p))
            _lerp_(m, g, 1 - self.beta1)
            v *= self.beta2
            v += (1 - self.beta2) * g * g
            denom = np.sqrt(v) / bias_correction2_sqrt + self.eps
            p -= (lr / bias_correction1) * m / denom


def _lerp_(start, end, weight):
    """start ← torch.lerp(start, end, weight), with the two formulas torch's kernel switches between."""
    if weight < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


class AdamW(Adam):
    """torch.optim.AdamW: decoupled weight decay, p ← p·(1 − lr·wd) before Adam's step without L2."""
    decoupled = True

    def __init__(self, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(betas, eps, weight_decay)


# Each schedule's arguments in the order spec §8 writes them; None marks a required one.
SCHEDULES = {
    "constant": {},
    "warmup_cosine": {"warmup": None, "min_lr": 0.0},
    "linear": {"warmup": None},
    "step_lr": {"every": None, "gamma": None},
}


def parse_schedule(text):
    """(name, {arg: value}) from .mdl-style text: "constant", "warmup_cosine(warmup = 100, min_lr = 0)"."""
    match = re.fullmatch(r"\s*(\w+)\s*(?:\((.*)\))?\s*", text)
    if not match or match.group(1) not in SCHEDULES:
        raise ValueError(f"unknown schedule {text!r}; known: {sorted(SCHEDULES)}")
    name, body = match.group(1), match.group(2) or ""
    signature = SCHEDULES[name]
    args = {}
    for position, part in enumerate(p.strip() for p in body.split(",") if p.strip()):
        key, _, value = part.rpartition("=")
        key = key.strip() or (list(signature)[position] if position < len(signature) else "")
        if key not in signature or key in args:
            raise ValueError(f"schedule {name}: bad argument {part!r}")
        args[key] = float(value)
    for key, default in signature.items():
        if key not in args:
            if default is None:
                raise ValueError(f"schedule {name}: missing argument {key}")
            args[key] = default
    return name, args


def scheduled_lr(schedule, lr, s, total):
    """The learning rate of optimizer step s (1-based) of a run of total steps (spec §8)."""
    name, a = schedule
    if name == "constant":
        return lr
    if name == "warmup_cosine":
        if s <= a["warmup"]:
            return lr * s / a["warmup"]
        progress = (s - a["warmup"]) / (total - a["warmup"])
        return a["min_lr"] + (lr - a["min_lr"]) * 0.5 * (1 + math.cos(math.pi * progress))
    if name == "linear":
        if s <= a["warmup"]:
            return lr * s / a["warmup"]
        return lr * (total - s) / (total - a["warmup"])
    return lr * a["gamma"] ** ((s - 1) // int(a["every"]))


def clip_grad_norm(grads, max_norm):
    """torch.nn.utils.clip_grad_norm_: scales all grads by min(1, max_norm/(‖g‖ + 1e-6)) in place.

    ‖g‖ is the L2 norm of the per-tensor L2 norms (= the global norm), as
    torch computes it; the scale is applied even when it is 1. Returns ‖g‖.
    """
    dtype = next(iter(grads.values())).dtype.type
    total = np.linalg.norm(np.array([np.linalg.norm(g) for g in grads.values()], dtype))
    coef = min(dtype(max_norm) / (total + dtype(1e-6)), dtype(1.0))
    for g in grads.values():
        g *= coef
    return total


def make_optimizer(name, momentum=0.0, nesterov=False, weight_decay=None, betas=(0.9, 0.999), eps=1e-8):
    """The optimizer for --optimizer NAME; weight_decay None means the spec's default for it."""
    if name == "sgd":
        return SGD(momentum, weight_decay or 0.0, nesterov)
    if name == "adam":
        return Adam(betas, eps, weight_decay or 0.0)
    if name == "adamw":
        return AdamW(betas, eps, 0.01 if weight_decay is None else weight_decay)
    raise ValueError(f"unknown optimizer {name!r}")
