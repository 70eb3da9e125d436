"""Blocks of the model generator: parameters, compile-time control flow,
user blocks, ties and the stdlib layers.

Each op takes the ProgramGen `g` (its random source, name counter and the
blocks written so far) and the Body `b` it writes into, as the built-in ops
of gen_ops do, and returns the value it made or None. Blocks are written
from the concrete values of their first call: size variables, `*lead`,
scalar arguments with defaults, compile-time `if`, `for` over a layer block,
`assert`, parameters of every initialiser, ties (`&path`), several results,
parameter-only blocks and blocks that return nothing. Lead-generic blocks
(`x: f32[*lead, n]`, ops on the last axis only) are reused at other leading
shapes; any block is reused where the new arguments have its types and no
larger magnitudes, so the bounds computed at the first call still hold.
"""
import math

import gen_ops as ops
from gen_ops import MAX_BOUND, MAX_ELEMS, Body, Val, numel


class BlockDef:
    """A user block: its text and what a call needs to know about it."""

    def __init__(self, name):
        self.name = name
        self.lines = []
        self.args = []        # Vals of the first call (types, bounds, ranges)
        self.scalars = []     # (name, call text or None)
        self.results = []     # Vals of the first call's results
        self.params = []      # (relative path, Val)
        self.generic = False  # lead-generic: any leading dims of args[0]
        self.reusable = True  # false when it ties a parameter of its caller


# -- parameters -----------------------------------------------------------------

def init_text(g, shape, fan_in):
    """An initialiser for a parameter of this shape and a bound on its values."""
    r = g.rng
    kinds = ["zeros", "ones", "full", "normal", "uniform", "kaiming", "truncated"]
    if len(shape) >= 2:
        kinds.append("xavier")
    k = r.choice(kinds)
    if k == "zeros":
        return r.choice(["zeros()", "zeros"]), 0.0
    if k == "ones":
        return "ones()", 1.0
    if k == "full":
        v = r.choice([0.5, -0.25, 0.1])
        return f"full({v})", abs(v)
    if k == "normal":
        std = r.choice([0.02, 0.1, 1.0])
        return r.choice([f"normal(0.0, {std})", f"normal(std = {std})"]), 4 * std
    if k == "uniform":
        return r.choice([("uniform(-0.1, 0.1)", 0.1), ("uniform(lo = -0.5, hi = 0.5)", 0.5),
                         ("uniform()", 1.0)])
    if k == "kaiming":
        return f"kaiming_uniform({fan_in})", 1 / math.sqrt(fan_in)
    if k == "truncated":
        std = r.choice([0.02, 0.5])
        return r.choice([f"truncated_normal({std})", f"truncated_normal(std = {std})"]), 2 * std
    return "xavier_uniform()", math.sqrt(6 / (shape[0] + shape[1]))


def param_dtype(dtype):
    """Parameters are f32 or f64 (16 bits is what `precision` computes in):
    a parameter used with f16 or bf16 values is f32, cast where it is used."""
    return dtype if dtype in ("f32", "f64") else "f32"


def use_text(name, dtype):
    return name if dtype in ("f32", "f64") else f"{dtype}({name})"


def declare_param(g, b, dtype, shape, fan_in, prefix="p"):
    """A parameter for use with values of `dtype`; the returned value
    spells the use (with its cast)."""
    name = g.fresh(prefix)
    init, bound = init_text(g, shape, fan_in)
    b.emit(f"param {name}: {param_dtype(dtype)}{b.shape_text(shape)} = {init}")
    v = Val(use_text(name, dtype), dtype, shape, bound=max(bound, 0.05))
    b.add_param(name, param_dtype(dtype), shape, v.bound)
    return v


def param_use(g, b):
    """A parameter of a random initialiser, combined with a value."""
    x = b.floats(lambda v: v.rank >= 1)
    if not x:
        return None
    r = g.rng
    n = x.shape[-1]
    form = r.choice(["scale", "shift", "weight", "full", "one"])
    if form == "weight":
        out = r.choice([2, 4, 8, 16])
        shape = list(x.shape[:-1]) + [out]
        if numel(shape) > MAX_ELEMS:
            return None
        w = declare_param(g, b, x.dtype, [n, out], n, "w")
        bound = x.bound * w.bound * n
        if bound >= MAX_BOUND:
            return None
        return b.let(f"{x.name} @ {w.name}", x.dtype, shape, bound=bound, batch=x.batch)
    pshape = {"scale": [n], "shift": [n], "full": list(x.shape[1:]) or [1],
              "one": [1]}[form]
    p = declare_param(g, b, x.dtype, pshape, max(n, 1))
    op = "+" if form in ("shift", "full") else "*"
    bound = x.bound + p.bound if op == "+" else x.bound * max(p.bound, 1)
    shape = ops.broadcast(x.shape, tuple(pshape))
    return b.let(f"{x.name} {op} {p.name}", x.dtype, shape, bound=bound,
                 batch=x.batch and len(shape) == x.rank)


def param_conv2d(g, b):
    """The built-in conv2d with parameter weights: groups, stride, padding
    and dilation (ints or pairs), kernels that need not be square, with
    and without bias."""
    x = b.floats(lambda v: v.rank == 4)
    if not x:
        return None
    r = g.rng
    cin = x.shape[1]
    divisors = [d for d in range(2, cin + 1) if cin % d == 0]
    groups = r.choice(divisors) if divisors and r.random() < 0.5 else 1
    cout = groups * r.choice([1, 2, 3])
    kh, kw = r.randint(1, 3), r.randint(1, 3)
    stride = [r.choice([1, 1, 2]) for _ in range(2)]
    pad = [r.choice([0, 0, 1, 2]) for _ in range(2)]
    dil = [r.choice([1, 1, 2]) for _ in range(2)]
    out = [(x.shape[2 + i] + 2 * pad[i] - dil[i] * ([kh, kw][i] - 1) - 1) // stride[i] + 1
           for i in range(2)]
    if min(out) < 1 or numel([x.shape[0], cout] + out) > MAX_ELEMS:
        return None
    fan = cin // groups * kh * kw
    w = declare_param(g, b, x.dtype, [cout, cin // groups, kh, kw], fan, "w")
    args = [x.name, w.name]
    if r.random() < 0.6:
        args.append(declare_param(g, b, x.dtype, [cout], fan, "bias").name)
    for key, val, dflt in (("stride", stride, 1), ("padding", pad, 0), ("dilation", dil, 1)):
        if val[0] == val[1] and (val[0] != dflt or r.random() < 0.2):
            args.append(f"{key} = {val[0]}")
        elif val[0] != val[1]:
            args.append(f"{key} = [{val[0]}, {val[1]}]")
    if groups > 1 or r.random() < 0.2:
        args.append(f"groups = {groups}")
    bound = x.bound * w.bound * fan + 1
    if bound >= MAX_BOUND:
        return None
    return b.let(f"conv2d({', '.join(args)})", x.dtype, [x.shape[0], cout] + out,
                 bound=bound, batch=x.batch)


def param_layer_norm(g, b):
    x = b.floats(lambda v: v.rank >= 1)
    if not x:
        return None
    d = x.shape[-1]
    w = declare_param(g, b, x.dtype, [d], d, "g")
    bias = declare_param(g, b, x.dtype, [d], d, "beta")
    eps = g.rng.choice(["", ", eps = 1e-5", ", eps = 1e-3"])
    return b.let(f"layer_norm({x.name}, {w.name}, {bias.name}{eps})", x.dtype, x.shape,
                 bound=math.sqrt(d) * w.bound + bias.bound, batch=x.batch)


def param_embedding(g, b):
    ids = b.pick(lambda v: v.is_int and v.lo >= 0 and v.hi <= 64)
    if not ids:
        return None
    d = g.rng.choice([2, 4, 8])
    if numel(ids.shape) * d > MAX_ELEMS:
        return None
    rows = max(ids.hi, 1) + g.rng.choice([0, 1, 5])
    t = declare_param(g, b, g.rng.choice(["f32", "f32", "f64"]), [rows, d], d, "table")
    return b.let(f"embedding({ids.name}, {t.name})", t.dtype, list(ids.shape) + [d],
                 bound=t.bound, batch=ids.batch)


# -- compile-time control flow in blocks ------------------------------------------

def cond_text(g, b, want):
    """A compile-time bool condition of the given value."""
    r = g.rng
    sizes = [(d, n) for d, names in b.dims.items() for n in names]
    if sizes and r.random() < 0.5:
        d, n = r.choice(sizes)
        k = r.randint(0, 8)
        text = f"{n} > {k}" if (d > k) == want else f"{n} <= {k}"
        if r.random() < 0.3:
            text = f"{text} && {'true' if want else '1 > 2 || false'}" if want else \
                f"{text} || false"
        return text
    name = g.fresh("flag")
    default = r.random() < 0.5
    b.scalars.append((name, "bool", "true" if default else "false",
                      None if default == want else ("true" if want else "false")))
    return name


def if_stmt(g, b):
    """`if` on a compile-time condition: a rebinding that differs per branch,
    or a parameter created differently in each branch (as nn.linear does)."""
    r = g.rng
    x = b.floats(lambda v: not v.name.startswith("&"))
    if not x:
        return None
    want = r.random() < 0.5
    cond = cond_text(g, b, want)
    if r.random() < 0.5 and x.rank >= 1:
        n = x.shape[-1]
        name = g.fresh("p")
        inits = [init_text(g, [n], n) for _ in range(2)]
        b.emit(f"if {cond} {{")
        dt = param_dtype(x.dtype)
        b.emit(f"  param {name}: {dt}{b.shape_text([n])} = {inits[0][0]}")
        b.emit("} else {")
        b.emit(f"  param {name}: {dt}{b.shape_text([n])} = {inits[1][0]}")
        b.emit("}")
        pb = max(inits[0 if want else 1][1], 0.05)
        b.add_param(name, dt, [n], pb)
        return b.let(f"{x.name} + {use_text(name, x.dtype)}", x.dtype, x.shape,
                     bound=x.bound + pb,
                     batch=x.batch)
    forms = [(f"tanh({x.name})", 1.0), (f"relu({x.name})", x.bound),
             (f"{x.name} * 0.5", x.bound / 2), (f"sigmoid({x.name})", 1.0)]
    a, c = r.sample(forms, 2)
    b.emit(f"if {cond} {{")
    b.emit(f"  {x.name} = {a[0]}")
    b.emit("} else {")
    b.emit(f"  {x.name} = {c[0]}")
    b.emit("}")
    x.bound = max(a[1], c[1])
    return x


def for_loop(g, b):
    """`for i in 0 .. n { x = layer(x) as h[i] }` over a shape-keeping
    block, or an unrolled rebinding that uses the loop variable."""
    r = g.rng
    x = b.floats(lambda v: not v.name.startswith("&") and v.bound < 100)
    if not x:
        return None
    n = r.randint(0, 3)
    var = g.fresh("i")
    if r.random() < 0.4 or x.dtype != "f32":
        b.emit(f"for {var} in 0 .. {n} {{")
        b.emit(f"  {x.name} = tanh({x.name} + 0.1 * {var})")
        b.emit("}")
        if n:
            x.bound = 1.0
        return x
    layer = make_block(g, b, [x], keep_shape=True)
    scope = g.fresh("h")
    squash = r.random() < 0.5 or layer.results[0].bound > 2 * x.bound + 4
    call = f"{layer.name}({x.name}{call_scalars(layer)}) as {scope}[{var}]"
    b.emit(f"for {var} in 0 .. {n} {{")
    b.emit(f"  {x.name} = {'tanh(' + call + ')' if squash else call}")
    b.emit("}")
    for i in range(n):
        for path, p in layer.params:
            b.add_param(f"{scope}.{i}.{path}", p.dtype, p.shape, p.bound)
    if n:
        x.bound = 1.0 if squash else max(x.bound, layer.results[0].bound) * 2 ** n
        if x.bound >= MAX_BOUND:
            x.bound = MAX_BOUND
    return x


def assert_stmt(g, b):
    sizes = [(d, n) for d, names in b.dims.items() for n in names]
    if not sizes:
        return None
    d, n = g.rng.choice(sizes)
    cond = g.rng.choice([f"{n} >= 1", f"{n} == {d}", f"{n} % 1 == 0 && {n} < {d + 1}"])
    b.emit(f'assert {cond}, "{n} is {d}"')
    return True


def no_result_block(g, b):
    """A block that returns nothing, called for its parameter (an
    expression statement), whose parameter a tie then uses."""
    x = b.floats(lambda v: v.rank >= 1 and v.dtype == "f32")
    if not x:
        return None
    blk = BlockDef(g.fresh("make"))
    init, bound = init_text(g, [x.shape[-1]], x.shape[-1])
    blk.lines = [f"block {blk.name}(n: int) {{", f"  param p: f32[n] = {init}", "}"]
    g.blocks.append(blk)
    scope = g.fresh("s")
    b.emit(f"{blk.name}({x.shape[-1]}) as {scope}")
    b.add_param(f"{scope}.p", "f32", [x.shape[-1]], max(bound, 0.05))
    return b.let(f"{x.name} * &{scope}.p", "f32", x.shape,
                 bound=x.bound * max(bound, 1), batch=x.batch)


# -- user blocks ----------------------------------------------------------------

SIZE_NAMES = "bnchwmdktsqruv"


def signature(g, b, args):
    """Argument declarations for the values `args`: each dimension a
    literal, a size variable (shared between equal sizes, sometimes) or
    part of a `*lead`."""
    r = g.rng
    used, decls = set(), []
    names = iter(["x", "y", "z", "x3", "x4"])
    lead_used = False
    for v in args:
        aname = next(names)
        dims = []
        shape = list(v.shape)
        if not lead_used and len(shape) >= 2 and r.random() < 0.25:
            k = r.randint(1, len(shape) - 1)
            dims.append("*lead")
            shape = shape[k:]
            lead_used = True
        for d in shape:
            opts = [n for n, val in b.sizevars.items() if val == d]
            if opts and r.random() < 0.5:
                dims.append(r.choice(opts))
            elif r.random() < 0.2:
                dims.append(str(d))
            else:
                n = next(c for c in list(SIZE_NAMES) + [f"n{i}" for i in range(40)]
                         if c not in b.sizevars and c not in used)
                b.sizevars[n] = d
                b.dims.setdefault(d, []).append(n)
                dims.append(n)
        used.add(aname)
        decls.append((aname, f"{v.dtype}[{', '.join(dims)}]"))
    return decls


def call_scalars(blk):
    return "".join(f", {n} = {t}" for n, t in blk.scalars if t is not None)


def make_block(g, caller, args, keep_shape=False):
    """A new block written from the values it is first called with."""
    r = g.rng
    blk = BlockDef(g.fresh("blk"))
    body = Body(g, "block", depth=caller.depth + 1)
    body.sizevars, body.scalars = {}, []
    decls = signature(g, body, args)
    for (aname, _), v in zip(decls, args):
        body.pool.append(Val(aname, v.dtype, v.shape, bound=v.bound, lo=v.lo, hi=v.hi,
                             batch=v.batch))
    g.grow(body, r.randint(1, 4))
    first = body.pool[0]
    if keep_shape:
        cands = [v for v in body.pool[len(args):] if v.dtype == first.dtype and
                 v.shape == first.shape and v.bound < MAX_BOUND]
        res = cands[-1] if cands else body.let(f"tanh({first.name})", first.dtype,
                                               first.shape, bound=1.0)
        if r.random() < 0.5:
            res = body.let(f"{first.name} + {res.name}", first.dtype, first.shape,
                           bound=first.bound + res.bound)
        results = [res]
    else:
        cands = [v for v in body.pool[len(args):] if v.bound < MAX_BOUND and v.dtype != "bool"]
        unused = ops.unused(body.lines, cands)
        cands = [v for v in cands if v not in unused] + unused   # unused ones last
        if not cands:
            cands = [body.let(f"tanh({first.name})" if first.is_float else f"{first.name} + 1",
                              first.dtype, first.shape, bound=1.0, lo=first.lo + 1,
                              hi=first.hi + 1, batch=first.batch)]
        two = len(cands) > 1 and (len(unused) > 1 or r.random() < 0.25)
        results = [cands[-1]] + ([cands[-2] if len(unused) > 1 else r.choice(cands[:-1])]
                                 if two else [])
    rtypes = [res_type(g, body, v) for v in results]
    ret = rtypes[0] if len(rtypes) == 1 else f"({', '.join(rtypes)})"
    sig = [f"{n}: {t}" for n, t in decls] + [f"{n}: {k} = {d}" for n, k, d, _ in body.scalars]
    blk.lines = [f"block {blk.name}({', '.join(sig)}) -> {ret} {{"] + body.lines + \
        [f"  return {', '.join(v.name for v in results)}", "}"]
    blk.args = list(args)
    blk.scalars = [(n, c) for n, _, _, c in body.scalars]
    blk.results = results
    blk.params = body.params
    g.blocks.append(blk)
    return blk


def res_type(g, body, v):
    dims = []
    for d in v.shape:
        opts = [n for n, val in body.sizevars.items() if val == d]
        dims.append(g.rng.choice(opts) if opts and g.rng.random() < 0.7 else str(d))
    return f"{v.dtype}[{', '.join(dims)}]"


def make_generic_block(g, x):
    """A lead-generic block `(x: f32[*lead, n]) -> f32[*lead, m]` whose body
    only touches the last axis, so that it can be called at any leading
    shape; each distinct shape is a specialisation of its own."""
    r = g.rng
    blk = BlockDef(g.fresh("gen"))
    blk.generic = True
    n = x.shape[-1]
    lines, last, bound = [], n, x.bound
    params = []
    cur = "x"
    for _ in range(r.randint(1, 4)):
        step = r.choice(["linear", "act", "norm", "softmax", "scale", "slice", "split"])
        nxt = g.fresh("v")
        if step == "linear":
            out = r.choice([2, 4, 8])
            scope = g.fresh("fc")
            lines.append(f"  let {nxt} = nn.linear({cur}, {out}) as {scope}")
            params += [(f"{scope}.weight", Val("", "f32", [out, last], bound=1 / math.sqrt(last))),
                       (f"{scope}.bias", Val("", "f32", [out], bound=1 / math.sqrt(last)))]
            bound, last = bound * math.sqrt(last) + 1, out
        elif step == "act":
            f = r.choice(["tanh", "relu", "gelu", "silu", "sigmoid"])
            lines.append(f"  let {nxt} = {f}({cur})")
            bound = 1.0 if f in ("tanh", "sigmoid") else bound + 0.3
        elif step == "norm":
            lines.append(f"  let {nxt} = {cur} / (abs(sum({cur}, axis = -1, keepdim = true)) + 1.0)")
        elif step == "softmax":
            lines.append(f"  let {nxt} = softmax({cur}, axis = -1)")
            bound = 1.0
        elif step == "scale":
            p = g.fresh("p")
            init, pb = init_text(g, [last], last)
            lines.append(f"  param {p}: f32[{last if last != n else 'n'}] = {init}")
            lines.append(f"  let {nxt} = {cur} * {p}")
            params.append((p, Val("", "f32", [last], bound=pb)))
            bound *= max(pb, 1)
        elif step == "slice" and last >= 2:
            k = r.randint(1, last - 1)
            lines.append(f"  let {nxt} = {cur}[..., 0:{k}]")
            last = k
        elif step == "split" and last % 2 == 0:
            a, c = g.fresh("v"), g.fresh("v")
            lines.append(f"  let ({a}, {c}) = split({cur}, 2, axis = -1)")
            lines.append(f"  let {nxt} = concat([{c}, {a}], axis = -1)")
        else:
            continue
        cur = nxt
        if bound >= MAX_BOUND:
            return None
    out_dim = "n" if last == n else str(last)
    blk.lines = [f"block {blk.name}(x: f32[*lead, n]) -> f32[*lead, {out_dim}] {{"] + \
        lines + [f"  return {cur}", "}"]
    blk.args = [x]
    blk.results = [Val("", "f32", list(x.shape[:-1]) + [last], bound=bound, batch=x.batch)]
    blk.params = params
    g.blocks.append(blk)
    return blk


def fits_block(blk, args):
    """Whether `args` can be passed to blk with results within the bounds
    computed at its first call (same types, no larger magnitudes or ranges)."""
    if not blk.reusable or len(args) != len(blk.args):
        return False
    for v, a in zip(args, blk.args):
        if v.dtype != a.dtype or v.bound > a.bound or v.lo < a.lo or v.hi > a.hi:
            return False
        if blk.generic:
            if v.rank < 1 or v.shape[-1] != a.shape[-1] or \
                    numel(v.shape[:-1]) * blk.results[0].shape[-1] > MAX_ELEMS:
                return False
        elif v.shape != a.shape:
            return False
    return True


def call_user_block(g, b):
    """A call of a user block, new or reused, with `as` (or without when its
    parameters cannot collide with the caller's), destructuring several
    results."""
    r = g.rng
    x = b.pick(lambda v: (v.is_float and v.bound < MAX_BOUND) or
               (v.is_int and v.lo >= 0 and v.hi <= 64))
    if not x or x.name.startswith("&"):
        return None
    args = [x]
    if r.random() < 0.3:
        y = b.pick(lambda v: v is not x and not v.name.startswith("&") and
                   (v.is_float and v.bound < MAX_BOUND))
        if y is not None:
            args.append(y)
    reuse = [blk for blk in g.blocks if fits_block(blk, args)]
    if reuse and r.random() < 0.6:
        blk = r.choice(reuse)
    elif x.dtype == "f32" and x.rank >= 1 and len(args) == 1 and r.random() < 0.3:
        blk = make_generic_block(g, x)
    else:
        blk = make_block(g, b, args)
    if blk is None:
        return None
    heads = {p.split(".")[0] for p, _ in blk.params}
    text = f"{blk.name}({', '.join(a.name for a in args)}{call_scalars(blk)})"
    prefix = ""
    if blk.params and (heads & b.heads or r.random() < 0.8):
        scope = g.fresh("s")
        text += f" as {scope}"
        prefix = scope + "."
    elif not blk.params and r.random() < 0.3:
        text += f" as {g.fresh('s')}"
    for path, p in blk.params:
        b.add_param(prefix + path, p.dtype, p.shape, p.bound)
    results = []
    for v in blk.results:
        shape = list(v.shape)
        if blk.generic:
            shape = list(x.shape[:-1]) + [v.shape[-1]]
        results.append(Val(g.fresh("v"), v.dtype, shape, bound=v.bound, lo=v.lo, hi=v.hi,
                           batch=(x.batch and x.rank >= 2) if blk.generic else v.batch))
        results[-1].batch = results[-1].batch and shape[:1] == [g.batch]
    names = ", ".join(v.name for v in results)
    b.emit(f"let ({names}) = {text}" if len(results) > 1 else f"let {names} = {text}")
    b.pool.extend(results)
    return results[-1]


def param_only(g, b):
    """A block that only creates a parameter and returns it unchanged (a
    class token, a learned bias), combined with a value of the caller."""
    x = b.floats(lambda v: v.rank >= 1 and v.dtype == "f32")
    if not x:
        return None
    r = g.rng
    d = x.shape[-1]
    blk = BlockDef(g.fresh("tok"))
    form = r.choice(["row", "vec", "none"])
    init, bound = init_text(g, [1, d] if form == "row" else [d], d)
    bound = max(bound, 0.05)
    if form == "row":
        blk.lines = [f"block {blk.name}(d: int) -> f32[1, d] {{",
                     f"  param token: f32[1, d] = {init}", "  return token", "}"]
        call, shape = f"{blk.name}({d})", [1, d]
    elif form == "vec":
        blk.lines = [f"block {blk.name}(d: int, scale: float = 1.0) -> f32[d] {{",
                     f"  param token: f32[d] = {init}", "  return token", "}"]
        call, shape = f"{blk.name}({d})", [d]
    else:
        blk.lines = [f"block {blk.name}() -> f32[{d}] {{",
                     f"  param token: f32[{d}] = {init}", "  return token", "}"]
        call, shape = f"{blk.name}()", [d]
    g.blocks.append(blk)
    scope = g.fresh("cls")
    b.add_param(f"{scope}.token", "f32", shape, bound)
    c = b.let(f"{call} as {scope}", "f32", shape, bound=bound)
    if x.rank == 2 and form == "row" and r.random() < 0.4 and \
            (x.shape[0] + 1) * d <= MAX_ELEMS:
        return b.let(f"concat([{c.name}, {x.name}])", "f32", [x.shape[0] + 1, d],
                     bound=max(bound, x.bound))
    out = ops.broadcast(x.shape, tuple(shape))
    return b.let(f"{x.name} + {c.name}", "f32", out, bound=x.bound + bound,
                 batch=x.batch and len(out) == x.rank)


def tie(g, b):
    """`&path` to a parameter created earlier in this scope (weight tying)."""
    if not b.params:
        return None
    r = g.rng
    path, p = r.choice(b.params)
    parts = path.split(".")
    if any(s.isdigit() for s in parts[1:]) and r.random() < 0.5:
        i = next(i for i, s in enumerate(parts) if s.isdigit())
        text = ".".join(parts[:i - 1] + [f"{parts[i - 1]}[{parts[i]}]"] + parts[i + 1:])
    else:
        text = path
    if r.random() < 0.5 or len(p.shape) != 2 or p.dtype != "f32":
        return b.let(f"&{text}", p.dtype, p.shape, bound=p.bound)
    # As nn.gpt's lm_head: h @ transpose(&wte.weight).
    x = b.floats(lambda v: v.dtype == p.dtype and v.rank >= 1 and v.shape[-1] == p.shape[1])
    if x is None:
        return b.let(f"transpose(&{text})", p.dtype, p.shape[::-1], bound=p.bound)
    shape = list(x.shape[:-1]) + [p.shape[0]]
    bound = x.bound * p.bound * p.shape[1]
    if numel(shape) > MAX_ELEMS or bound >= MAX_BOUND:
        return None
    return b.let(f"{x.name} @ transpose(&{text})", p.dtype, shape, bound=bound,
                 batch=x.batch and x.rank >= 2)


def tie_block(g, b):
    """A block called without `as` that ties a parameter of its caller's
    scope: a tie that leaves its block (a tied slot of the function)."""
    if not b.params:
        return None
    path, p = g.rng.choice(b.params)
    x = b.floats(lambda v: v.dtype == p.dtype and v.rank >= 1 and not v.name.startswith("&"))
    if x is None:
        return None
    blk = BlockDef(g.fresh("tied"))
    blk.reusable = False
    dims = ", ".join(str(d) for d in x.shape)
    blk.lines = [f"block {blk.name}(x: {x.dtype}[{dims}]) -> {x.dtype}[{dims}] {{",
                 f"  let w = &{path}", "  return x + mean(w)", "}"]
    g.blocks.append(blk)
    return b.let(f"{blk.name}({x.name})", x.dtype, x.shape, bound=x.bound + p.bound,
                 batch=x.batch)


# -- stdlib layers ------------------------------------------------------------------

def scoped(g, b, text, params):
    scope = g.fresh("s")
    for path, dtype, shape, bound in params:
        b.add_param(f"{scope}.{path}", dtype, shape, bound)
    return f"{text} as {scope}"


def nn_linear_to(g, b, x, out):
    n = x.shape[-1]
    return b.let(scoped(g, b, f"nn.linear({x.name}, {out})",
                        [("weight", "f32", [out, n], 1 / math.sqrt(n)),
                         ("bias", "f32", [out], 1 / math.sqrt(n))]),
                 "f32", list(x.shape[:-1]) + [out], bound=x.bound * math.sqrt(n) + 1,
                 batch=x.batch)


def f32_input(b, rank=None, pred=lambda v: True):
    return b.floats(lambda v: v.dtype == "f32" and v.rank >= 1 and
                    (rank is None or v.rank == rank) and v.bound < 1000 and pred(v))


def nn_linear(g, b):
    x = f32_input(b)
    if not x:
        return None
    r = g.rng
    n = x.shape[-1]
    out = r.choice([1, 2, 3, 4, 8, 16])
    if numel(x.shape[:-1]) * out > MAX_ELEMS:
        return None
    args, std = [x.name, b.scalar(out, "int")], 0.0
    bias = r.random() < 0.75
    if not bias or r.random() < 0.2:
        args.append(f"bias = {'true' if bias else 'false'}")
    if r.random() < 0.3:
        std = r.choice([0.02, 0.1])
        args.append(f"std = {std}")
    wb = 4 * std if std else 1 / math.sqrt(n)
    params = [("weight", "f32", [out, n], wb)] + ([("bias", "f32", [out], wb)] if bias else [])
    bound = x.bound * wb * n + wb
    if bound >= MAX_BOUND:
        return None
    return b.let(scoped(g, b, f"nn.linear({', '.join(args)})", params), "f32",
                 list(x.shape[:-1]) + [out], bound=bound, batch=x.batch)


def nn_layernorm(g, b):
    x = f32_input(b)
    if not x:
        return None
    n = x.shape[-1]
    eps = g.rng.choice(["", ", eps = 1e-6", ", 0.001"])
    return b.let(scoped(g, b, f"nn.layernorm({x.name}{eps})",
                        [("weight", "f32", [n], 1.0), ("bias", "f32", [n], 0.05)]),
                 "f32", x.shape, bound=math.sqrt(n) + 1, batch=x.batch)


def nn_mlp(g, b):
    x = f32_input(b)
    if not x:
        return None
    n = x.shape[-1]
    hidden = g.rng.choice([4, 8, 16])
    if numel(x.shape[:-1]) * hidden > MAX_ELEMS:
        return None
    extra = g.rng.choice(["", ", dropout = 0.1", ", std = 0.02", ", std = 0.02, proj_std = 0.01"])
    h = x.bound * math.sqrt(n) + 1
    bound = h * math.sqrt(hidden) + 1
    if bound >= MAX_BOUND:
        return None
    params = [("c_fc.weight", "f32", [hidden, n], 1 / math.sqrt(n)),
              ("c_proj.weight", "f32", [n, hidden], 1 / math.sqrt(hidden))]
    return b.let(scoped(g, b, f"nn.mlp({x.name}, {hidden}{extra})", params), "f32",
                 x.shape, bound=bound, batch=x.batch)


def nn_attention(g, b):
    """nn.causal_self_attention or nn.transformer_block on [b, t, c]."""
    x = f32_input(b, 3, lambda v: v.shape[2] % 2 == 0 and v.shape[2] <= 32 and
                  numel(v.shape) * 4 <= MAX_ELEMS)
    if not x:
        return None
    r = g.rng
    c = x.shape[2]
    heads = r.choice([h for h in (1, 2, 4) if c % h == 0])
    extra = r.choice(["", ", dropout = 0.1", ", std = 0.02"])
    if r.random() < 0.5:
        text = f"nn.causal_self_attention({x.name}, {heads}{extra})"
        params = [("c_attn.weight", "f32", [3 * c, c], 1 / math.sqrt(c)),
                  ("c_proj.weight", "f32", [c, c], 1 / math.sqrt(c))]
        bound = (x.bound * math.sqrt(c) + 1) * math.sqrt(c) + 1
    else:
        text = f"nn.transformer_block({x.name}, {heads}{extra})"
        params = [("ln_1.weight", "f32", [c], 1.0), ("attn.c_attn.weight", "f32", [3 * c, c],
                                                    1 / math.sqrt(c)),
                  ("mlp.c_fc.weight", "f32", [4 * c, c], 1 / math.sqrt(c))]
        bound = x.bound + 3 * (c + 2) * math.sqrt(c)
    if bound >= MAX_BOUND:
        return None
    return b.let(scoped(g, b, text, params), "f32", x.shape, bound=bound, batch=x.batch)


def nn_conv2d(g, b):
    x = f32_input(b, 4)
    if not x:
        return None
    r = g.rng
    cin, h, w = x.shape[1:]
    cout, k = r.randint(1, 6), r.randint(1, 3)
    stride, pad = r.choice([1, 1, 2]), r.choice([0, 0, 1, 2])
    out = [(d + 2 * pad - k) // stride + 1 for d in (h, w)]
    if min(out) < 1 or numel([x.shape[0], cout] + out) > MAX_ELEMS:
        return None
    args = [x.name, str(cout), str(k)]
    if stride != 1 or r.random() < 0.2:
        args.append(f"stride = {stride}")
    if pad or r.random() < 0.2:
        args.append(f"padding = {pad}")
    fan = cin * k * k
    params = [("weight", "f32", [cout, cin, k, k], 1 / math.sqrt(fan)),
              ("bias", "f32", [cout], 1 / math.sqrt(fan))]
    return b.let(scoped(g, b, f"nn.conv2d({', '.join(args)})", params), "f32",
                 [x.shape[0], cout] + out, bound=x.bound * math.sqrt(fan) + 1, batch=x.batch)


def nn_embedding(g, b, ids=None):
    ids = ids or b.pick(lambda v: v.dtype == "i32" and v.lo >= 0 and v.hi <= 64)
    if not ids:
        return None
    r = g.rng
    dim = r.choice([2, 4, 8, 16])
    if numel(ids.shape) * dim > MAX_ELEMS:
        return None
    num = ids.hi + r.choice([0, 0, 2])
    std = r.choice([None, 0.02, 0.5])
    extra = f", std = {std}" if std else ""
    return b.let(scoped(g, b, f"nn.embedding({ids.name}, {num}, {dim}{extra})",
                        [("weight", "f32", [num, dim], 4 * (std or 1.0))]),
                 "f32", list(ids.shape) + [dim], bound=4 * (std or 1.0), batch=ids.batch)


def nn_gpt(g, b):
    """A tiny nn.gpt (or nn.gpt_transformer): embeddings, blocks, ln_f and
    the tied lm_head."""
    ids = b.pick(lambda v: v.dtype == "i32" and v.rank == 2 and v.lo >= 0 and v.hi <= 64)
    if not ids:
        return None
    r = g.rng
    t = ids.shape[1]
    heads = r.choice([1, 2])
    embd = heads * r.choice([2, 4])
    vocab = ids.hi + r.choice([0, 3])
    layers = r.choice([0, 1, 2])
    full = r.random() < 0.7
    width = vocab if full else embd
    if numel(ids.shape) * max(width, 4 * embd) > MAX_ELEMS:
        return None
    name = "nn.gpt" if full else "nn.gpt_transformer"
    params = [("transformer.wte.weight" if full else "wte.weight", "f32", [vocab, embd], 0.08)]
    text = f"{name}({ids.name}, {vocab}, {t + r.choice([0, 2])}, {layers}, {heads}, {embd})"
    return b.let(scoped(g, b, text, params), "f32", list(ids.shape) + [width],
                 bound=0.08 * embd * math.sqrt(embd) + 1 if full else math.sqrt(embd) + 1,
                 batch=ids.batch)


def nn_lenet(g, b):
    x = f32_input(b, 4, lambda v: tuple(v.shape[1:]) == (1, 28, 28))
    if x is None:
        x = f32_input(b, 2, lambda v: v.shape[1] == 784)
        if x is None:
            return None
        x = b.let(f"reshape({x.name}, [{b.dim(x.shape[0], x.batch)}, 1, 28, 28])", "f32",
                  [x.shape[0], 1, 28, 28], bound=x.bound, batch=x.batch)
    classes = g.rng.choice([2, 10])
    return b.let(scoped(g, b, f"nn.lenet({x.name}, {classes})", [
        ("fc2.weight", "f32", [classes, 500], 0.05)]), "f32", [x.shape[0], classes],
        bound=x.bound * 50 + 1, batch=x.batch)


STDLIB_OPS = [(nn_linear, 6), (nn_layernorm, 2), (nn_mlp, 2), (nn_attention, 2),
              (nn_conv2d, 3), (nn_embedding, 3), (nn_gpt, 1), (nn_lenet, 2)]
BLOCK_OPS = [(param_use, 6), (param_conv2d, 5), (param_layer_norm, 2),
             (param_embedding, 2), (if_stmt, 5), (for_loop, 5), (assert_stmt, 2),
             (no_result_block, 1)]
COMMON_OPS = [(tie, 2), (param_only, 2), (tie_block, 1)]
PROGRAM_OPS = {fn for fn, _ in STDLIB_OPS + BLOCK_OPS + COMMON_OPS} | {call_user_block}
