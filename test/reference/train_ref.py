#!/usr/bin/python3
"""Trains a reference model in NumPy as a compiled modelc program would with shuffle = false, for comparison.

Step s (1-based) of a run with micro-batch B and accumulation k takes the
global batch of B·k samples starting at ((s−1) mod E)·B·k in file order, where
E = ⌊N/(B·k)⌋ is the number of whole global batches per epoch (the last
incomplete one is dropped, spec §7); micro-batch a is its a-th slice of B.
Loss and gradients are averaged over the k micro-batches, clipped, then the
optimizer steps with the scheduled learning rate. The loss logged for step s is
the one before its update, as the programs' --log (spec §10).

With --precision f16 the step is a PyTorch loop with torch.amp.GradScaler
(grad_scaler.py): each micro-batch's backward is seeded with f32(1/k)·scale
(so the f16 gradients carry the scale, and may overflow), the summed master
gradients are multiplied by f32(1/scale), an inf or NaN among them skips the
optimizer step (parameters and state untouched, the optimizer's own step
count not advanced; the schedule still counts the step), and the scale moves
by GradScaler's rule.

Writes --out-losses as JSON {"loss": [...], "lr": [...]} (entry i is step i+1;
f16 adds "loss_scale", the scale each step's backward used, and
"skipped_steps", the count so far) and --out-params as F32 safetensors. Exit
status 2 on bad usage or input.
"""
import argparse
import fnmatch
import json
import sys

import numpy as np

import dataset
import grad_scaler
import models
import optim
import safetensors_np

DTYPES = {"f32": np.float32, "f64": np.float64}


def parse_args(argv):
    """The command line; names follow the .mdl settings they stand for."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, choices=["mlp", "lenet", "cnn"])
    p.add_argument("--cnn-config", help="JSON network description for --model cnn (text or a file path)")
    p.add_argument("--init", required=True, help="initial parameters (safetensors)")
    p.add_argument("--data-images", required=True, help="u8 images: idx(.gz) or .npy")
    p.add_argument("--data-labels", required=True, help="integer labels: idx(.gz) or .npy")
    p.add_argument("--batch", type=int, required=True, help="micro-batch size")
    p.add_argument("--steps", type=int, required=True, help="optimizer steps")
    p.add_argument("--optimizer", required=True,
                   choices=["sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta"])
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--nesterov", action="store_true")
    p.add_argument("--weight-decay", type=float, help="default: 0, or 0.01 for adamw (spec §8)")
    p.add_argument("--param-group", action="append", default=[],
                   metavar="PATTERNS=WD[@LR][;KEY=V...]",
                   help="a torch.optim parameter group: the parameters whose name matches one of "
                        "the comma-separated shell PATTERNS take weight decay WD ('-': the "
                        "optimizer's), with @LR the base learning rate LR, which the schedule "
                        "scales as torch's schedulers scale each group's lr, and with ;KEY=V the "
                        "optimizer setting KEY (momentum, eps, alpha, rho, lr_decay, "
                        "initial_accumulator_value; betas=B1/B2) (repeatable; a parameter in two "
                        "groups is an error)")
    p.add_argument("--betas", default="0.9,0.999", help="beta1,beta2")
    p.add_argument("--eps", type=float, help="default: torch.optim's for the optimizer")
    p.add_argument("--alpha", type=float, default=0.99, help="rmsprop")
    p.add_argument("--centered", action="store_true", help="rmsprop")
    p.add_argument("--lr-decay", type=float, default=0.0, help="adagrad")
    p.add_argument("--initial-accumulator-value", type=float, default=0.0, help="adagrad")
    p.add_argument("--rho", type=float, default=0.9, help="adadelta")
    p.add_argument("--schedule", default="constant", help='as in .mdl, e.g. "warmup_cosine(warmup = 10)"')
    p.add_argument("--grad-clip", type=float, help="max global L2 norm of the gradients")
    p.add_argument("--accumulate", type=int, default=1, help="micro-batches per optimizer step")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    p.add_argument("--precision", choices=["f32", "bf16", "f16"], default="f32",
                   help="bf16, f16: mixed precision as the .mdl setting (amp.py); f16 with loss scaling")
    p.add_argument("--init-scale", type=float, default=65536.0, help="f16: GradScaler's init_scale")
    p.add_argument("--growth-factor", type=float, default=2.0)
    p.add_argument("--backoff-factor", type=float, default=0.5)
    p.add_argument("--growth-interval", type=int, default=2000)
    p.add_argument("--out-losses", required=True, help="JSON file of per-step loss and lr")
    p.add_argument("--out-params", required=True, help="final parameters (F32 safetensors)")
    args = p.parse_args(argv)
    if args.batch < 1 or args.steps < 0 or args.accumulate < 1:
        p.error("--batch and --accumulate must be positive and --steps non-negative")
    if args.optimizer not in ("sgd", "rmsprop") and args.momentum:
        p.error("--momentum belongs to --optimizer sgd or rmsprop")
    if args.optimizer != "sgd" and args.nesterov:
        p.error("--nesterov belongs to --optimizer sgd")
    return args


def parse_betas(text):
    """"0.9,0.999" -> (0.9, 0.999)."""
    betas = tuple(float(b) for b in text.split(","))
    if len(betas) != 2:
        raise ValueError(f"--betas needs two numbers, got {text!r}")
    return betas


def global_batch_start(step, batch, accumulate, samples):
    """First sample of step's global batch: file order, whole global batches, wrapping each epoch."""
    per_epoch = samples // (batch * accumulate)
    if per_epoch == 0:
        raise ValueError(f"{samples} samples do not fill one global batch of {batch} x {accumulate}")
    return ((step - 1) % per_epoch) * batch * accumulate


def train_step(params, net, x, labels, accumulate, precision="f32", loss_scale=None):
    """Loss and gradients of one optimizer step, each averaged over its micro-batches.

    With `loss_scale` (f16), each micro-batch's backward is seeded with
    f32(1/accumulate)·loss_scale and the gradients are summed, still scaled."""
    micro = len(x) // accumulate
    total_loss, total_grads = 0.0, None
    seed = None if loss_scale is None else np.float32(1 / accumulate) * np.float32(loss_scale)
    for a in range(accumulate):
        part = slice(a * micro, (a + 1) * micro)
        loss, grads = models.loss_and_grads(params, net, x[part], labels[part], precision, seed)
        total_loss += float(loss)
        total_grads = grads if total_grads is None else {n: total_grads[n] + g for n, g in grads.items()}
    if seed is not None:
        return total_loss / accumulate, total_grads
    dtype = x.dtype.type
    return total_loss / accumulate, {n: g / dtype(accumulate) for n, g in total_grads.items()}


def param_groups(specs, params, make, default_decay, default_lr):
    """torch.optim's param_groups: one optimizer per `PATTERNS=WD[@LR]` spec over
    the parameters whose name matches one of its shell patterns (fnmatch), each
    parameter in one group at most; each with its own state and base learning
    rate, all stepped together (so their step counts agree). Returns
    (optimizer, names, base lr) triples."""
    groups, owner = [], {}
    for spec in specs:
        head, *extra = spec.split(";")
        patterns, setting = head.rsplit("=", 1)
        decay, _, lr = setting.partition("@")
        settings = dict(item.split("=", 1) for item in extra)
        names = [n for n in params if any(fnmatch.fnmatchcase(n, p) for p in patterns.split(","))]
        for n in names:
            if n in owner:
                raise ValueError(f"parameter {n} is in groups {owner[n]!r} and {spec!r}")
            owner[n] = spec
        groups.append((make(default_decay if decay == "-" else float(decay), settings), names,
                       float(lr) if lr else default_lr))
    return groups


def train(args):
    """Runs the whole training and writes both outputs."""
    dtype = DTYPES[args.dtype]
    if args.precision != "f32" and dtype is not np.float32:
        raise ValueError(f"--precision {args.precision} needs --dtype f32 (f32 masters)")
    scaler = None
    if args.precision == "f16":
        scaler = grad_scaler.GradScaler(args.init_scale, args.growth_factor, args.backoff_factor,
                                        args.growth_interval)
    loaded, _ = safetensors_np.load(args.init)
    params = {n: a.astype(dtype) for n, a in loaded.items()}
    net = models.config_for(args.model, params, args.cnn_config)
    images, labels = dataset.load_split(args.data_images, args.data_labels)
    models.check_params(params, net, dataset.model_input(images[:1], net, dtype).shape[1:])
    def make(weight_decay, settings=None):
        settings = settings or {}
        number = lambda key, default: float(settings[key]) if key in settings else default
        betas = (tuple(float(b) for b in settings["betas"].split("/")) if "betas" in settings
                 else parse_betas(args.betas))
        return optim.make_optimizer(args.optimizer, number("momentum", args.momentum),
                                    args.nesterov, weight_decay, betas, number("eps", args.eps),
                                    number("alpha", args.alpha), args.centered,
                                    number("lr_decay", args.lr_decay),
                                    number("initial_accumulator_value",
                                           args.initial_accumulator_value),
                                    number("rho", args.rho))
    groups = param_groups(args.param_group, params, make, args.weight_decay, args.lr)
    groups.insert(0, (make(args.weight_decay),
                      [n for n in params if not any(n in names for _, names, _ in groups)],
                      args.lr))
    schedule = optim.parse_schedule(args.schedule)
    span = args.batch * args.accumulate
    log = {"loss": [], "lr": []}
    if scaler:
        log.update(loss_scale=[], skipped_steps=[])
    skipped = 0
    for step in range(1, args.steps + 1):
        start = global_batch_start(step, args.batch, args.accumulate, len(images))
        x = dataset.model_input(images[start:start + span], net, dtype)
        scale = scaler.scale if scaler else None
        loss, grads = train_step(params, net, x, labels[start:start + span], args.accumulate,
                                 args.precision, scale)
        found_inf = False
        if scaler:
            # GradScaler.unscale_: inf/NaN found in the scaled gradients,
            # then each multiplied by the f32 inverse of the scale.
            found_inf = any(not np.all(np.isfinite(g)) for g in grads.values())
            inverse = np.float32(1.0 / float(scale))
            with np.errstate(invalid="ignore", over="ignore"):
                grads = {n: g * inverse for n, g in grads.items()}
        if args.grad_clip is not None:
            with np.errstate(invalid="ignore", over="ignore"):
                optim.clip_grad_norm(grads, args.grad_clip)
        lr = optim.scheduled_lr(schedule, args.lr, step, args.steps)
        if not found_inf:
            for optimizer, names, base in groups:
                group_lr = optim.scheduled_lr(schedule, base, step, args.steps)
                optimizer.step({n: params[n] for n in names}, grads, group_lr)
        log["loss"].append(loss)
        log["lr"].append(lr)
        if scaler:
            skipped += found_inf
            log["loss_scale"].append(float(scale))
            log["skipped_steps"].append(skipped)
            scaler.update(found_inf)
    with open(args.out_losses, "w", encoding="utf-8") as f:
        json.dump(log, f)
    safetensors_np.save(args.out_params, {n: a.astype(np.float32) for n, a in params.items()})
    final = f"{log['loss'][-1]:.6f}" if log["loss"] else "none"
    print(f"train_ref: {args.model} {args.steps} steps, last loss {final}")


def main(argv=None):
    """Entry point: one clear message and exit status 2 for usage or input errors."""
    args = parse_args(argv)
    try:
        train(args)
    except (OSError, ValueError) as e:
        print(f"train_ref: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
