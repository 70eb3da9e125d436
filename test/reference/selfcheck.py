#!/usr/bin/python3
"""Proves the reference before it judges anything: gradients by finite differences, forwards by naive loops,
optimizers by closed-form steps, file readers by round trips and corrupt files.

Gradient checks run in float64 with central differences (h = 1e-6) and pass
when the largest |numeric − analytic| over the probed coordinates, divided by
the largest |gradient| among them, is below 1e-6. Probes are every coordinate of small inputs, or a
random sample plus the largest analytic gradients of large ones. Ends with
'N passed, N failed'; exit status 1 when anything failed.
"""
import gzip
import io
import json
import math
import os
import sys
import tempfile

import numpy as np

import amp
import attn
import encoder
import compare
import grad_scaler
import idx_np
import layers
import lstm_lm
import models
import optim
import resnet
import safetensors_np
import train_ref

H = 1e-6
GRAD_TOL = 1e-6
EXACT_TOL = 1e-12


class Report:
    """Collects named results and prints one line each."""

    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, error, tol):
        """Records error <= tol as a pass."""
        ok = bool(error <= tol)
        self.passed += ok
        self.failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name:<44} error {error:.2e} (tol {tol:.0e})")

    def expect(self, name, condition):
        """Records a yes/no fact."""
        self.check(name, 0.0 if condition else math.inf, 0.0)


def probe_indices(analytic, rng, count=12):
    """Every index of a small array; else a random sample plus the largest |analytic| entries."""
    if analytic.size <= 3 * count:
        return list(np.ndindex(analytic.shape))
    flat = set(rng.choice(analytic.size, count, replace=False))
    flat |= set(np.argsort(-np.abs(analytic), axis=None)[:count // 2])
    return [np.unravel_index(i, analytic.shape) for i in sorted(flat)]


def grad_error(f, array, analytic, rng, h=H, floor=0.0):
    """Max relative gap between central differences (step h) of scalar f() in array and the analytic
    gradient, relative to the largest |gradient| probed or to floor when that is larger."""
    numeric, exact = [], []
    for index in probe_indices(analytic, rng):
        saved = array[index]
        array[index] = saved + h
        up = f()
        array[index] = saved - h
        down = f()
        array[index] = saved
        numeric.append((up - down) / (2 * h))
        exact.append(analytic[index])
    numeric, exact = np.array(numeric), np.array(exact)
    scale = max(np.abs(numeric).max(), np.abs(exact).max(), floor)
    return 0.0 if scale == 0 else np.abs(numeric - exact).max() / scale


def check_layer(report, name, layer, inputs, rng):
    """Checks every input's gradient of sum(layer(*inputs) · r) for a fixed random r."""
    y, backward = layer(*inputs)
    r = rng.standard_normal(np.shape(y))
    grads = backward(r)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, (array, grad) in enumerate(zip(inputs, grads)):
        error = grad_error(lambda: float((layer(*inputs)[0] * r).sum()), array, grad, rng)
        report.check(f"grad {name} input {i}", error, GRAD_TOL)


def check_loss(report, name, loss_fn, inputs, rng):
    """Checks the gradients of a scalar loss (its backward takes dloss)."""
    _, backward = loss_fn(*inputs)
    grads = backward(1.0)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, (array, grad) in enumerate(zip(inputs, grads)):
        error = grad_error(lambda: float(loss_fn(*inputs)[0]), array, grad, rng)
        report.check(f"grad {name} input {i}", error, GRAD_TOL)


def check_layer_gradients(report, rng):
    """Finite differences for every layer, with the awkward settings each one has."""
    n = rng.standard_normal
    check_layer(report, "linear", layers.linear, [n((2, 3, 5)), n((4, 5)), n(4)], rng)
    for name, fn in [("relu", layers.relu), ("tanh", layers.tanh), ("gelu erf", layers.gelu),
                     ("gelu tanh", lambda x: layers.gelu(x, "tanh"))]:
        check_layer(report, name, fn, [n((3, 7))], rng)
    check_layer(report, "flatten", layers.flatten, [n((2, 3, 4))], rng)
    check_layer(report, "reshape", lambda x: layers.reshape(x, (4, -1)), [n((2, 3, 4))], rng)
    check_layer(report, "conv2d stride 2 pad 1", lambda x, w, b: layers.conv2d(x, w, b, 2, 1),
                [n((2, 3, 7, 6)), n((4, 3, 3, 3)), n(4)], rng)
    check_layer(report, "conv2d dilation 2 groups 2",
                lambda x, w, b: layers.conv2d(x, w, b, (1, 2), (2, 1), 2, groups=2),
                [n((2, 4, 6, 7)), n((6, 2, 3, 2)), n(6)], rng)
    check_layer(report, "max_pool2d k3 s2 p1 (overlap)", lambda x: layers.max_pool2d(x, 3, 2, 1),
                [n((2, 2, 7, 6))], rng)
    check_layer(report, "max_pool2d k2", lambda x: layers.max_pool2d(x, 2), [n((2, 3, 6, 6))], rng)
    for include in (True, False):
        check_layer(report, f"avg_pool2d k3 s2 p1 include_pad={include}",
                    lambda x, inc=include: layers.avg_pool2d(x, 3, 2, 1, inc), [n((2, 2, 7, 6))], rng)
    check_layer(report, "softmax axis -1", layers.softmax, [n((3, 5))], rng)
    check_layer(report, "log_softmax axis 1", lambda x: layers.log_softmax(x, axis=1), [n((2, 4, 3))], rng)
    check_layer(report, "layer_norm", layers.layer_norm, [n((2, 3, 6)), n(6), n(6)], rng)
    labels = np.array([[1, -100, 4], [0, 2, -100]])
    check_loss(report, "cross_entropy with ignore_index", lambda z: layers.cross_entropy(z, labels),
               [n((2, 3, 5))], rng)
    check_loss(report, "mse_loss", layers.mse_loss, [n((3, 4)), n((3, 4))], rng)


SMALL_CNN = json.dumps({
    "convs": [{"out": 3, "k": 3, "padding": 1,
               "pool": "avg", "pool_k": 3, "pool_stride": 2, "pool_padding": 1},
              {"out": 4, "k": 2, "stride": 2, "pool": "max", "pool_k": 2, "pool_stride": 1}],
    "hidden": [6], "classes": 5, "activation": "tanh"})


def check_model_gradients(report, rng):
    """Finite differences of the mean cross-entropy in every parameter tensor of each model."""
    cases = [("mlp", models.mlp(hidden=7, classes=5), (16,)),
             ("lenet", models.lenet(), (1, 28, 28)),
             ("cnn", models.net_from_json(SMALL_CNN), (2, 9, 9)),
             ("cnn gelu", models.Net(convs=(models.Conv(out=2, k=3, pool="none"),), hidden=(5,), classes=3,
                                     activation="gelu"), (1, 5, 5))]
    for name, net, shape in cases:
        params = models.init_params(net, shape, rng, np.float64)
        x = rng.random((3,) + shape)
        labels = rng.integers(0, net.classes, 3)
        _, grads = models.loss_and_grads(params, net, x, labels)
        for pname, array in params.items():
            error = grad_error(lambda: float(models.loss_and_grads(params, net, x, labels)[0]),
                               array, grads[pname], rng)
            report.check(f"grad {name} {pname}", error, GRAD_TOL)


def check_amp(report, rng):
    """bf16 rounding on known values; bf16 models give bf16 values near the f32 model's."""
    values = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1.0039064, -2.5, np.nan], np.float32)
    want = np.array([1.0, 1.0, 1 + 2 ** -6, 1 + 2 ** -7, -2.5, np.nan], np.float32)
    got = amp.bf16(values)
    report.expect("bf16 rounds to nearest, ties to even",
                  np.array_equal(got[:-1], want[:-1]) and np.isnan(got[-1]))
    for name, net, shape in [("mlp", models.mlp(hidden=7, classes=5), (16,)),
                             ("cnn", models.net_from_json(SMALL_CNN.replace("avg", "max")
                                                          .replace("tanh", "relu")), (2, 9, 9))]:
        params = models.init_params(net, shape, rng, np.float32)
        x = rng.random((3,) + shape).astype(np.float32)
        labels = rng.integers(0, net.classes, 3)
        logits, _ = models.forward(params, net, x, "bf16")
        report.expect(f"bf16 {name} logits are bf16 values", np.array_equal(amp.bf16(logits), logits))
        loss16, grads16 = models.loss_and_grads(params, net, x, labels, "bf16")
        loss32, grads32 = models.loss_and_grads(params, net, x, labels)
        report.check(f"bf16 {name} loss near f32's", abs(loss16 - loss32) / abs(loss32), 2e-2)
        worst = max(np.max(np.abs(grads16[n] - grads32[n])) / (np.max(np.abs(grads32[n])) + 1e-30)
                    for n in params)
        report.check(f"bf16 {name} gradients near f32's", worst, 5e-2)
        report.expect(f"bf16 {name} gradients are bf16 values",
                      all(np.array_equal(amp.bf16(g), g) for g in grads16.values()))
        report.expect(f"bf16 {name} differs from f32",
                      any(not np.array_equal(grads16[n], grads32[n]) for n in params))


def check_f16(report, rng):
    """f16 rounding on known values, GradScaler's rule by hand, and f16 training's skipped steps."""
    values = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65504, 65519.99, 65520, 2 ** -24,
                       2 ** -26, -3.0], np.float32)
    want = np.array([1.0, 1 + 2 ** -9, 65504, 65504, np.inf, 2 ** -24, 0, -3.0], np.float32)
    report.expect("f16 rounds to nearest even, overflows to inf past 65504, keeps subnormals",
                  np.array_equal(amp.f16(values), want))
    s = grad_scaler.GradScaler(65536.0, 2.0, 0.5, 3)
    seen = []
    for inf in (True, False, False, False, False, True, False):
        s.update(inf)
        seen.append(float(s.scale))
    report.expect("GradScaler: x0.5 on inf, x2 after 3 finite steps, tracker reset by inf",
                  seen == [32768, 32768, 32768, 65536, 65536, 32768, 32768])
    top = grad_scaler.GradScaler(float(np.finfo(np.float32).max), 2.0, 0.5, 1)
    top.update(False)
    report.expect("GradScaler: no growth past the largest f32",
                  float(top.scale) == float(np.finfo(np.float32).max))
    # A step whose scaled gradients overflow changes nothing: train_ref at an
    # initial scale that overflows at once; a modest scale trains.
    with tempfile.TemporaryDirectory() as tmp:
        images = rng.integers(0, 256, (64, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, 64).astype(np.int64)
        np.save(os.path.join(tmp, "x.npy"), images)
        np.save(os.path.join(tmp, "y.npy"), labels)
        net = models.mlp(hidden=8, classes=10)
        params = models.init_params(net, (784,), rng, np.float32)
        init = os.path.join(tmp, "init.safetensors")
        safetensors_np.save(init, params)

        def run(name, init_scale, steps):
            out = os.path.join(tmp, name)
            code = train_ref.main(["--model", "mlp", "--init", init, "--data-images",
                                   os.path.join(tmp, "x.npy"), "--data-labels",
                                   os.path.join(tmp, "y.npy"), "--batch", "4", "--steps", str(steps),
                                   "--optimizer", "adam", "--lr", "1e-3", "--precision", "f16",
                                   "--init-scale", str(init_scale), "--growth-interval", "1000",
                                   "--out-losses", out + ".json", "--out-params",
                                   out + ".safetensors"])
            with open(out + ".json", encoding="utf-8") as f:
                return code, json.load(f), safetensors_np.load(out + ".safetensors")[0]

        code, log, skipped_first = run("huge", 2.0 ** 60, 1)
        report.expect("f16: a scale of 2^60 overflows and skips the first step",
                      code == 0 and log["skipped_steps"] == [1] and log["loss_scale"] == [2.0 ** 60])
        report.expect("f16: a skipped step leaves the parameters bitwise unchanged",
                      all(np.array_equal(skipped_first[n], params[n].astype(np.float32))
                          for n in params))
        _, log, once = run("once", 2.0 ** 10, 1)
        report.expect("f16: a finite step at scale 2^10 is applied", log["skipped_steps"] == [0]
                      and not all(np.array_equal(once[n], params[n]) for n in params))


def check_attn(report, rng):
    """attn.py's hand-written backward against central differences in float64."""
    params = {n: a.astype(np.float64) for n, a in attn.init(1).items()}
    tokens = rng.integers(0, attn.V, (2, attn.T + 1))
    idx, labels = tokens[:, :attn.T], tokens[:, 1:]
    _, grads = attn.loss_and_grads(params, idx, labels, "f32")
    h, worst = 1e-6, 0.0
    for name in params:
        flat = params[name].reshape(-1)
        for i in rng.choice(flat.size, 3, replace=False):
            keep = flat[i]
            flat[i] = keep + h
            up, _ = attn.loss_and_grads(params, idx, labels, "f32")
            flat[i] = keep - h
            down, _ = attn.loss_and_grads(params, idx, labels, "f32")
            flat[i] = keep
            numeric = (up - down) / (2 * h)
            analytic = float(grads[name].reshape(-1)[i])
            worst = max(worst, abs(numeric - analytic) / max(abs(numeric), abs(analytic), 1e-3))
    report.check("attn: every parameter's gradient against finite differences", worst, 1e-4)


def check_encoder(report, rng):
    """encoder.py's hand-written backward (padding masks, two layers)
    against central differences in float64."""
    params = {n: 0.3 * rng.standard_normal(s) for n, s in encoder.shapes(6, 8, 2, 3).items()}
    tokens = np.zeros((3, 6), np.int64)
    for row, length in enumerate((6, 3, 1)):
        tokens[row, :length] = rng.integers(1, 256, length)
    labels = rng.integers(0, 3, 3)
    _, grads = encoder.loss_and_grads(params, tokens, labels, 2, 2)
    h, worst = 1e-6, 0.0
    for name in params:
        flat = params[name].reshape(-1)
        # tok.weight: rows of tokens that occur, and of one that does not.
        candidates = (np.concatenate([tokens[tokens > 0] * 8, [0]]) if name == "tok.weight"
                      else np.arange(flat.size))
        for i in rng.choice(candidates, 3, replace=False):
            keep = flat[i]
            flat[i] = keep + h
            up, _ = encoder.loss_and_grads(params, tokens, labels, 2, 2)
            flat[i] = keep - h
            down, _ = encoder.loss_and_grads(params, tokens, labels, 2, 2)
            flat[i] = keep
            numeric = (up - down) / (2 * h)
            analytic = float(grads[name].reshape(-1)[i])
            worst = max(worst, abs(numeric - analytic) / max(abs(numeric), abs(analytic), 1e-3))
    report.check("encoder: every parameter's gradient against finite differences", worst, 1e-4)


def lstm_flat(*inputs):
    """layers.lstm with its three results as one [b, t*h + 2h] array, for check_layer."""
    (out, h_n, c_n), back = layers.lstm(*inputs)
    b, t, h = out.shape
    y = np.concatenate([out.reshape(b, t * h), h_n, c_n], axis=1)

    def backward(dy):
        grads = back(dy[:, :t * h].reshape(b, t, h), dy[:, t * h:t * h + h], dy[:, t * h + h:])
        return tuple(g for g in grads if g is not None)

    return y, backward


def gru_flat(*inputs):
    """layers.gru with its two results as one [b, t*h + h] array, for check_layer."""
    (out, h_n), back = layers.gru(*inputs)
    b, t, h = out.shape
    y = np.concatenate([out.reshape(b, t * h), h_n], axis=1)

    def backward(dy):
        grads = back(dy[:, :t * h].reshape(b, t, h), dy[:, t * h:])
        return tuple(g for g in grads if g is not None)

    return y, backward


def check_lstm(report, rng):
    """layers.lstm and layers.gru (every input and parameter, with and without biases, through the
    output and the last state) and lstm_lm.py's model by finite differences; the cells against a
    closed form."""
    n = rng.standard_normal
    check_layer(report, "lstm", lstm_flat, [n((2, 4, 3)), n((2, 5)), n((2, 5)), 0.5 * n((20, 3)),
                                            0.5 * n((20, 5)), n(20), n(20)], rng)
    check_layer(report, "lstm without biases", lstm_flat,
                [n((3, 2, 2)), n((3, 4)), n((3, 4)), 0.5 * n((16, 2)), 0.5 * n((16, 4))], rng)
    # Zero weights: every gate is sigmoid(0) = 1/2 and g = tanh(0) = 0, so c_t = c0 / 2^t and
    # h_t = tanh(c_t) / 2.
    c0 = n((2, 3))
    (out, _, c_n), _ = layers.lstm(n((2, 4, 5)), n((2, 3)), c0, np.zeros((12, 5)), np.zeros((12, 3)))
    expected = np.stack([np.tanh(c0 / 2 ** (s + 1)) / 2 for s in range(4)], axis=1)
    report.check("lstm: zero weights halve the cell each step", np.abs(out - expected).max(), 1e-15)
    report.check("lstm: c_n of zero weights", np.abs(c_n - c0 / 16).max(), 1e-15)
    check_layer(report, "gru", gru_flat, [n((2, 4, 3)), n((2, 5)), 0.5 * n((15, 3)),
                                          0.5 * n((15, 5)), n(15), n(15)], rng)
    check_layer(report, "gru without biases", gru_flat,
                [n((3, 2, 2)), n((3, 4)), 0.5 * n((12, 2)), 0.5 * n((12, 4))], rng)
    # Zero weights: r = z = 1/2 and n = tanh(0) = 0, so h_t = h0 / 2^t.
    h0 = n((2, 3))
    (out, _), _ = layers.gru(n((2, 4, 5)), h0, np.zeros((9, 5)), np.zeros((9, 3)))
    expected = np.stack([h0 / 2 ** (s + 1) for s in range(4)], axis=1)
    report.check("gru: zero weights halve the state each step", np.abs(out - expected).max(), 1e-15)

    params = {name: 0.3 * n(shape) for name, shape in lstm_lm.shapes(11, 4, 3, 2).items()}
    ids = rng.integers(0, 11, (2, 5))
    targets = rng.integers(0, 11, (2, 5))
    _, grads = lstm_lm.loss_and_grads(params, ids, targets, 2)
    h, worst = 1e-6, 0.0
    for name in params:
        flat = params[name].reshape(-1)
        candidates = (ids.reshape(-1) * 4 if name == "encoder.weight" else np.arange(flat.size))
        for i in rng.choice(candidates, 3, replace=False):
            keep = flat[i]
            flat[i] = keep + h
            up, _ = lstm_lm.loss_and_grads(params, ids, targets, 2)
            flat[i] = keep - h
            down, _ = lstm_lm.loss_and_grads(params, ids, targets, 2)
            flat[i] = keep
            numeric = (up - down) / (2 * h)
            analytic = float(grads[name].reshape(-1)[i])
            worst = max(worst, abs(numeric - analytic) / max(abs(numeric), abs(analytic), 1e-3))
    report.check("lstm_lm: every parameter's gradient against finite differences", worst, 1e-4)


def naive_conv2d(x, w, b, stride, padding, dilation):
    """Direct six-loop convolution (groups 1), the definition written out."""
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    o, _, k, _ = w.shape
    ho = (xp.shape[2] - dilation * (k - 1) - 1) // stride + 1
    wo = (xp.shape[3] - dilation * (k - 1) - 1) // stride + 1
    y = np.zeros((x.shape[0], o, ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = xp[:, :, i * stride:i * stride + dilation * (k - 1) + 1:dilation,
                       j * stride:j * stride + dilation * (k - 1) + 1:dilation]
            y[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w) + b
    return y


def check_forwards(report, rng):
    """Forward values against definitions: loops, known constants, PyTorch's documented conventions."""
    x, w, b = rng.standard_normal((2, 3, 8, 7)), rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    report.check("conv2d = naive loops (s2 p1 d2)",
                 np.abs(layers.conv2d(x, w, b, 2, 1, 2)[0] - naive_conv2d(x, w, b, 2, 1, 2)).max(), EXACT_TOL)
    report.check("gelu(1) erf form", abs(layers.gelu(np.array([1.0]))[0][0] - 0.8413447460685429), EXACT_TOL)
    report.check("gelu(1) tanh form", abs(layers.gelu(np.array([1.0]), "tanh")[0][0] - 0.8411919906082768),
                 EXACT_TOL)
    tie = np.array([[[[1.0, 3.0], [3.0, 0.0]]]])
    y, back = layers.max_pool2d(tie, 2)
    report.expect("max_pool2d tie: first maximum takes the gradient",
                  y[0, 0, 0, 0] == 3 and back(np.ones((1, 1, 1, 1)))[0, 0].tolist() == [[0, 1], [0, 0]])
    ones = np.ones((1, 1, 2, 2))
    report.expect("avg_pool2d count_include_pad divides by k*k",
                  layers.avg_pool2d(ones, 2, 2, 1)[0][0, 0].tolist() == [[0.25, 0.25], [0.25, 0.25]])
    report.expect("avg_pool2d without pad counts real elements",
                  layers.avg_pool2d(ones, 2, 2, 1, False)[0][0, 0].tolist() == [[1, 1], [1, 1]])
    logits = rng.standard_normal((4, 3))
    direct = -np.mean([logits[i, c] - np.log(np.exp(logits[i]).sum()) for i, c in [(0, 2), (3, 1)]])
    loss, _ = layers.cross_entropy(logits, np.array([2, -100, -100, 1]))
    report.check("cross_entropy mean over non-ignored only", abs(loss - direct), EXACT_TOL)
    report.expect("cross_entropy all ignored is NaN",
                  math.isnan(layers.cross_entropy(logits, np.full(4, -100))[0]))
    y, _ = layers.layer_norm(rng.standard_normal((3, 8)) * 5 + 2, np.ones(8), np.zeros(8))
    report.check("layer_norm output mean 0 and var 1 (eps)", max(np.abs(y.mean(-1)).max(),
                                                                   np.abs(y.var(-1) - 1).max()), 1e-5)
    images = rng.random((5, 1, 28, 28))
    params = models.init_params(models.lenet(), (1, 28, 28), rng, np.float64)
    p64, _ = models.forward(params, models.lenet(), images)
    p32, _ = models.forward({k: v.astype(np.float32) for k, v in params.items()}, models.lenet(),
                            images.astype(np.float32))
    report.check("lenet float32 forward within 1e-5 of float64",
                 np.abs(p32 - p64).max() / np.abs(p64).max(), 1e-5)
    shapes = models.param_shapes(models.lenet(), (1, 28, 28)).values()
    report.expect("lenet has 431,080 parameters as nn.lenet", sum(math.prod(s) for s in shapes) == 431080)


def check_batch_norm(report, rng):
    """nn.BatchNorm2d's forward and running update against the formulas in torch's documentation,
    written per channel with explicit sums: biased variance normalises, unbiased variance runs;
    and its gradients (x, weight, bias) in both modes by finite differences."""
    n = rng.standard_normal
    running_mean, running_var = n(3), 0.5 + rng.random(3)
    for training in (True, False):
        check_layer(report, f"batch_norm training={training}",
                    lambda x, w, b, t=training: layers.batch_norm(x, w, b, running_mean, running_var, t)[:2],
                    [n((4, 3, 2, 3)), n(3), n(3)], rng)
    x = rng.standard_normal((3, 2, 4, 5)) * 3 + 1
    w, b, rm, rv = rng.standard_normal(2), rng.standard_normal(2), rng.standard_normal(2), 1 + rng.random(2)
    y, _, new_mean, new_var = layers.batch_norm(x, w, b, rm, rv, True, momentum=0.1, eps=1e-5)
    want_y, want_mean, want_var, eval_y = np.zeros_like(x), np.zeros(2), np.zeros(2), np.zeros_like(x)
    for c in range(2):
        values = x[:, c].ravel()
        n = len(values)
        mean = sum(values) / n
        biased = sum((v - mean) ** 2 for v in values) / n
        unbiased = sum((v - mean) ** 2 for v in values) / (n - 1)
        want_y[:, c] = (x[:, c] - mean) / math.sqrt(biased + 1e-5) * w[c] + b[c]
        want_mean[c] = 0.9 * rm[c] + 0.1 * mean
        want_var[c] = 0.9 * rv[c] + 0.1 * unbiased
        eval_y[:, c] = (x[:, c] - rm[c]) / math.sqrt(rv[c] + 1e-5) * w[c] + b[c]
    report.check("batch_norm training: batch mean, biased variance", np.abs(y - want_y).max(), EXACT_TOL)
    report.check("batch_norm running update: momentum 0.1, unbiased variance",
                 max(np.abs(new_mean - want_mean).max(), np.abs(new_var - want_var).max()), EXACT_TOL)
    y, _, same_mean, same_var = layers.batch_norm(x, w, b, rm, rv, False)
    report.check("batch_norm eval: running statistics, unchanged", np.abs(y - eval_y).max()
                 + (0 if same_mean is rm and same_var is rv else math.inf), EXACT_TOL)
    try:
        layers.batch_norm(x[:1, :, :1, :1], w, b, rm, rv, True)
        refused = False
    except ValueError:
        refused = True
    report.expect("batch_norm training refuses one value per channel", refused)


def relu_margin(f):
    """The smallest |input| of any layers.relu that f() calls: how near its run is to a kink."""
    seen, relu = [], layers.relu

    def watch(z):
        seen.append(np.abs(z).min())
        return relu(z)

    layers.relu = watch
    try:
        f()
    finally:
        layers.relu = relu
    return min(seen)


def check_resnet(report, rng):
    """resnet.py: every parameter's gradient (batch norm in training mode) by finite differences
    (W = 2, B = 3, 28x28, float64), the buffers a training forward moves, and its CLI end to end.

    Batch norm puts thousands of ReLU inputs near 0, and a probe that moves one
    across 0 measures the kink, not the gradient (seen: an input at 1.5e-6, an
    error of 1e-3). So the images are redrawn until every ReLU input is at least
    1e-4 from 0: a probe (h = 1e-6) would need to move one 100 times as far as
    the weight to cross. Some tensors' gradients are tiny (bn1.bias ~3e-4 at
    most), where the differences' rounding (~1e-10) alone is 1e-6 of them, so
    the error is relative to at least 1e-2 (the other tensors' size)."""
    state = resnet.init_state(2, rng)
    for name, value in state.items():       # bn weights and biases away from 1 and 0
        if not resnet.is_buffer(name) and name.rsplit(".", 1)[0] + ".running_mean" in state:
            value += 0.3 * rng.standard_normal(value.shape)
    labels = rng.integers(0, resnet.CLASSES, 3)
    for _ in range(100):
        x = rng.random((3, 1, 28, 28))
        if relu_margin(lambda: resnet.loss_and_grads(state, x, labels)) >= 1e-4:
            break
    _, grads, updates = resnet.loss_and_grads(state, x, labels)
    report.expect("resnet: a gradient for every parameter and none for the buffers",
                  set(grads) == {n for n in state if not resnet.is_buffer(n)})
    for name in grads:
        error = grad_error(lambda: resnet.loss_and_grads(state, x, labels)[0], state[name], grads[name], rng,
                           floor=1e-2)
        report.check(f"grad resnet {name}", error, GRAD_TOL)
    report.expect("resnet: training moves every bn's running stats and num_batches_tracked by 1",
                  set(updates) == {n for n in state if resnet.is_buffer(n)}
                  and all(updates[n] == 1 for n in updates if n.endswith("num_batches_tracked")))
    report.expect("resnet: eval mode moves nothing", resnet.forward(state, x, False)[2] == {})
    with tempfile.TemporaryDirectory() as tmp:
        path = lambda name: os.path.join(tmp, name)
        np.save(path("x.npy"), rng.integers(0, 256, (10, 28, 28), dtype=np.uint8))
        np.save(path("y.npy"), rng.integers(0, 10, 10).astype(np.uint8))
        _quiet(resnet.main, ["init", path("init.safetensors"), "--width", "2", "--dtype", "f64"])
        init, _ = safetensors_np.load(path("init.safetensors"))
        report.expect("resnet init: torchvision's names, F64 floats, num_batches_tracked an I64 0 scalar",
                      {n: v.shape for n, v in init.items()} == resnet.shapes(2)
                      and all(v.dtype == (np.int64 if n.endswith("num_batches_tracked") else np.float64)
                              for n, v in init.items())
                      and init["layer3.0.downsample.1.num_batches_tracked"].shape == ()
                      and init["bn1.num_batches_tracked"] == 0 and np.all(init["bn1.running_var"] == 1))
        common = ["--images", path("x.npy"), "--labels", path("y.npy"), "--width", "2", "--batch", "4"]

        def train(steps):
            code = _quiet(resnet.main, ["train", "--init", path("init.safetensors"), *common, "--steps",
                                        str(steps), "--lr", "0.5", "--momentum", "0.9", "--weight-decay", "0.5", "--warmup", "1",
                                        "--out-losses", path("l.json"), "--save", path("final.safetensors")])
            return code, safetensors_np.load(path("final.safetensors"))[0]

        # One step (warmup 1: lr 0.5; cosine alone would give the last step lr 0): the buffers are
        # exactly the first forward's running update, untouched by SGD (weight decay 0.5 would have
        # moved them), while the parameters moved.
        code, one = train(1)
        first = resnet.model_input(np.load(path("x.npy"))[:4], np.float64)
        _, _, after1 = resnet.loss_and_grads({n: v.copy() for n, v in init.items()}, first,
                                             np.load(path("y.npy"))[:4])
        report.expect("resnet train: buffers = the forward's update alone; parameters moved",
                      code == 0 and all(np.array_equal(one[n], after1[n]) for n in after1)
                      and not np.array_equal(one["fc.weight"], init["fc.weight"]))
        # Three steps of batch 4 over 10 samples: E = 2, step 3 wraps to samples 0..3.
        code, final = train(3)
        report.expect("resnet train: 3 steps save every tensor, num_batches_tracked 3 (I64), F64 floats",
                      code == 0 and set(final) == set(init) and final["bn1.num_batches_tracked"] == 3
                      and final["bn1.num_batches_tracked"].dtype == np.int64
                      and final["fc.weight"].dtype == np.float64)
        out = io.StringIO()
        saved, sys.stdout = sys.stdout, out
        try:
            code = resnet.main(["eval", "--weights", path("final.safetensors"), *common, "--batches", "1"])
        finally:
            sys.stdout = saved
        loss, _ = layers.cross_entropy(resnet.forward(
            {n: v.astype(np.float64) if v.dtype.kind == "f" else v for n, v in final.items()},
            first, False)[0], np.load(path("y.npy"))[:4])
        report.expect("resnet eval: prints the running-statistics loss of the first batch",
                      code == 0 and out.getvalue().splitlines()[0] == f"loss {float(loss):.17g}")


def check_optimizers(report, rng):
    """One or two steps of each optimizer against the update written out by hand."""
    p0, g1, g2 = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal(5)
    lr, wd, mom, eps, b1, b2 = 0.1, 0.01, 0.9, 1e-8, 0.9, 0.999

    def run(opt, grads):
        params = {"p": p0.copy()}
        for g in grads:
            opt.step(params, {"p": g.copy()}, lr)
        return params["p"]

    cases = [
        ("sgd with L2", run(optim.SGD(weight_decay=wd), [g1]), p0 - lr * (g1 + wd * p0)),
        ("sgd momentum 2 steps (buffer starts at g)", run(optim.SGD(mom), [g1, g2]),
         p0 - lr * g1 - lr * (mom * g1 + g2)),
        ("sgd nesterov 1 step", run(optim.SGD(mom, nesterov=True), [g1]), p0 - lr * (g1 + mom * g1)),
        ("adam with L2 1 step", run(optim.Adam(weight_decay=wd), [g1]),
         p0 - lr * (g1 + wd * p0) / (np.abs(g1 + wd * p0) + eps)),
        ("adamw 1 step (decay first)", run(optim.AdamW(weight_decay=wd), [g1]),
         p0 * (1 - lr * wd) - lr * g1 / (np.abs(g1) + eps)),
    ]
    m2, v2 = (1 - b1) * (b1 * g1 + g2), (1 - b2) * (b2 * g1 * g1 + g2 * g2)
    p1 = p0 - lr * g1 / (np.abs(g1) + eps)
    cases.append(("adam 2 steps (bias corrections)", run(optim.Adam(), [g1, g2]),
                  p1 - lr / (1 - b1 ** 2) * m2 / (np.sqrt(v2) / np.sqrt(1 - b2 ** 2) + eps)))
    # RMSprop, Adagrad, Adadelta by their formulas (torch.optim's docs).
    alpha, rho, decay, init = 0.99, 0.9, 0.5, 0.1
    sq1 = (1 - alpha) * g1 * g1
    cases += [
        ("rmsprop 1 step", run(optim.RMSprop(alpha), [g1]), p0 - lr * g1 / (np.sqrt(sq1) + 1e-8)),
        ("rmsprop centered + momentum 2 steps",
         run(optim.RMSprop(alpha, momentum=mom, centered=True), [g1, g2]),
         (lambda a1, a2: p0 - lr * g1 / a1 - lr * (mom * g1 / a1 + g2 / a2))(
             np.sqrt(sq1 - ((1 - alpha) * g1) ** 2) + 1e-8,
             np.sqrt(alpha * sq1 + (1 - alpha) * g2 * g2
                     - ((1 - alpha) * (alpha * g1 + g2)) ** 2) + 1e-8)),
        ("adagrad 2 steps (lr_decay, initial value)",
         run(optim.Adagrad(lr_decay=decay, initial_accumulator_value=init), [g1, g2]),
         p0 - lr * g1 / (np.sqrt(init + g1 * g1) + 1e-10)
         - lr / (1 + decay) * g2 / (np.sqrt(init + g1 * g1 + g2 * g2) + 1e-10)),
        ("adadelta 1 step", run(optim.Adadelta(rho), [g1]),
         p0 - lr * np.sqrt(1e-6) / np.sqrt((1 - rho) * g1 * g1 + 1e-6) * g1),
    ]
    for name, got, want in cases:
        report.check(f"optim {name}", np.abs(got - want).max(), EXACT_TOL)

    grads = {"a": np.array([3.0, 0.0]), "b": np.array([[4.0]])}
    norm = optim.clip_grad_norm(grads, 1.0)
    report.check("clip_grad_norm_ global norm and coef 1/(5+1e-6)",
                 abs(norm - 5) + abs(grads["a"][0] - 3 / (5 + 1e-6)), EXACT_TOL)
    small = {"a": np.array([0.3, 0.4])}
    optim.clip_grad_norm(small, 1.0)
    report.expect("clip_grad_norm_ leaves a small norm alone", small["a"].tolist() == [0.3, 0.4])


def check_schedules(report):
    """Spec §8's formulas at the steps where they change."""
    lr, total = 1.0, 20
    sched = {name: optim.parse_schedule(text) for name, text in [
        ("const", "constant()"), ("wc", "warmup_cosine(warmup = 4, min_lr = 0.1)"),
        ("lin", "linear(4)"), ("step", "step_lr(every = 5, gamma = 0.5)")]}
    expected = [("const", 7, 1.0), ("wc", 1, 0.25), ("wc", 4, 1.0), ("wc", 12, 0.55), ("wc", 20, 0.1),
                ("lin", 2, 0.5), ("lin", 12, 0.5), ("lin", 20, 0.0),
                ("step", 5, 1.0), ("step", 6, 0.5), ("step", 11, 0.25)]
    error = max(abs(optim.scheduled_lr(sched[n], lr, s, total) - want) for n, s, want in expected)
    report.check("schedules constant/warmup_cosine/linear/step_lr", error, EXACT_TOL)


def check_accumulation(report, rng):
    """Two micro-batches of 3 give the same mean loss and gradients as one batch of 6."""
    net = models.mlp(hidden=5, classes=4)
    params = models.init_params(net, (10,), rng, np.float64)
    x, labels = rng.random((6, 10)), rng.integers(0, 4, 6)
    loss, grads = models.loss_and_grads(params, net, x, labels)
    acc_loss, acc_grads = train_ref.train_step(params, net, x, labels, 2)
    error = max([abs(acc_loss - loss)] + [np.abs(acc_grads[n] - grads[n]).max() for n in grads])
    report.check("accumulate 2 x 3 = batch 6", error, EXACT_TOL)


def check_files(report, rng):
    """safetensors and idx round trips, and the malformed files they must refuse."""
    tensors = {"w": rng.standard_normal((2, 3)).astype(np.float32), "n": np.arange(4, dtype=np.int64),
               "e": np.zeros((0, 2), np.float16)}
    blob = safetensors_np.serialize(tensors, {"format": "pt"})
    back, meta = safetensors_np.parse(blob)
    report.expect("safetensors round trip", meta == {"format": "pt"} and all(
        back[k].dtype == v.dtype and np.array_equal(back[k], v) for k, v in tensors.items()))
    header = b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    good = len(header).to_bytes(8, "little") + header + bytes(8)
    report.expect("safetensors accepts a hand-made file", safetensors_np.parse(good)[0]["a"].shape == (2,))
    bad = {
        "truncated": good[:-1],
        "header past end": (10 ** 6).to_bytes(8, "little") + good[8:],
        "gap": _with_header(b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', 8),
        "overlap": _with_header(b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                b'"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4),
        "size mismatch": _with_header(b'{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', 8),
        "unknown dtype": _with_header(b'{"a":{"dtype":"X9","shape":[2],"data_offsets":[0,8]}}', 8),
        "extra key": _with_header(b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}}', 8),
        "bool in shape": _with_header(b'{"a":{"dtype":"F32","shape":[true],"data_offsets":[0,4]}}', 4),
        "duplicate name": _with_header(b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                       b'"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', 8),
        "non-string metadata": _with_header(b'{"__metadata__":{"k":1}}', 0),
    }
    for name, blob in bad.items():
        try:
            safetensors_np.parse(blob)
            refused = False
        except safetensors_np.SafetensorsError:
            refused = True
        report.expect(f"safetensors refuses {name}", refused)

    images = rng.integers(0, 256, (3, 4, 5), dtype=np.uint8)
    raw = bytes([0, 0, 0x08, 3]) + b"".join(d.to_bytes(4, "big") for d in images.shape) + images.tobytes()
    report.expect("idx round trip", np.array_equal(idx_np.parse_idx(raw), images))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "x-idx3-ubyte.gz")
        with open(path, "wb") as f:
            f.write(gzip.compress(raw))
        report.expect("idx reads gzip", np.array_equal(idx_np.read_idx(path), images))
    for name, blob in [("truncated", raw[:-1]), ("padded", raw + b"\0"), ("bad magic", b"\1" + raw[1:])]:
        try:
            idx_np.parse_idx(blob)
            refused = False
        except idx_np.IdxError:
            refused = True
        report.expect(f"idx refuses {name}", refused)


def _with_header(header, data_bytes):
    """A safetensors blob with this header and data_bytes zero bytes of data."""
    return len(header).to_bytes(8, "little") + header + bytes(data_bytes)


def check_cli(report, rng):
    """train_ref and compare end to end on synthetic .npy data (the way tests drive them)."""
    net = models.mlp(hidden=8, classes=3)
    with tempfile.TemporaryDirectory() as tmp:
        path = lambda name: os.path.join(tmp, name)
        np.save(path("x.npy"), rng.integers(0, 256, (20, 4, 4), dtype=np.uint8))
        np.save(path("y.npy"), rng.integers(0, 3, 20).astype(np.uint8))
        safetensors_np.save(path("init.safetensors"), models.init_params(net, (16,), rng))
        common = ["--model", "mlp", "--init", path("init.safetensors"), "--data-images", path("x.npy"),
                  "--data-labels", path("y.npy"), "--batch", "4", "--steps", "12", "--optimizer", "adamw",
                  "--lr", "0.05", "--schedule", "warmup_cosine(warmup = 3)", "--grad-clip", "1.0"]
        runs = {}
        for dtype in ("f32", "f64"):
            out = [path(f"{dtype}.json"), path(f"{dtype}.safetensors")]
            code = _quiet(train_ref.main, common + ["--dtype", dtype, "--out-losses", out[0],
                                                   "--out-params", out[1]])
            runs[dtype] = (code, *out)
        report.expect("train_ref runs in f32 and f64", runs["f32"][0] == 0 and runs["f64"][0] == 0)
        with open(runs["f64"][1], encoding="utf-8") as f:
            log = json.load(f)
        report.expect("train_ref loss falls over 12 steps", log["loss"][-1] < log["loss"][0])
        same = [_quiet(compare.main, [runs["f32"][i], runs["f64"][i]]) for i in (1, 2)]
        report.expect("compare: f32 and f64 runs agree at the defaults", same == [0, 0])
        report.expect("compare: 1e-12 tolerance catches f32 rounding",
                      _quiet(compare.main, [runs["f32"][2], runs["f64"][2], "--rtol", "1e-12"]) == 1)


def _quiet(main, argv):
    """Runs a CLI main with its stdout swallowed; returns its exit status."""
    saved, sys.stdout = sys.stdout, io.StringIO()
    try:
        return main(argv)
    finally:
        sys.stdout = saved


def main():
    """Runs every check; exit status 1 when any failed."""
    rng = np.random.default_rng(0)
    report = Report()
    check_layer_gradients(report, rng)
    check_model_gradients(report, rng)
    check_forwards(report, rng)
    check_batch_norm(report, np.random.default_rng(1))
    check_optimizers(report, rng)
    check_schedules(report)
    check_accumulation(report, rng)
    check_amp(report, rng)
    check_f16(report, rng)
    check_attn(report, rng)
    check_encoder(report, rng)
    check_resnet(report, np.random.default_rng(2))
    check_lstm(report, np.random.default_rng(3))
    check_files(report, rng)
    check_cli(report, rng)
    print(f"{report.passed} passed, {report.failed} failed")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
