#!/usr/bin/python3
"""attention-vs-numpy.test: the built-in attention op against NumPy.

Written from the op's semantics (scaled_dot_product_attention with a boolean
mask, causality and attention dropout; spec §8/§9, docs/pytorch.md, the
dropout hash of docs/codegen/lower-to-linalg.md and the bf16 rules of the
fused op), not from modelc's code. For the five variants of
test/E2E/Inputs/attention_op.mdl (causal, mask, pad, drop, cross):

  attention_op.py write DIR [--seed N]
      DIR/init.safetensors (q, k, v of each variant), DIR/w_*.npy (the fixed
      output weights, two samples each), DIR/mask.npy [2, 1, T, S] and
      DIR/pad.npy [2, 1, 1, S] (u8, 1 = attend; every query row sees a key)
  attention_op.py check DIR --precision f32|bf16 --seed SEED --saved W
                  --log RUN.jsonl --fwd Y.npz --fwd16 Y16.npz
      checks one SGD step of lr 1 (the gradients init - saved, the logged
      loss terms) computed at PRECISION, and the forward outputs of the
      f32 (`infer fwd`) and bf16 (`infer fwd16`) infer entries; prints one
      line per check and negative controls; exits 1 on any failure.

Semantics (float64 arithmetic from the given inputs): s = scale * q k^T;
key j is visible to query i iff (not causal or j <= i) and mask[i, j] (the
mask broadcast to [b, h, t, s]); invisible scores are -inf; p = softmax(s);
dropout multiplies p by z = 0 where u < p_drop, else 1 / (1 - p_drop), u
the hash of (seed, rng_counter = 1, id = 0, the row-major index of (b, h, i,
j) in [b, h, t, s]); o = (p z) v. Backward with dO = w: dv = (p z)^T dO,
dP = (dO v^T) z, ds = p (dP - rowsum(dP p)), dq = scale ds k, dk = scale
ds^T q.

bf16 (the fused op's rule; r rounds to bf16, nearest even): q, k, v rounded;
s, the row max m and l = sum(exp(s - m)) in f32; o = r(sum_j r(e_ij z_ij)
v_j / l_i), e = exp(s - m); backward from dO = r(w) (the gradient reaching
the bf16 output), p = e / l, D = rowsum(dO o), ds = r(p (dP - D)),
dv = r(r(p z)^T dO), dq = r(scale ds k), dk = r(scale ds^T q). The kernel
rounds exp(s - running max of its block of 16 keys) rather than
exp(s - m), so rows longer than 16 keys are compared with a tolerance;
rows of at most 16 keys (causal rows 0-15) must match bit for bit.
"""
import argparse
import json
import os
import sys

import numpy as np

import safetensors_np
from amp import bf16

B, H, T, S, SC, D, DV = 2, 3, 29, 37, 37, 12, 8
P_DROP = 0.3
# (causal, mask input, explicit scale, dropout, t, s) of each variant.
VARIANTS = {
    "causal": (True, None, None, 0.0, SC, SC),
    "mask": (False, "mask", 0.4, 0.0, T, S),
    "pad": (False, "pad", None, 0.0, T, S),
    "drop": (False, None, None, P_DROP, T, S),
    "cross": (False, None, None, 0.0, T, S),
}
M64 = (1 << 64) - 1

# Tolerances (max, rms): max |a - b| over max |b| and rms(a - b) over rms(b)
# per tensor (the rms is checked for bf16 only).
# f32: the program's f32 rounding against float64.
# bf16: the outputs and gradients are rounded to bf16 (2^-9 relative) and
# the kernel's rounding of exp(s - block max), of o (which the backward
# reads) and of dS differs from the reference's in individual elements:
# an ulp here and there, which the max allows; the rms catches a rule that
# is off everywhere by a fraction of an ulp (computing in f32).
FWD_TOL = {"f32": (1e-5, None), "bf16": (2.0 ** -7, 2.0 ** -9)}
GRAD_TOL = {"f32": (1e-5, None), "bf16": (2.0 ** -7, 2.0 ** -8)}
# The loss terms, over sum |o w|: f32 sums of outputs that are each within
# an ulp or so of the reference's.
LOSS_TOL = {"f32": (1e-5, None), "bf16": (2.0 ** -11, None)}
# A negative control must be this many times its tolerance to count as far off.
FAR = 4.0


# ----------------------------------------------------------------------------
# The dropout hash.

def mix64(x):
    """SplitMix64's finaliser on uint64 arrays (wrapping)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def mix64_int(x):
    """mix64 on one Python int."""
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def dropout_scale(seed, counter, op_id, p, shape):
    """z: 0 where the element is dropped, else 1 / (1 - p)."""
    key = mix64_int(mix64_int(seed ^ ((op_id * 0x9E3779B97F4A7C15) & M64)) ^ counter)
    index = np.arange(int(np.prod(shape)), dtype=np.uint64)
    h = mix64(np.uint64(key) ^ index)
    u = (h >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return np.where(u < p, 0.0, 1.0 / (1.0 - p)).reshape(shape)


# ----------------------------------------------------------------------------
# The attention itself.

def visibility(causal, mask, t, s):
    """[b, h, t, s] booleans: key j visible to query i."""
    vis = np.ones((B, H, t, s), bool)
    if causal:
        vis &= np.arange(s)[None, :] <= np.arange(t)[:, None]
    if mask is not None:
        vis &= np.broadcast_to(mask, vis.shape)
    return vis


def forward64(q, k, v, vis, scale, z):
    """o and p in float64."""
    s = scale * (q @ k.transpose(0, 1, 3, 2))
    s = np.where(vis, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    return (p * z) @ v, p


def backward64(q, k, v, p, z, do, scale):
    """dq, dk, dv in float64."""
    dv = (p * z).transpose(0, 1, 3, 2) @ do
    dp = (do @ v.transpose(0, 1, 3, 2)) * z
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    return scale * (ds @ k), scale * (ds.transpose(0, 1, 3, 2) @ q), dv


def f32(x):
    return np.asarray(x, np.float32)


def forward_bf16(q, k, v, vis, scale, z):
    """o (bf16 values), p (f32, normalised) by the fused op's bf16 rule."""
    qr, kr, vr = bf16(q), bf16(k), bf16(v)
    s = f32(scale * (qr.astype(np.float64) @ kr.transpose(0, 1, 3, 2)))
    s = np.where(vis, s, np.float32(-np.inf))
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    l = e.sum(-1, keepdims=True, dtype=np.float32)
    o = bf16(f32((bf16(e * f32(z)).astype(np.float64) @ vr) / l))
    return o, e / l


def backward_bf16(q, k, v, o, p, z, w, scale):
    """dq, dk, dv (bf16 values) by the fused op's bf16 rule; dO = r(w)."""
    qr, kr, vr = (bf16(x).astype(np.float64) for x in (q, k, v))
    do = bf16(w).astype(np.float64)
    rowdot = (do * o).sum(-1, keepdims=True)
    dp = (do @ vr.transpose(0, 1, 3, 2)) * z
    ds = bf16(f32(p * (dp - rowdot))).astype(np.float64)
    dv = bf16(f32(bf16(f32(p * z)).astype(np.float64).transpose(0, 1, 3, 2) @ do))
    dq = bf16(f32(scale * (ds @ kr)))
    dk = bf16(f32(scale * (ds.transpose(0, 1, 3, 2) @ qr)))
    return dq, dk, dv


# ----------------------------------------------------------------------------
# write

def write(args):
    rng = np.random.default_rng(args.seed)
    tensors = {}
    for name, (_, _, _, _, t, s) in VARIANTS.items():
        q = rng.normal(0.0, 1.5, (B, H, t, D))
        q[1, 2] *= 4.0  # one head with scores of std ~6: a wide range of exponents
        tensors[name + ".q"] = f32(q)
        tensors[name + ".k"] = f32(rng.normal(0.0, 1.0, (B, H, s, D)))
        tensors[name + ".v"] = f32(rng.normal(0.0, 1.0, (B, H, s, DV)))
        np.save(os.path.join(args.dir, f"w_{name}.npy"), f32(rng.normal(0.0, 1.0, (B, H, t, DV))))
    safetensors_np.save(os.path.join(args.dir, "init.safetensors"), tensors)
    # A random mask [b, 1, t, s], 60% visible, each row with at least one
    # visible key; in sample 0 row 0 sees only the last key (the first two
    # blocks of 16 keys fully hidden), row 1 only key 3 (the later blocks
    # hidden), row 2 every key.
    mask = rng.random((B, 1, T, S)) < 0.6
    mask[np.arange(B)[:, None], 0, np.arange(T)[None, :], rng.integers(0, S, (B, T))] = True
    mask[0, 0, 0] = np.arange(S) == S - 1
    mask[0, 0, 1] = np.arange(S) == 3
    mask[0, 0, 2] = True
    np.save(os.path.join(args.dir, "mask.npy"), mask.astype(np.uint8))
    # Padding [b, 1, 1, s]: sample 0 keeps its first 30 keys, sample 1 its first 17.
    pad = np.arange(S)[None, None, None, :] < np.array([30, 17])[:, None, None, None]
    np.save(os.path.join(args.dir, "pad.npy"), pad.astype(np.uint8))


# ----------------------------------------------------------------------------
# check

class Case:
    """One variant's inputs and reference values."""

    def __init__(self, name, init, inputs, seed):
        causal, mask_name, scale, p, t, s = VARIANTS[name]
        self.name, self.t, self.s = name, t, s
        self.q, self.k, self.v = (init[f"{name}.{x}"].astype(np.float64) for x in "qkv")
        self.w = inputs[f"w_{name}"].astype(np.float64)
        self.mask = None if mask_name is None else inputs[mask_name] > 0
        self.causal = causal
        self.vis = visibility(causal, self.mask, t, s)
        self.scale = 1.0 / np.sqrt(D) if scale is None else scale
        self.p = p
        self.z = dropout_scale(seed, 1, 0, p, (B, H, t, s)) if p > 0 else np.ones((B, H, t, s))

    def reference(self, precision, vis=None, z=None, scale=None):
        """(o_train, loss term, (dq, dk, dv)) of one training step at
        `precision`; vis, z and scale replace the case's (negative controls)."""
        vis = self.vis if vis is None else vis
        z = self.z if z is None else z
        scale = self.scale if scale is None else scale
        if precision == "bf16":
            o, p = forward_bf16(self.q, self.k, self.v, vis, scale, z)
            grads = backward_bf16(self.q, self.k, self.v, o, p, z, self.w, scale)
        else:
            o, p = forward64(self.q, self.k, self.v, vis, scale, z)
            grads = backward64(self.q, self.k, self.v, p, z, self.w, scale)
        o = o.astype(np.float64)
        return o, float((o * self.w).sum()), tuple(g.astype(np.float64) for g in grads)

    def infer_reference(self, precision):
        """The infer output: no dropout."""
        ones = np.ones_like(self.z)
        if precision == "bf16":
            return forward_bf16(self.q, self.k, self.v, self.vis, self.scale, ones)[0].astype(np.float64)
        return forward64(self.q, self.k, self.v, self.vis, self.scale, ones)[0]


def errors(got, ref, slack=0.0):
    """(max, rms) of |got - ref| less slack, over max |ref| and rms(ref)
    (inf when got is not finite)."""
    if got.shape != ref.shape:
        raise ValueError(f"shape {got.shape} vs {ref.shape}")
    got = got.astype(np.float64)
    if not np.all(np.isfinite(got)):
        return np.inf, np.inf
    diff = np.maximum(np.abs(got - ref) - slack, 0.0)
    return float(diff.max() / np.abs(ref).max()), float(rms(diff) / rms(ref))


def rms(x):
    return np.sqrt(np.mean(np.square(x)))


def grad_errors(init, saved, ref):
    """errors() of the measured gradient init - saved, less ulp(saved): the
    f32 rounding of the update saved = init - g (at most half an ulp)."""
    slack = np.spacing(np.abs(saved.astype(np.float32))).astype(np.float64)
    return errors(init.astype(np.float64) - saved.astype(np.float64), ref, slack)


class Checker:
    def __init__(self):
        self.failed = False

    def report(self, label, err, tol, extra=""):
        """err, tol: (max, rms) pairs; an rms tolerance of None is not checked."""
        ok = err[0] <= tol[0] and (tol[1] is None or err[1] <= tol[1])
        self.failed |= not ok
        text = f"max error {err[0]:.3g}, tolerance {tol[0]:.3g}"
        if tol[1] is not None:
            text += f"; rms error {err[1]:.3g}, tolerance {tol[1]:.3g}"
        print(f"{label}: {'ok' if ok else 'FAIL'} ({text}{extra})")

    def far_off(self, label, err, tol, what):
        """A negative control: the max error must be far outside its tolerance."""
        ok = err[0] > FAR * tol[0]
        self.failed |= not ok
        print(f"{label}: {what} would be {'far off' if ok else 'NOT far off'} "
              f"(max error {err[0]:.3g}, tolerance {tol[0]:.3g})")

    def would_fail(self, label, err, tol, what):
        """A negative control that must be outside both tolerances."""
        ok = err[0] > tol[0] and err[1] > tol[1]
        self.failed |= not ok
        print(f"{label}: {what} would {'fail' if ok else 'NOT fail'} (max error {err[0]:.3g}, "
              f"tolerance {tol[0]:.3g}; rms error {err[1]:.3g}, tolerance {tol[1]:.3g})")


def load_log(path):
    """The first logged step's record."""
    with open(path, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    steps = [r for r in records if r.get("step") == 1 and not r.get("eval")]
    if not steps:
        raise ValueError(f"{path}: no record for step 1")
    return steps[0]


def check(args):
    init, _ = safetensors_np.load(os.path.join(args.dir, "init.safetensors"))
    saved, _ = safetensors_np.load(args.saved)
    inputs = {n: np.load(os.path.join(args.dir, n + ".npy"))
              for n in ["mask", "pad"] + [f"w_{v}" for v in VARIANTS]}
    cases = {name: Case(name, init, inputs, args.seed) for name in VARIANTS}
    record = load_log(args.log)
    fwd, fwd16 = np.load(args.fwd), np.load(args.fwd16)
    prec = args.precision
    c = Checker()

    refs = {name: case.reference(prec) for name, case in cases.items()}
    # The forward of the infer entries (both, whatever the train precision).
    for name, case in cases.items():
        c.report(f"{name} forward (f32)", errors(fwd[name], case.infer_reference("f32")), FWD_TOL["f32"])
        c.report(f"{name} forward (bf16)", errors(fwd16[name], case.infer_reference("bf16")), FWD_TOL["bf16"])
    # Causal rows 0-15 see at most 16 keys, one block: there the kernel's
    # rounding is the rule's, bit for bit.
    got, ref = fwd16["causal"][:, :, :16], cases["causal"].infer_reference("bf16")[:, :, :16]
    differ = int((got != ref).sum())
    c.failed |= differ != 0
    print(f"causal rows 0-15 forward (bf16): {'equal' if differ == 0 else 'FAIL'} "
          f"({differ} of {got.size} elements differ)")

    # The loss terms of the training step (the drop term checks the dropout
    # forward): the error over sum |o w|.
    def loss_error(got, name, loss):
        return abs(got - loss) / float(np.abs(refs[name][0] * cases[name].w).sum()), 0.0

    for name in cases:
        loss = refs[name][1]
        c.report(f"{name} loss term ({prec})", loss_error(record[name], name, loss), LOSS_TOL[prec],
                 f"; got {record[name]:.7g}, reference {loss:.7g}")
    total = sum(refs[n][1] for n in cases)
    sizes = sum(float(np.abs(refs[n][0] * cases[n].w).sum()) for n in cases)
    c.report(f"loss ({prec})", (abs(record["loss"] - total) / sizes, 0.0), LOSS_TOL[prec])

    # The gradients.
    for name in cases:
        for x, g in zip("qkv", refs[name][2]):
            key = f"{name}.{x}"
            c.report(f"{name} d{x} ({prec})", grad_errors(init[key], saved[key], g), GRAD_TOL[prec])

    # Negative controls: the same comparison against a reference that
    # leaves out one feature must fail by far (the worst of dq, dk, dv).
    def worst_grad(name, **kw):
        ref = cases[name].reference(prec, **kw)[2]
        errs = [grad_errors(init[f"{name}.{x}"], saved[f"{name}.{x}"], g) for x, g in zip("qkv", ref)]
        return max(e[0] for e in errs), max(e[1] for e in errs)

    drop = cases["drop"]
    no_drop = drop.reference(prec, z=np.ones_like(drop.z))[1]
    c.far_off("drop loss term", loss_error(record["drop"], "drop", no_drop), LOSS_TOL[prec], "no dropout")
    c.far_off("drop", worst_grad("drop", z=np.ones_like(drop.z)), GRAD_TOL[prec], "no dropout")
    c.far_off("drop", worst_grad("drop", z=dropout_scale(args.seed, 2, 0, P_DROP, drop.z.shape)),
              GRAD_TOL[prec], "the next step's dropout (counter 2)")
    c.far_off("causal", worst_grad("causal", vis=np.ones_like(cases["causal"].vis)), GRAD_TOL[prec],
              "ignoring causality")
    c.far_off("mask", worst_grad("mask", vis=np.ones_like(cases["mask"].vis)), GRAD_TOL[prec], "ignoring the mask")
    c.far_off("pad", worst_grad("pad", vis=np.ones_like(cases["pad"].vis)), GRAD_TOL[prec], "ignoring the padding")
    c.far_off("mask", worst_grad("mask", scale=1.0 / np.sqrt(D)), GRAD_TOL[prec], "the default scale")

    # The bf16 rules are seen: a kernel that computed in f32 and rounded
    # only its results to bf16 would fail each variant's bf16 checks, by
    # both criteria (printed: the least error over the variants; for the
    # gradients, of the worst of dq, dk, dv). Reference against reference,
    # so this does not move with the program's rounding noise.
    fwd_errs, grad_errs = [], []
    for case in cases.values():
        fwd_errs.append(errors(bf16(case.infer_reference("f32")), case.infer_reference("bf16")))
        pairs = [errors(bf16(a), b) for a, b in zip(case.reference("f32")[2], case.reference("bf16")[2])]
        grad_errs.append((max(e[0] for e in pairs), max(e[1] for e in pairs)))
    least = lambda errs: (min(e[0] for e in errs), min(e[1] for e in errs))  # noqa: E731
    c.would_fail("bf16 forward", least(fwd_errs), FWD_TOL["bf16"], "computing in f32")
    c.would_fail("bf16 gradients", least(grad_errs), GRAD_TOL["bf16"], "computing in f32")
    print("FAILED" if c.failed else "all ok")
    return 1 if c.failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("dir")
    w.add_argument("--seed", type=int, default=1)
    k = sub.add_parser("check")
    k.add_argument("dir")
    k.add_argument("--precision", choices=["f32", "bf16"], required=True)
    k.add_argument("--seed", type=int, required=True, help="the run's seed setting")
    k.add_argument("--saved", required=True)
    k.add_argument("--log", required=True)
    k.add_argument("--fwd", required=True)
    k.add_argument("--fwd16", required=True)
    args = p.parse_args()
    return write(args) if args.command == "write" else check(args)


if __name__ == "__main__":
    sys.exit(main() or 0)
