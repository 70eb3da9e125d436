"""The reference's layers, each returning its output and a backward closure; PyTorch's semantics (spec §9).

Why closures: a model's backward is then the reverse walk of the closures its
forward recorded, with no autograd library, and each closure keeps exactly
what its gradient needs. A backward takes the gradient of the output and
returns the input's gradient, followed by the parameters' gradients for layers
that have parameters. Arrays keep the inputs' dtype (float32 or float64).
"""
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def linear(x, weight, bias=None):
    """torch.nn.functional.linear: y = x @ W.T + b over the last axis; W is [out, in]."""
    y = x @ weight.T
    if bias is not None:
        y = y + bias

    def backward(dy):
        rows_dy = dy.reshape(-1, dy.shape[-1])
        rows_x = x.reshape(-1, x.shape[-1])
        dbias = None if bias is None else rows_dy.sum(axis=0)
        return dy @ weight, rows_dy.T @ rows_x, dbias

    return y, backward


def relu(x):
    """max(x, 0); as torch's threshold_backward, the gradient is 0 where x == 0."""
    y = np.maximum(x, 0)
    return y, lambda dy: dy * (y > 0)


def tanh(x):
    """tanh; the backward uses the output, 1 - y², as torch's tanh_backward."""
    y = np.tanh(x)
    return y, lambda dy: dy * (1 - y * y)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x, approximate="none"):
    """GELU: exact erf form (nn.GELU()) or GPT-2's tanh form; gradients as torch's GeluBackward.

    NumPy has no erf, so the erf form evaluates math.erf in float64 and rounds
    to x's dtype (within an ulp of torch's float32 erff).
    """
    xd = x.astype(np.float64)
    if approximate == "none":
        cdf = 0.5 * (1 + _erf(xd / math.sqrt(2)))
        y = xd * cdf
        grad = cdf + xd * np.exp(-0.5 * xd * xd) / math.sqrt(2 * math.pi)
    elif approximate == "tanh":
        beta, kappa = math.sqrt(2 / math.pi), 0.044715
        t = np.tanh(beta * (xd + kappa * xd ** 3))
        y = 0.5 * xd * (1 + t)
        grad = 0.5 * (1 + t) + 0.5 * xd * (1 - t * t) * beta * (1 + 3 * kappa * xd * xd)
    else:
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    grad = grad.astype(x.dtype)
    return y.astype(x.dtype), lambda dy: dy * grad


def flatten(x, start=1):
    """torch.flatten(x, start): axes start.. merged in row-major order."""
    y = x.reshape(x.shape[:start] + (-1,))
    return y, lambda dy: dy.reshape(x.shape)


def reshape(x, shape):
    """Row-major reshape (one -1 allowed)."""
    y = x.reshape(shape)
    return y, lambda dy: dy.reshape(x.shape)


def _pair(v):
    """An int or a pair, as torch's _pair."""
    return (v, v) if isinstance(v, int) else tuple(v)


def _windows(xp, kernel, stride, dilation):
    """A view [N, C, Ho, Wo, kh, kw] of every kernel window of the (already padded) NCHW input."""
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if xp.shape[2] < span[0] or xp.shape[3] < span[1]:
        raise ValueError(f"kernel span {span} is larger than the padded input {xp.shape[2:]}")
    view = sliding_window_view(xp, span, axis=(2, 3))
    return view[:, :, ::stride[0], ::stride[1], ::dilation[0], ::dilation[1]]


def _scatter_windows(dwin, padded_shape, stride, dilation):
    """The adjoint of _windows: window gradients summed back onto the padded input (col2im)."""
    ho, wo, kh, kw = dwin.shape[2:]
    dxp = np.zeros(padded_shape, dwin.dtype)
    for i in range(kh):
        for j in range(kw):
            r, c = i * dilation[0], j * dilation[1]
            dxp[:, :, r:r + stride[0] * (ho - 1) + 1:stride[0],
                c:c + stride[1] * (wo - 1) + 1:stride[1]] += dwin[:, :, :, :, i, j]
    return dxp


def _pad(x, padding, value=0.0):
    """Pads H and W of an NCHW array by padding = (ph, pw) on both sides."""
    (ph, pw) = padding
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value)


def _crop(xp, padding, shape):
    """Undoes _pad."""
    (ph, pw) = padding
    return xp[:, :, ph:ph + shape[2], pw:pw + shape[3]]


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv2d on NCHW x with OIHW weight (im2col + matmul per group).

    Group g sees input channels [g·C/G, (g+1)·C/G) and makes output channels
    [g·O/G, (g+1)·O/G), as PyTorch's grouping does.
    """
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    n, c, _, _ = x.shape
    o, cg, kh, kw = weight.shape
    if c != cg * groups or o % groups:
        raise ValueError(f"conv2d: input {x.shape}, weight {weight.shape} and groups={groups} disagree")
    og = o // groups
    xp = _pad(x, padding)
    win = _windows(xp, (kh, kw), stride, dilation)
    ho, wo = win.shape[2:4]
    cols = win.reshape(n, groups, cg, ho, wo, kh, kw).transpose(1, 0, 3, 4, 2, 5, 6)
    cols = cols.reshape(groups, n * ho * wo, cg * kh * kw)
    wmat = weight.reshape(groups, og, cg * kh * kw)
    y = (cols @ wmat.transpose(0, 2, 1)).reshape(groups, n, ho, wo, og)
    y = y.transpose(1, 0, 4, 2, 3).reshape(n, o, ho, wo)
    if bias is not None:
        y = y + bias[:, None, None]

    def backward(dy):
        dout = dy.reshape(n, groups, og, ho, wo).transpose(1, 0, 3, 4, 2).reshape(groups, n * ho * wo, og)
        dweight = (dout.transpose(0, 2, 1) @ cols).reshape(weight.shape)
        dwin = (dout @ wmat).reshape(groups, n, ho, wo, cg, kh, kw).transpose(1, 0, 4, 2, 3, 5, 6)
        dxp = _scatter_windows(dwin.reshape(n, c, ho, wo, kh, kw), xp.shape, stride, dilation)
        dbias = None if bias is None else dy.sum(axis=(0, 2, 3))
        return _crop(dxp, padding, x.shape), dweight, dbias

    return y, backward


def _pool_args(kernel, stride, padding):
    """Kernel, stride (default: the kernel) and padding as pairs; torch allows padding ≤ kernel/2."""
    kernel = _pair(kernel)
    stride = kernel if stride is None else _pair(stride)
    padding = _pair(padding)
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise ValueError(f"pooling padding {padding} must be at most half the kernel {kernel}")
    return kernel, stride, padding


def max_pool2d(x, kernel, stride=None, padding=0):
    """torch max_pool2d (ceil_mode=False, dilation 1): padding counts as -inf.

    Ties: the first maximum of a window in row-major order takes the whole
    gradient, as PyTorch's CPU and CUDA kernels (they update on a strictly
    greater value). Overlapping windows add their gradients.
    """
    kernel, stride, padding = _pool_args(kernel, stride, padding)
    xp = _pad(x, padding, value=-np.inf)
    win = _windows(xp, kernel, stride, (1, 1))
    flat = win.reshape(win.shape[:4] + (-1,))
    arg = np.argmax(flat, axis=-1)[..., None]
    y = np.take_along_axis(flat, arg, axis=-1)[..., 0]

    def backward(dy):
        dflat = np.zeros(flat.shape, dy.dtype)
        np.put_along_axis(dflat, arg, dy[..., None], axis=-1)
        dxp = _scatter_windows(dflat.reshape(win.shape), xp.shape, stride, (1, 1))
        return _crop(dxp, padding, x.shape)

    return y, backward


def avg_pool2d(x, kernel, stride=None, padding=0, count_include_pad=True):
    """torch avg_pool2d (ceil_mode=False): by default padded zeros count in the divisor.

    With count_include_pad=True (PyTorch's default) every window divides by
    kh·kw; with False, by the number of real input elements it covers.
    """
    kernel, stride, padding = _pool_args(kernel, stride, padding)
    xp = _pad(x, padding)
    win = _windows(xp, kernel, stride, (1, 1))
    if count_include_pad:
        divisor = np.asarray(kernel[0] * kernel[1], x.dtype)
    else:
        real = _windows(_pad(np.ones((1, 1) + x.shape[2:], x.dtype), padding), kernel, stride, (1, 1))
        divisor = real.sum(axis=(4, 5))
    y = win.sum(axis=(4, 5)) / divisor

    def backward(dy):
        dwin = np.broadcast_to((dy / divisor)[..., None, None], win.shape)
        return _crop(_scatter_windows(dwin, xp.shape, stride, (1, 1)), padding, x.shape)

    return y, backward


def softmax(x, axis=-1):
    """Softmax with the max subtracted first; backward y·(dy − Σ dy·y)."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    y = e / e.sum(axis=axis, keepdims=True)
    return y, lambda dy: y * (dy - (dy * y).sum(axis=axis, keepdims=True))


def log_softmax(x, axis=-1):
    """x − max − log Σ exp(x − max); backward dy − softmax·Σ dy."""
    shifted = x - x.max(axis=axis, keepdims=True)
    y = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return y, lambda dy: dy - np.exp(y) * dy.sum(axis=axis, keepdims=True)


def cross_entropy(logits, labels, ignore_index=-100):
    """Mean cross-entropy over positions whose label is not ignore_index (class axis last, spec §9).

    As PyTorch's reduction='mean': the sum over kept positions divided by
    their count, so ignored positions get zero gradient and, when every
    position is ignored, the loss is NaN (0/0). A kept label outside
    [0, classes) is an error, as in PyTorch.
    """
    labels = np.asarray(labels).astype(np.int64)
    keep = labels != ignore_index
    classes = logits.shape[-1]
    if np.any(keep & ((labels < 0) | (labels >= classes))):
        raise ValueError(f"cross_entropy: a label is outside [0, {classes}) and is not ignore_index")
    safe = np.where(keep, labels, 0)[..., None]
    logp, _ = log_softmax(logits)
    count = logits.dtype.type(keep.sum())
    with np.errstate(invalid="ignore"):
        loss = -np.where(keep, np.take_along_axis(logp, safe, axis=-1)[..., 0], 0).sum() / count

    def backward(dloss=1.0):
        grad = np.exp(logp)
        np.put_along_axis(grad, safe, np.take_along_axis(grad, safe, axis=-1) - 1, axis=-1)
        return grad * (keep[..., None] * (dloss / count)).astype(logits.dtype)

    return loss, backward


def mse_loss(a, b):
    """mean((a − b)²); the backward returns the gradients of a and b."""
    diff = a - b
    loss = (diff * diff).mean()

    def backward(dloss=1.0):
        da = diff * a.dtype.type(2 * dloss / diff.size)
        return da, -da

    return loss, backward


def layer_norm(x, weight, bias, eps=1e-5):
    """torch layer_norm over the last axis: biased variance, eps inside the square root."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    rstd = 1 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + x.dtype.type(eps))
    xhat = centred * rstd
    y = xhat * weight + bias

    def backward(dy):
        lead = tuple(range(dy.ndim - 1))
        g = dy * weight
        dx = rstd * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))
        return dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead)

    return y, backward


def batch_norm(x, weight, bias, running_mean, running_var, training, momentum=0.1, eps=1e-5):
    """torch.nn.functional.batch_norm over axis 1 (channels) of [N, C, ...], as nn.BatchNorm2d.

    Training: y = (x − mean)/sqrt(var + eps)·weight + bias with the batch mean
    and the BIASED batch variance over every axis but 1 (n = x.size/C values
    per channel; n = 1 is an error, as in torch); the running statistics move
    by running ← (1 − momentum)·running + momentum·batch, the variance's batch
    value being the UNBIASED one, var·n/(n − 1). Eval: the running statistics
    normalise and nothing changes. Returns (y, backward, new_running_mean,
    new_running_var); backward(dy) gives (dx, dweight, dbias). The caller
    keeps num_batches_tracked (+1 per training forward).
    """
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    dt = x.dtype.type
    if training:
        n = x.size // x.shape[1]
        if n <= 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when training, got {x.shape}")
        mean = x.mean(axis=axes)
        centred = x - mean.reshape(shape)
        squares = (centred * centred).sum(axis=axes)
        var = squares / dt(n)
        new_mean = dt(1 - momentum) * running_mean + dt(momentum) * mean
        new_var = dt(1 - momentum) * running_var + dt(momentum) * (squares / dt(n - 1))
    else:
        mean, var = running_mean, running_var
        centred = x - mean.reshape(shape)
        new_mean, new_var = running_mean, running_var
    rstd = (1 / np.sqrt(var + dt(eps))).reshape(shape)
    xhat = centred * rstd
    y = xhat * weight.reshape(shape) + bias.reshape(shape)

    def backward(dy):
        g = dy * weight.reshape(shape)
        if training:
            # The batch statistics depend on x: the layer_norm formula over the axes.
            dx = rstd * (g - g.mean(axis=axes, keepdims=True)
                         - xhat * (g * xhat).mean(axis=axes, keepdims=True))
        else:
            dx = g * rstd
        return dx, (dy * xhat).sum(axis=axes), dy.sum(axis=axes)

    return y, backward, new_mean, new_var


def lstm(x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None):
    """One layer of torch.nn.LSTM (batch_first) over x [b, t, n] from (h0, c0) [b, h].

    Written from torch.nn.LSTM's documented equations, gates in its order
    (i, f, g, o): i = σ(W_ii x + b_ii + W_hi h + b_hi), f likewise, g = tanh(..),
    o = σ(..); c' = f·c + i·g; h' = o·tanh(c'). Returns (output [b, t, h],
    h_n, c_n) and a backward taking (d_output, d_h_n, d_c_n) (None for zero)
    and returning (dx, dh0, dc0, dw_ih, dw_hh, db_ih, db_hh) by
    back-propagation through time.
    """
    b, t, _ = x.shape
    hidden = w_hh.shape[1]
    sig = lambda v: 1 / (1 + np.exp(-v))
    hs, cs, gates = [h0], [c0], []
    for s in range(t):
        pre = x[:, s] @ w_ih.T + hs[-1] @ w_hh.T
        if b_ih is not None:
            pre = pre + b_ih + b_hh
        i, f, g, o = np.split(pre, 4, axis=1)
        i, f, g, o = sig(i), sig(f), np.tanh(g), sig(o)
        cs.append(f * cs[-1] + i * g)
        hs.append(o * np.tanh(cs[-1]))
        gates.append((i, f, g, o))
    out = np.stack(hs[1:], axis=1)

    def backward(dout, dh_n=None, dc_n=None):
        dx = np.zeros_like(x)
        dw_ih, dw_hh = np.zeros_like(w_ih), np.zeros_like(w_hh)
        dbias = np.zeros(4 * hidden, dtype=x.dtype)
        dh = np.zeros_like(h0) if dh_n is None else dh_n.copy()
        dc = np.zeros_like(c0) if dc_n is None else dc_n.copy()
        for s in reversed(range(t)):
            i, f, g, o = gates[s]
            dh = dh + dout[:, s]
            tc = np.tanh(cs[s + 1])
            dc = dc + dh * o * (1 - tc * tc)
            dpre = np.concatenate([dc * g * i * (1 - i), dc * cs[s] * f * (1 - f),
                                   dc * i * (1 - g * g), dh * tc * o * (1 - o)], axis=1)
            dx[:, s] = dpre @ w_ih
            dw_ih += dpre.T @ x[:, s]
            dw_hh += dpre.T @ hs[s]
            dbias += dpre.sum(axis=0)
            dh = dpre @ w_hh
            dc = dc * f
        if b_ih is None:
            return dx, dh, dc, dw_ih, dw_hh, None, None
        return dx, dh, dc, dw_ih, dw_hh, dbias, dbias.copy()

    return (out, hs[-1], cs[-1]), backward


def gru(x, h0, w_ih, w_hh, b_ih=None, b_hh=None):
    """One layer of torch.nn.GRU (batch_first) over x [b, t, n] from h0 [b, h].

    Written from torch.nn.GRU's documented equations, gates in its order
    (r, z, n): r = σ(W_ir x + b_ir + W_hr h + b_hr), z likewise,
    n = tanh(W_in x + b_in + r·(W_hn h + b_hn)), h' = (1 − z)·n + z·h.
    Returns (output [b, t, h], h_n) and a backward taking (d_output, d_h_n)
    (None for zero) and returning (dx, dh0, dw_ih, dw_hh, db_ih, db_hh).
    """
    b, t, _ = x.shape
    hidden = w_hh.shape[1]
    sig = lambda v: 1 / (1 + np.exp(-v))
    zeros = np.zeros(3 * hidden, dtype=x.dtype)
    bi = zeros if b_ih is None else b_ih
    bh = zeros if b_hh is None else b_hh
    hs, saved = [h0], []
    for s in range(t):
        xi = x[:, s] @ w_ih.T + bi
        hh = hs[-1] @ w_hh.T + bh
        xr, xz, xn = np.split(xi, 3, axis=1)
        hr, hz, hn = np.split(hh, 3, axis=1)
        r, z = sig(xr + hr), sig(xz + hz)
        n = np.tanh(xn + r * hn)
        hs.append((1 - z) * n + z * hs[-1])
        saved.append((r, z, n, hn))
    out = np.stack(hs[1:], axis=1)

    def backward(dout, dh_n=None):
        dx = np.zeros_like(x)
        dw_ih, dw_hh = np.zeros_like(w_ih), np.zeros_like(w_hh)
        db_ih, db_hh = np.zeros_like(zeros), np.zeros_like(zeros)
        dh = np.zeros_like(h0) if dh_n is None else dh_n.copy()
        for s in reversed(range(t)):
            r, z, n, hn = saved[s]
            dh = dh + dout[:, s]
            dpre_n = dh * (1 - z) * (1 - n * n)
            dpre_r = dpre_n * hn * r * (1 - r)
            dpre_z = dh * (hs[s] - n) * z * (1 - z)
            dxi = np.concatenate([dpre_r, dpre_z, dpre_n], axis=1)
            dhh = np.concatenate([dpre_r, dpre_z, dpre_n * r], axis=1)
            dx[:, s] = dxi @ w_ih
            dw_ih += dxi.T @ x[:, s]
            dw_hh += dhh.T @ hs[s]
            db_ih += dxi.sum(axis=0)
            db_hh += dhh.sum(axis=0)
            dh = dh * z + dhh @ w_hh
        if b_ih is None:
            return dx, dh, dw_ih, dw_hh, None, None
        return dx, dh, dw_ih, dw_hh, db_ih, db_hh

    return (out, hs[-1]), backward
