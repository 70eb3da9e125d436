#!/usr/bin/python3
"""The ResNet of examples/resnet.mdl in NumPy, forward and backward by hand, for comparison:

  resnet.py init OUT.safetensors --width W [--seed S] [--dtype f32|f64]
  resnet.py train --init W.safetensors --images X --labels Y --width W --batch B
                  --steps N --lr LR [--momentum M] [--weight-decay WD] [--warmup K]
                  [--dtype f32|f64] --out-losses L.json [--save FINAL.safetensors]
  resnet.py eval --weights W.safetensors --images X --labels Y --width W --batch B
                 [--batches K] [--dtype f32|f64]

The model, written from torch.nn's and torchvision's documentation (not from
modelc's code): u8 images [N, 28, 28] (idx or .npy), x = f32(image)/255
reshaped [B, 1, 28, 28];
  stem     relu(bn1(conv1(x)))                       1 -> W, 3x3, padding 1
  layer1.0 BasicBlock(W,  stride 1)                  28x28
  layer2.0 BasicBlock(2W, stride 2, downsample)      -> 14x14
  layer3.0 BasicBlock(4W, stride 2, downsample)      -> 7x7
  fc       Linear(4W, 10) of the mean over H and W   (AdaptiveAvgPool2d(1), flatten)
where torchvision's BasicBlock is relu(bn2(conv2(relu(bn1(conv1(x))))) + s),
conv1 3x3 with the block's stride and padding 1, conv2 3x3 padding 1, and s
= x, or downsample.1(downsample.0(x)) with downsample.0 a 1x1 conv of the
block's stride when the shape changes. Every conv is nn.Conv2d(bias=False),
every bn nn.BatchNorm2d(eps=1e-5, momentum=0.1) (layers.batch_norm); the
names are torchvision's (conv1.weight, bn1.running_var, layer2.0.downsample.1
.num_batches_tracked, fc.bias, ...), so a file is a state_dict.

Loss: mean cross-entropy. Training (batch norm in training mode: batch
statistics, running statistics updated, num_batches_tracked + 1): samples
in file order, B per step, step s taking the samples from ((s-1) mod E)·B,
E = floor(N/B) (the incomplete last batch is dropped), torch.optim.SGD with
momentum and weight_decay over the parameters only (the buffers are not
parameters, so neither weight decay nor the update touches them), lr by
warmup_cosine(warmup = K) over the N steps (spec §8; K = 0 is a pure
cosine decay, as encoder.py, whose last step has lr 0). Losses (before each step) go to L.json as
{"loss": [...]}; --save writes the final parameters and buffers, floats in
the init file's dtype, num_batches_tracked as I64.

Eval (running statistics): prints `loss` = the mean over the first K full
batches (default: all) of each batch's mean cross-entropy, and `accuracy`
over their samples (argmax, ties to the lowest class).

init is PyTorch's default: conv and linear weights, and the linear bias,
uniform(±1/sqrt(fan_in)) (kaiming_uniform_(a=√5) is exactly that bound), each
bn weight 1, bias 0, running_mean 0, running_var 1, num_batches_tracked 0
(an I64 scalar); not torchvision's resnet init (kaiming_normal_, fan_out),
which a model written in .mdl does not get. Values are drawn in float64 and rounded to float32, so the
f32 and f64 files hold one model. Arithmetic is float64 unless --dtype f32.
"""
import argparse
import json
import math
import sys

import numpy as np

import dataset
import layers
import optim
import safetensors_np

CLASSES = 10
DTYPES = {"f32": np.float32, "f64": np.float64}
BN_BUFFERS = ("running_mean", "running_var", "num_batches_tracked")


def blocks(width):
    """(name, input channels, planes, stride) of each BasicBlock."""
    return [("layer1.0", width, width, 1), ("layer2.0", width, 2 * width, 2),
            ("layer3.0", 2 * width, 4 * width, 2)]


def has_downsample(cin, planes, stride):
    """torchvision's (and the .mdl's) rule: a 1x1 conv + bn on the shortcut when the shape changes."""
    return stride != 1 or cin != planes


def _bn_shapes(name, channels):
    """A BatchNorm2d's parameters and buffers."""
    return {f"{name}.weight": (channels,), f"{name}.bias": (channels,),
            f"{name}.running_mean": (channels,), f"{name}.running_var": (channels,),
            f"{name}.num_batches_tracked": ()}


def shapes(width):
    """{name: shape} of the whole state (parameters and buffers) in torchvision's state_dict order."""
    out = {"conv1.weight": (width, 1, 3, 3), **_bn_shapes("bn1", width)}
    for n, cin, planes, stride in blocks(width):
        out[f"{n}.conv1.weight"] = (planes, cin, 3, 3)
        out.update(_bn_shapes(f"{n}.bn1", planes))
        out[f"{n}.conv2.weight"] = (planes, planes, 3, 3)
        out.update(_bn_shapes(f"{n}.bn2", planes))
        if has_downsample(cin, planes, stride):
            out[f"{n}.downsample.0.weight"] = (planes, cin, 1, 1)
            out.update(_bn_shapes(f"{n}.downsample.1", planes))
    out.update({"fc.weight": (CLASSES, 4 * width), "fc.bias": (CLASSES,)})
    return out


def is_buffer(name):
    """Running statistics and num_batches_tracked: state, not parameters."""
    return name.rsplit(".", 1)[1] in BN_BUFFERS


def init_state(width, rng):
    """PyTorch's default init (see the module docstring), float64 values of float32 precision."""
    table = shapes(width)
    state = {}
    for name, shape in table.items():
        layer, leaf = name.rsplit(".", 1)
        if leaf == "num_batches_tracked":
            state[name] = np.zeros((), np.int64)
        elif f"{layer}.running_mean" in table:          # a batch norm
            state[name] = np.full(shape, 1.0 if leaf in ("weight", "running_var") else 0.0)
        else:                                           # a conv or the linear layer
            bound = 1 / math.sqrt(math.prod(table[layer + ".weight"][1:]))
            state[name] = rng.uniform(-bound, bound, shape).astype(np.float32).astype(np.float64)
    return state


def check_state(state, width):
    """Raises ValueError naming every missing, extra or wrongly shaped tensor."""
    expected = shapes(width)
    problems = [f"missing {n}{list(s)}" for n, s in expected.items() if n not in state]
    problems += [f"unexpected {n}" for n in state if n not in expected]
    problems += [f"{n} is {list(state[n].shape)}, expected {list(s)}"
                 for n, s in expected.items() if n in state and state[n].shape != s]
    if problems:
        raise ValueError(f"the file does not fit --width {width}: " + "; ".join(problems))


def conv_bn(x, p, conv, bn, stride, padding, training, updates):
    """bn(conv(x)) (conv without bias); records bn's new buffers in updates.
    The backward returns dx and {name: gradient}."""
    h, conv_back = layers.conv2d(x, p[conv + ".weight"], None, stride, padding)
    y, bn_back, mean, var = layers.batch_norm(h, p[bn + ".weight"], p[bn + ".bias"],
                                              p[bn + ".running_mean"], p[bn + ".running_var"], training)
    if training:
        updates[bn + ".running_mean"], updates[bn + ".running_var"] = mean, var
        updates[bn + ".num_batches_tracked"] = p[bn + ".num_batches_tracked"] + 1

    def backward(dy):
        g = {}
        dh, g[bn + ".weight"], g[bn + ".bias"] = bn_back(dy)
        dx, g[conv + ".weight"], _ = conv_back(dh)
        return dx, g

    return y, backward


def basic_block(x, p, n, planes, stride, training, updates):
    """torchvision's BasicBlock (expansion 1) and its backward."""
    h, c1_back = conv_bn(x, p, n + ".conv1", n + ".bn1", stride, 1, training, updates)
    r, r1_back = layers.relu(h)
    out, c2_back = conv_bn(r, p, n + ".conv2", n + ".bn2", 1, 1, training, updates)
    down = has_downsample(x.shape[1], planes, stride)
    if down:
        shortcut, d_back = conv_bn(x, p, n + ".downsample.0", n + ".downsample.1", stride, 0,
                                   training, updates)
    else:
        shortcut = x
    y, r2_back = layers.relu(out + shortcut)

    def backward(dy):
        dz = r2_back(dy)
        dr, g = c2_back(dz)
        dx, g1 = c1_back(r1_back(dr))
        g.update(g1)
        if down:
            dxs, gd = d_back(dz)
            g.update(gd)
        else:
            dxs = dz
        return dx + dxs, g

    return y, backward


def forward(p, x, training):
    """(logits, backward(dlogits) -> {parameter: gradient}, {buffer: new value} (empty in eval))."""
    updates = {}
    h, stem_back = conv_bn(x, p, "conv1", "bn1", 1, 1, training, updates)
    h, relu_back = layers.relu(h)
    backs = []
    for n, _, planes, stride in blocks(p["conv1.weight"].shape[0]):
        h, back = basic_block(h, p, n, planes, stride, training, updates)
        backs.append(back)
    spatial = h.shape[2] * h.shape[3]
    pooled = h.mean(axis=(2, 3))
    logits, fc_back = layers.linear(pooled, p["fc.weight"], p["fc.bias"])

    def backward(dlogits):
        g = {}
        dpooled, g["fc.weight"], g["fc.bias"] = fc_back(dlogits)
        dh = np.broadcast_to((dpooled / dpooled.dtype.type(spatial))[:, :, None, None], h.shape)
        for back in reversed(backs):
            dh, gb = back(dh)
            g.update(gb)
        _, gs = stem_back(relu_back(dh))
        g.update(gs)
        return g

    return logits, backward, updates


def loss_and_grads(p, x, labels, training=True):
    """Mean cross-entropy, {parameter: gradient} and the buffers' new values."""
    logits, backward, updates = forward(p, x, training)
    loss, ce_back = layers.cross_entropy(logits, labels)
    return float(loss), backward(ce_back()), updates


def model_input(images, dtype):
    """f32(image)/255 as the .mdl does, in `dtype` (a program built with
    --widen-f64 divides in f64), reshaped [N, 1, H, W]."""
    if images.ndim != 3:
        raise ValueError(f"images must be [N, H, W] u8, got {list(images.shape)}")
    dtype = np.dtype(dtype).type
    return (images.astype(dtype) / dtype(255.0))[:, None]


def load_state(path, width, dtype):
    """(state with floats in dtype and num_batches_tracked int64, the file's float dtype)."""
    raw = safetensors_np.load(path)[0]
    check_state(raw, width)
    file_dtype = raw["conv1.weight"].dtype
    state = {n: v.astype(np.int64) if n.endswith("num_batches_tracked") else v.astype(dtype)
             for n, v in raw.items()}
    return state, file_dtype


def save_state(path, state, float_dtype):
    """Every parameter and buffer: floats as float_dtype, num_batches_tracked as I64 scalars."""
    safetensors_np.save(path, {n: np.asarray(v, np.int64) if n.endswith("num_batches_tracked")
                               else np.asarray(v).astype(float_dtype) for n, v in state.items()})


def train(a):
    """The train subcommand: SGD steps in file order, losses to --out-losses, the state to --save."""
    dtype = DTYPES[a.dtype or "f64"]
    state, file_dtype = load_state(a.init, a.width, dtype)
    images, labels = dataset.load_split(a.images, a.labels)
    per_epoch = len(images) // a.batch
    if per_epoch == 0:
        raise ValueError(f"{len(images)} samples make no full batch of {a.batch}")
    params = {n: v for n, v in state.items() if not is_buffer(n)}
    opt = optim.SGD(momentum=a.momentum, weight_decay=a.weight_decay)
    schedule = ("warmup_cosine", {"warmup": a.warmup, "min_lr": 0.0})
    losses = []
    for step in range(1, a.steps + 1):
        start = ((step - 1) % per_epoch) * a.batch
        rows = slice(start, start + a.batch)
        loss, grads, updates = loss_and_grads(state, model_input(images[rows], dtype), labels[rows])
        losses.append(loss)
        opt.step(params, grads, optim.scheduled_lr(schedule, a.lr, step, a.steps))
        state.update(updates)
    with open(a.out_losses, "w") as f:
        json.dump({"loss": losses}, f)
    if a.save:
        save_state(a.save, state, file_dtype)
    print(f"resnet: {a.steps} steps, last loss {losses[-1] if losses else float('nan')}")
    return 0


def evaluate(a):
    """The eval subcommand: loss and accuracy of the running-statistics model over full batches."""
    dtype = DTYPES[a.dtype or "f64"]
    state, _ = load_state(a.weights, a.width, dtype)
    images, labels = dataset.load_split(a.images, a.labels)
    full = len(images) // a.batch
    count = full if a.batches is None else min(a.batches, full)
    if count == 0:
        raise ValueError(f"{len(images)} samples make no full batch of {a.batch}")
    losses, correct = [], 0
    for i in range(count):
        rows = slice(i * a.batch, (i + 1) * a.batch)
        logits, _, _ = forward(state, model_input(images[rows], dtype), training=False)
        loss, _ = layers.cross_entropy(logits, labels[rows])
        losses.append(float(loss))
        correct += int((np.argmax(logits, axis=-1) == labels[rows]).sum())
    print(f"loss {float(np.mean(losses)):.17g}")
    print(f"accuracy {correct / (count * a.batch):.17g}")
    return 0


def main(argv=None):
    """Entry point: 0 on success, 2 on bad usage or input."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["init", "train", "eval"])
    ap.add_argument("path", nargs="?", help="init: the file to write")
    ap.add_argument("--width", type=int, required=True, help="channels of the first stage (-D WIDTH)")
    for name in ("batch", "steps", "warmup", "seed"):
        ap.add_argument("--" + name, type=int, default=0)
    ap.add_argument("--batches", type=int, help="eval: the first K full batches (default all)")
    for name in ("lr", "momentum", "weight-decay"):
        ap.add_argument("--" + name, type=float, default=0.0)
    for name in ("init", "weights", "images", "labels", "out-losses", "save"):
        ap.add_argument("--" + name)
    ap.add_argument("--dtype", choices=sorted(DTYPES),
                    help="init: of the file (f64 for a program built with --widen-f64; default f32); "
                         "train, eval: of the arithmetic (default f64)")
    a = ap.parse_args(argv)
    needed = {"init": ["path"], "train": ["init", "images", "labels", "out_losses", "batch"],
              "eval": ["weights", "images", "labels", "batch"]}[a.command]
    missing = [n for n in needed if not getattr(a, n)]
    if missing:
        ap.error(f"{a.command} needs " + ", ".join("--" + n.replace("_", "-") for n in missing))
    try:
        if a.command == "init":
            save_state(a.path, init_state(a.width, np.random.default_rng(a.seed)), DTYPES[a.dtype or "f32"])
            return 0
        return train(a) if a.command == "train" else evaluate(a)
    except (OSError, ValueError) as e:
        print(f"resnet: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
