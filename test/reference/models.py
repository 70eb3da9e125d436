"""The reference's networks: examples/fashion_mlp.mdl's MLP, stdlib nn.lenet, and a configurable small CNN.

All three are one shape of network: conv layers (each conv → activation →
optional pool), flatten, then linear layers with the activation between them.
Parameter names are those modelc gives: convolution i (1-based) is `conv{i}`,
linear layer j is `fc{j}`, each with `.weight` (PyTorch layout) and `.bias`.

How the names were derived from the .mdl sources (and checked with
`modelc examples/lenet.mdl --emit=params` / `examples/fashion_mlp.mdl`):
- fashion_mlp.mdl's block mlp calls `nn.linear(x, hidden) as fc1` and
  `nn.linear(h, classes) as fc2`; nn.linear creates `param weight: f32[out, n]`
  and `param bias: f32[out]` in the scope its `as` opens, giving fc1.weight
  [256, 784], fc1.bias [256], fc2.weight [10, 256], fc2.bias [10].
- nn.lenet calls `conv2d(x, 20, 5) as conv1` and `conv2d(p1, 50, 5) as conv2`
  (stdlib nn.conv2d: `param weight: f32[cout, cin, k, k]`, `param bias: f32[cout]`,
  stride 1, padding 0), then `linear(flatten(p2), 500) as fc1` and
  `linear(h, classes) as fc2`: conv1.weight [20, 1, 5, 5], conv1.bias [20],
  conv2.weight [50, 20, 5, 5], conv2.bias [50], fc1.weight [500, 800],
  fc1.bias [500], fc2.weight [10, 500], fc2.bias [10]; 431,080 in all.
"""
import json
import math
import os
from dataclasses import dataclass, fields

import numpy as np

import amp
import layers

ACTIVATIONS = {
    "relu": layers.relu,
    "tanh": layers.tanh,
    "gelu": layers.gelu,
    "gelu_tanh": lambda x: layers.gelu(x, approximate="tanh"),
}


@dataclass(frozen=True)
class Conv:
    """One conv layer: conv2d(out channels, square kernel k, ...) → activation → pool."""
    out: int
    k: int
    stride: int = 1
    padding: int = 0
    dilation: int = 1
    groups: int = 1
    pool: str = "max"              # "max", "avg" or "none"
    pool_k: int = 2
    pool_stride: int = 0           # 0: the pool kernel, as torch's default
    pool_padding: int = 0
    count_include_pad: bool = True


@dataclass(frozen=True)
class Net:
    """A network: convs, then linear layers of widths hidden + (classes,)."""
    convs: tuple = ()
    hidden: tuple = ()
    classes: int = 10
    activation: str = "relu"


def mlp(hidden=256, classes=10):
    """examples/fashion_mlp.mdl's mlp: fc1 → relu → fc2 on flattened images."""
    return Net(hidden=(hidden,), classes=classes)


def lenet(classes=10):
    """stdlib nn.lenet exactly: conv 20@5x5 → relu → max_pool 2; conv 50@5x5 → relu → max_pool 2;
    flatten (800) → fc1 500 → relu → fc2 classes. No padding, stride 1, max pooling with stride 2."""
    return Net(convs=(Conv(out=20, k=5), Conv(out=50, k=5)), hidden=(500,), classes=classes)


def net_from_json(text):
    """A Net from JSON such as {"convs": [{"out": 4, "k": 3, "padding": 1, "pool": "avg"}],
    "hidden": [16], "classes": 4, "activation": "tanh"}; unknown keys are errors."""
    spec = json.loads(text)
    _check_keys(spec, Net, "network")
    convs = []
    for conv in spec.get("convs", []):
        _check_keys(conv, Conv, "conv layer")
        convs.append(Conv(**conv))
    net = Net(convs=tuple(convs), hidden=tuple(spec.get("hidden", ())),
              classes=spec.get("classes", 10), activation=spec.get("activation", "relu"))
    if net.activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {net.activation!r}; known: {sorted(ACTIVATIONS)}")
    if any(conv.pool not in ("max", "avg", "none") for conv in net.convs):
        raise ValueError("a conv layer's pool must be 'max', 'avg' or 'none'")
    return net


def _check_keys(spec, cls, what):
    """Rejects keys the dataclass does not have, so a typo cannot fall back to a default."""
    unknown = set(spec) - {f.name for f in fields(cls)}
    if unknown:
        raise ValueError(f"unknown {what} keys {sorted(unknown)}")


def config_for(model, params, cnn_config=None):
    """The Net for --model mlp|lenet|cnn; mlp and lenet widths come from the parameters' shapes,
    a cnn from cnn_config: JSON text or the path of a file holding it."""
    if model == "mlp":
        return mlp(hidden=_out_features(params, "fc1"), classes=_out_features(params, "fc2"))
    if model == "lenet":
        return lenet(classes=_out_features(params, "fc2"))
    if model == "cnn":
        if cnn_config is None:
            raise ValueError("--model cnn needs --cnn-config")
        if os.path.isfile(cnn_config):
            with open(cnn_config, encoding="utf-8") as f:
                cnn_config = f.read()
        return net_from_json(cnn_config)
    raise ValueError(f"unknown model {model!r}")


def _out_features(params, layer):
    """Rows of a linear layer's weight, or a clear error when the file lacks it."""
    if f"{layer}.weight" not in params:
        raise ValueError(f"the parameters have no {layer}.weight; found {sorted(params)}")
    return params[f"{layer}.weight"].shape[0]


def _conv_out(size, k, stride, padding, dilation=1):
    """Output length of a convolution or pooling window sweep (ceil_mode=False)."""
    return (size + 2 * padding - dilation * (k - 1) - 1) // stride + 1


def param_shapes(net, input_shape):
    """{name: shape} in creation order for per-sample input_shape ([C, H, W], or [n] without convs)."""
    shapes = {}
    c, *spatial = input_shape
    for i, conv in enumerate(net.convs, 1):
        shapes[f"conv{i}.weight"] = (conv.out, c // conv.groups, conv.k, conv.k)
        shapes[f"conv{i}.bias"] = (conv.out,)
        c = conv.out
        spatial = [_conv_out(s, conv.k, conv.stride, conv.padding, conv.dilation) for s in spatial]
        if conv.pool != "none":
            stride = conv.pool_stride or conv.pool_k
            spatial = [_conv_out(s, conv.pool_k, stride, conv.pool_padding) for s in spatial]
        if min(spatial) < 1:
            raise ValueError(f"input {list(input_shape)} is too small: conv{i} leaves {spatial}")
    width = c * math.prod(spatial)
    for j, out in enumerate(net.hidden + (net.classes,), 1):
        shapes[f"fc{j}.weight"] = (out, width)
        shapes[f"fc{j}.bias"] = (out,)
        width = out
    return shapes


def check_params(params, net, input_shape):
    """Raises ValueError naming every missing, extra or wrongly shaped parameter."""
    expected = param_shapes(net, input_shape)
    problems = [f"missing {n}{list(s)}" for n, s in expected.items() if n not in params]
    problems += [f"unexpected {n}" for n in params if n not in expected]
    problems += [f"{n} is {list(params[n].shape)}, expected {list(s)}"
                 for n, s in expected.items() if n in params and params[n].shape != s]
    if problems:
        raise ValueError("parameters do not fit the model: " + "; ".join(problems))


def init_params(net, input_shape, rng, dtype=np.float32):
    """PyTorch's default init, as nn.linear/nn.conv2d: weight and bias uniform(±1/sqrt(fan_in))."""
    shapes = param_shapes(net, input_shape)
    params = {}
    for name, shape in shapes.items():
        layer = name.rsplit(".", 1)[0]
        bound = 1 / math.sqrt(math.prod(shapes[f"{layer}.weight"][1:]))
        params[name] = rng.uniform(-bound, bound, shape).astype(dtype)
    return params


def forward(params, net, x, precision="f32"):
    """Logits of net on x, and a backward closure from d(logits) to {name: gradient}.

    precision "bf16" or "f16" computes as modelc's mixed precision (amp.py),
    for nets of relu and max pooling only."""
    L = layers
    act = ACTIVATIONS[net.activation]
    if precision in amp.ROUNDING:
        if net.activation != "relu" or any(conv.pool not in ("max", "none") for conv in net.convs):
            raise ValueError(f"the {precision} reference has relu and max pooling only")
        L = amp.rules(precision)
        act = L.relu
    elif precision != "f32":
        raise ValueError(f"unknown precision {precision!r}")
    tape = []      # (backward closure, names of the parameter gradients it returns)

    def run(result, names=()):
        y, backward = result
        tape.append((backward, names))
        return y

    h = x
    for i, conv in enumerate(net.convs, 1):
        w, b = f"conv{i}.weight", f"conv{i}.bias"
        h = run(L.conv2d(h, params[w], params[b], conv.stride, conv.padding,
                         conv.dilation, conv.groups), (w, b))
        h = run(act(h))
        if conv.pool == "max":
            h = run(L.max_pool2d(h, conv.pool_k, conv.pool_stride or None, conv.pool_padding))
        elif conv.pool == "avg":
            h = run(layers.avg_pool2d(h, conv.pool_k, conv.pool_stride or None, conv.pool_padding,
                                      conv.count_include_pad))
    h = run(layers.flatten(h))
    depth = len(net.hidden) + 1
    for j in range(1, depth + 1):
        w, b = f"fc{j}.weight", f"fc{j}.bias"
        h = run(L.linear(h, params[w], params[b]), (w, b))
        if j < depth:
            h = run(act(h))

    def backward(dlogits):
        grads, d = {}, dlogits
        for back, names in reversed(tape):
            if names:
                d, *param_grads = back(d)
                grads.update(zip(names, param_grads))
            else:
                d = back(d)
        return grads

    return h, backward


def loss_and_grads(params, net, x, labels, precision="f32", dloss=None):
    """Mean cross-entropy of net on (x, labels) and its gradient for every parameter.

    `dloss` seeds the backward (default 1): f16 training passes the loss
    scale over the micro-batches, so that the 16-bit gradients carry it."""
    logits, backward = forward(params, net, x, precision)
    cross_entropy = (amp.rules(precision).cross_entropy if precision in amp.ROUNDING
                     else layers.cross_entropy)
    loss, loss_backward = cross_entropy(logits, labels)
    return loss, backward(loss_backward() if dloss is None else loss_backward(dloss))
