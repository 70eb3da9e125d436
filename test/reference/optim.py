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


def _with_weight_decay(g, p, weight_decay):
    """torch.optim's L2 penalty: g + weight_decay·p (g itself when it is 0)."""
    return g + p.dtype.type(weight_decay) * p if weight_decay else g


class RMSprop:
    """torch.optim.RMSprop: square_avg ← α·sq + (1−α)·g²; centered: grad_avg ← lerp(grad_avg, g, 1−α),
    avg = sqrt(sq − grad_avg²), else sqrt(sq); avg += eps; with momentum buf ← m·buf + g/avg,
    p ← p − lr·buf, else p ← p − (lr·g)/avg (addcdiv). Weight decay is L2 added to the gradient."""

    def __init__(self, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False):
        self.alpha, self.eps, self.weight_decay = alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.square, self.grad_avg, self.buffers = {}, {}, {}

    def step(self, params, grads, lr):
        for name, p in params.items():
            dt = p.dtype.type
            g = _with_weight_decay(grads[name], p, self.weight_decay)
            sq = self.square.setdefault(name, np.zeros_like(p))
            sq *= dt(self.alpha)
            sq += dt(1 - self.alpha) * g * g
            if self.centered:
                mean = self.grad_avg.setdefault(name, np.zeros_like(p))
                _lerp_(mean, g, dt(1 - self.alpha))
                avg = np.sqrt(sq - mean * mean)
            else:
                avg = np.sqrt(sq)
            avg = avg + dt(self.eps)
            if self.momentum > 0:
                buf = self.buffers.setdefault(name, np.zeros_like(p))
                buf *= dt(self.momentum)
                buf += g / avg
                p -= dt(lr) * buf
            else:
                p -= dt(lr) * g / avg


class Adagrad:
    """torch.optim.Adagrad: clr = lr/(1 + (t−1)·lr_decay); sum (from initial_accumulator_value) += g²;
    p ← p − (clr·g)/(sqrt(sum) + eps). Weight decay is L2 added to the gradient."""

    def __init__(self, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10):
        self.lr_decay, self.weight_decay = lr_decay, weight_decay
        self.initial, self.eps = initial_accumulator_value, eps
        self.t = 0
        self.sums = {}

    def step(self, params, grads, lr):
        self.t += 1
        clr = lr / (1 + (self.t - 1) * self.lr_decay)
        for name, p in params.items():
            dt = p.dtype.type
            g = _with_weight_decay(grads[name], p, self.weight_decay)
            total = self.sums.setdefault(name, np.full_like(p, dt(self.initial)))
            total += g * g
            std = np.sqrt(total) + dt(self.eps)
            p -= dt(clr) * g / std


class Adadelta:
    """torch.optim.Adadelta: sq ← ρ·sq + (1−ρ)·g²; delta = sqrt(acc + eps)/sqrt(sq + eps)·g;
    acc ← ρ·acc + (1−ρ)·delta²; p ← p − lr·delta. Weight decay is L2 added to the gradient."""

    def __init__(self, rho=0.9, eps=1e-6, weight_decay=0.0):
        self.rho, self.eps, self.weight_decay = rho, eps, weight_decay
        self.square, self.acc = {}, {}

    def step(self, params, grads, lr):
        for name, p in params.items():
            dt = p.dtype.type
            g = _with_weight_decay(grads[name], p, self.weight_decay)
            sq = self.square.setdefault(name, np.zeros_like(p))
            acc = self.acc.setdefault(name, np.zeros_like(p))
            sq *= dt(self.rho)
            sq += dt(1 - self.rho) * g * g
            std = np.sqrt(sq + dt(self.eps))
            delta = np.sqrt(acc + dt(self.eps)) / std * g
            acc *= dt(self.rho)
            acc += dt(1 - self.rho) * delta * delta
            p -= dt(lr) * delta


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


def make_optimizer(name, momentum=0.0, nesterov=False, weight_decay=None, betas=(0.9, 0.999), eps=None,
                   alpha=0.99, centered=False, lr_decay=0.0, initial_accumulator_value=0.0, rho=0.9):
    """The optimizer for --optimizer NAME; weight_decay and eps None mean torch.optim's default for it."""
    wd = weight_decay or 0.0
    if name == "sgd":
        return SGD(momentum, wd, nesterov)
    if name == "adam":
        return Adam(betas, 1e-8 if eps is None else eps, wd)
    if name == "adamw":
        return AdamW(betas, 1e-8 if eps is None else eps, 0.01 if weight_decay is None else weight_decay)
    if name == "rmsprop":
        return RMSprop(alpha, 1e-8 if eps is None else eps, wd, momentum, centered)
    if name == "adagrad":
        return Adagrad(lr_decay, wd, initial_accumulator_value, 1e-10 if eps is None else eps)
    if name == "adadelta":
        return Adadelta(rho, 1e-6 if eps is None else eps, wd)
    raise ValueError(f"unknown optimizer {name!r}")
