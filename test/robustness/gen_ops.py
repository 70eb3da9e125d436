"""Typed values and the built-in operations of the model generator.

The generator never asks the compiler whether a program type-checks: it
tracks the static dtype and shape of every value it creates (and a bound on
its magnitude, or the range of an integer value) and only emits calls that
the rules in frontend/Builtins*.cpp accept. The bounds keep every value
finite by construction: an op whose result could grow past MAX_BOUND is not
chosen, and the guarded forms (`log(abs(x) + 1.0)`, `x / (abs(y) + 1.0)`,
...) keep the math defined everywhere, padding rows of zeros included.

A `Body` is one statement list under construction (a block, a train entry or
an infer entry); each op picks operands from its pool of values, writes one
`let` line and returns the new value, or returns None when the pool holds
nothing it applies to (the caller then tries another op).
"""
import math
import re

FLOATS = ("f32", "f16", "bf16", "f64")
INTS = ("i32", "i64", "u8", "u16")
INT_RANGE = {"i32": (-2**31, 2**31), "i64": (-2**63, 2**63),
             "u8": (0, 256), "u16": (0, 65536), "bool": (0, 2)}
MAX_ELEMS = 2048      # no value the generator creates has more elements
MAX_BOUND = 1.0e4     # nor a larger magnitude (f16 holds 65504)
MAX_DIM = 64


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def broadcast(a, b):
    """NumPy broadcasting of two shapes, or None."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def unused(lines, pool):
    """The values of `pool` that no line after their definition uses."""
    text = "\n".join(lines)
    return [v for v in pool if "." not in v.name and
            len(re.findall(rf"\b{v.name}\b", text)) == 1]


def fmt_float(v):
    text = repr(float(v))
    return text if ("." in text or "e" in text) else text + ".0"


class Val:
    """A value of the program being written: how to spell it, its static
    type, a bound on |value| (floats) or its range [lo, hi) (integers and
    bools), and whether axis 0 is the batch (infer outputs must keep it)."""

    def __init__(self, name, dtype, shape, bound=1.0, lo=0, hi=2, batch=False):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.bound, self.lo, self.hi, self.batch = bound, lo, hi, batch

    @property
    def is_float(self):
        return self.dtype in FLOATS

    @property
    def is_int(self):
        return self.dtype in INTS

    @property
    def rank(self):
        return len(self.shape)

    def type_text(self, dims=None):
        dims = dims or [str(d) for d in self.shape]
        return f"{self.dtype}[{', '.join(dims)}]"


class Body:
    """One statement list being written, with the values it can use.

    `params` lists the parameters created so far in this scope, by their
    path relative to it (what a tie `&path` names); `heads` the first path
    components, so that a call without `as` can be checked for collisions.
    `dims` maps a size to the size variables (and int arguments) of the
    enclosing block that hold it, so that shapes can be written with them.
    """

    def __init__(self, gen, kind, depth=0):
        self.gen, self.kind, self.depth = gen, kind, depth
        self.rng = gen.rng
        self.lines, self.pool = [], []
        self.params, self.heads = [], set()
        self.dims = {}
        self.sizevars = {}      # a block's size variables: name -> size
        self.scalars = []       # a block's scalar arguments: (name, kind,
        self.indent = 1         # default text, call text or None)

    def emit(self, line):
        self.lines.append("  " * self.indent + line)

    def let(self, expr, dtype, shape, **kw):
        name = self.gen.fresh("v")
        self.emit(f"let {name} = {expr}")
        v = Val(name, dtype, shape, **kw)
        v.batch = v.batch and v.rank >= 1 and v.shape[0] == self.gen.batch
        self.pool.append(v)
        return v

    def add_param(self, path, dtype, shape, bound):
        self.params.append((path, Val("&" + path, dtype, shape, bound=bound)))
        self.heads.add(path.split(".")[0])

    def dangling(self):
        """Values that no statement uses (they would be dead code)."""
        return unused(self.lines, self.pool)

    # -- choosing operands ------------------------------------------------
    def pick(self, pred=lambda v: True, recent=True):
        """A value of the pool for which pred holds, recent ones likelier."""
        cands = [v for v in self.pool if pred(v)]
        if not cands:
            return None
        if recent and self.rng.random() < 0.6:
            return cands[-1 - min(int(self.rng.expovariate(0.7)), len(cands) - 1)]
        return self.rng.choice(cands)

    def floats(self, pred=lambda v: True):
        return self.pick(lambda v: v.is_float and v.bound < MAX_BOUND and pred(v))

    # -- writing sizes ------------------------------------------------------
    def dim(self, value, axis_is_batch=False):
        """A size, written as a literal or as a block's size variable or
        an expression of one (`2 * n`, `n / 2`), or as the batch const."""
        opts = [str(value)]
        for d, names in self.dims.items():
            for name in names:
                if d == value:
                    opts += [name, name]
                elif d * 2 == value:
                    opts.append(f"2 * {name}")
                elif d > 1 and d // 2 == value:
                    opts.append(f"{name} / 2")
                elif d + 1 == value:
                    opts.append(f"{name} + 1")
        if axis_is_batch and self.gen.batch_const and value == self.gen.batch:
            opts += [self.gen.batch_const] * 3
        return self.rng.choice(opts)

    def shape_text(self, shape, batch=False):
        return "[" + ", ".join(self.dim(d, batch and i == 0)
                               for i, d in enumerate(shape)) + "]"

    def scalar(self, value, kind="float"):
        """A compile-time number: a literal, or in a block sometimes a
        scalar argument whose default is the value or whose call passes it."""
        text = fmt_float(value) if kind == "float" else str(value)
        if self.kind != "block" or self.rng.random() > 0.25:
            return text
        name = self.gen.fresh("s" if kind == "float" else "k")
        if self.rng.random() < 0.6:
            self.scalars.append((name, kind, text, None))
        else:
            other = fmt_float(value + 1) if kind == "float" else str(value + 1)
            self.scalars.append((name, kind, other, text))
        if kind == "int":
            self.dims.setdefault(value, []).append(name)
        return name


# -- unary and binary float math ----------------------------------------------

def unary(b):
    x = b.floats()
    if not x:
        return None
    r, bx, n = b.rng, x.bound, x.name
    p = r.choice([0.5, 1.5, 2, 3, 2.0])
    forms = [
        (f"neg({n})", bx), (f"-{n}", bx), (f"abs({n})", bx),
        (f"tanh({n})", 1.0), (f"sigmoid({n})", 1.0), (f"relu({n})", bx),
        (f"silu({n})", bx + 0.3), (f"gelu({n})", bx + 0.2),
        (f'gelu({n}, approximate = "tanh")', bx + 0.2),
        (f'gelu({n}, approximate = "none")', bx + 0.2),
        (f"exp(tanh({n}))", 2.72), (f"log(abs({n}) + 1.0)", math.log1p(bx)),
        (f"sqrt(abs({n}) + 1.0)", math.sqrt(1 + bx)),
        (f"rsqrt(abs({n}) + 1.0)", 1.0),
        (f"pow(abs({n}) + 1.0, {p})", (1 + bx) ** p),
        (f"{{s}} * {n}", bx * 0.5), (f"{n} * 2.0", bx * 2),
        (f"{n} - 1", bx + 1), (f"1.0 - {n}", bx + 1), (f"{n} / 4.0", bx / 4),
        (f"{n} % 1.5", 1.5),
        (f"dropout({n}, {{p}})", bx * 2),
    ]
    if bx <= 3:
        forms.append((f"exp({n})", math.exp(bx)))
    expr, bound = r.choice(forms)
    if bound >= MAX_BOUND:
        return None
    # The scalars of the chosen form may become arguments of a block.
    if "{s}" in expr:
        expr = expr.replace("{s}", b.scalar(0.5))
    if "{p}" in expr:
        expr = expr.replace("{p}", b.scalar(r.choice([0.0, 0.1, 0.5])))
    return b.let(expr, x.dtype, x.shape, bound=bound, batch=x.batch)


def partner(b, x, pred=lambda v: True):
    """A value of x's dtype that broadcasts with x within the size limit,
    made from x when the pool has none (a mean with keepdim), or x itself."""
    def ok(v):
        s = broadcast(x.shape, v.shape)
        return (v.dtype == x.dtype and s is not None and numel(s) <= MAX_ELEMS
                and v.bound < MAX_BOUND and pred(v))
    y = b.pick(ok)
    if y is not None and b.rng.random() < 0.8:
        return y
    if x.rank and b.rng.random() < 0.5:
        ax = b.rng.randrange(x.rank)
        shape = list(x.shape)
        shape[ax] = 1
        axis = ax - x.rank if b.rng.random() < 0.5 else ax
        return b.let(f"mean({x.name}, axis = {axis}, keepdim = true)", x.dtype,
                     shape, bound=x.bound, batch=x.batch and ax != 0)
    return x


def batched(result_shape, *ops):
    return any(o.batch and o.rank == len(result_shape) for o in ops)


def binary(b):
    x = b.floats()
    if not x:
        return None
    y = partner(b, x)
    shape = broadcast(x.shape, y.shape)
    bx, by = x.bound, y.bound
    forms = [("{x} + {y}", bx + by), ("{x} - {y}", bx + by),
             ("{x} * {y}", bx * by), ("{x} / (abs({y}) + 1.0)", bx),
             ("maximum({x}, {y})", max(bx, by)),
             ("minimum({x}, {y})", max(bx, by)),
             ("{x} % (abs({y}) + 1.0)", by + 1),
             ("pow(abs({x}) + 1.0, tanh({y}))", 1 + bx)]
    form, bound = b.rng.choice(forms)
    if bound >= MAX_BOUND:
        return None
    return b.let(form.format(x=x.name, y=y.name), x.dtype, shape, bound=bound,
                 batch=batched(shape, x, y))


def compare(b):
    x = b.pick(lambda v: v.dtype != "bool" and (v.is_int or v.bound < MAX_BOUND))
    if not x:
        return None
    op = b.rng.choice(["<", "<=", ">", ">=", "==", "!="])
    if x.is_int:
        rhs = str(b.rng.randrange(max(x.lo, 0), max(x.hi, 1)))
        shape = x.shape
        bat = x.batch
    elif b.rng.random() < 0.5:
        rhs = b.rng.choice(["0.0", "0.5", "-0.25", "0"])
        shape, bat = x.shape, x.batch
    else:
        y = partner(b, x)
        rhs, shape = y.name, broadcast(x.shape, y.shape)
        bat = batched(shape, x, y)
    return b.let(f"{x.name} {op} {rhs}", "bool", shape, lo=0, hi=2, batch=bat)


def logic(b):
    c = b.pick(lambda v: v.dtype == "bool")
    if not c:
        return None
    d = b.pick(lambda v: v.dtype == "bool" and broadcast(v.shape, c.shape)
               is not None and numel(broadcast(v.shape, c.shape)) <= MAX_ELEMS)
    if d is None or b.rng.random() < 0.3:
        return b.let(f"!{c.name}", "bool", c.shape, batch=c.batch)
    shape = broadcast(c.shape, d.shape)
    op = b.rng.choice(["&&", "||"])
    return b.let(f"{c.name} {op} {d.name}", "bool", shape,
                 batch=batched(shape, c, d))


def where(b):
    c = b.pick(lambda v: v.dtype == "bool")
    if not c:
        return None
    def fits(v):
        s = broadcast(v.shape, c.shape)
        return v.is_float and v.bound < MAX_BOUND and s and numel(s) <= MAX_ELEMS
    x = b.pick(fits)
    if not x:
        return None
    y = b.pick(lambda v: fits(v) and v.dtype == x.dtype and broadcast(
        broadcast(v.shape, c.shape), x.shape) is not None and numel(broadcast(
            broadcast(v.shape, c.shape), x.shape)) <= MAX_ELEMS)
    other = y.name if y else "0.0"
    shape = broadcast(broadcast(c.shape, x.shape), y.shape if y else ())
    bound = max(x.bound, y.bound if y else 0)
    return b.let(f"where({c.name}, {x.name}, {other})", x.dtype, shape,
                 bound=bound, batch=batched(shape, c, x, *([y] if y else [])))


# -- casts and integer math ------------------------------------------------------

def cast(b):
    x = b.pick(lambda v: v.is_int or v.dtype == "bool" or v.bound < MAX_BOUND)
    if not x:
        return None
    r = b.rng
    kw = dict(batch=x.batch)
    if x.is_float:
        choice = r.choice(["float", "float", "int", "small", "bool"])
        if choice == "float":
            to = r.choice([d for d in FLOATS if d != x.dtype])
            if to == "f16" and x.bound > 6.0e4:
                return None
            return b.let(f"{to}({x.name})", to, x.shape, bound=x.bound, **kw)
        if choice == "int":
            to = r.choice(["i32", "i64"])
            k = r.choice([1, 4, 10])
            m = int(x.bound * k) + 1
            expr = f"{to}({x.name} * {fmt_float(k)})" if k > 1 else f"{to}({x.name})"
            return b.let(expr, to, x.shape, lo=-m, hi=m + 1, **kw)
        if choice == "small":
            to = r.choice(["u8", "u16"])
            k = max(1, min(16, int(200 / (x.bound + 1))))
            return b.let(f"{to}(abs({x.name}) * {fmt_float(k)})", to, x.shape,
                         lo=0, hi=int(x.bound * k) + 2, **kw)
        return b.let(f"bool({x.name})", "bool", x.shape, **kw)
    to = r.choice(["f32", "f32", "f64", "bf16", "f16", "i64", "i32", "u8", "bool"])
    if to == x.dtype:
        to = "f32"
    lo, hi = INT_RANGE.get(to, (None, None))
    if lo is not None and to != "bool" and not (lo <= x.lo and x.hi <= hi):
        to = "i64"
    if to in FLOATS:
        bound = max(abs(x.lo), abs(x.hi)) + 1.0
        if bound >= MAX_BOUND:
            return None
        return b.let(f"{to}({x.name})", to, x.shape, bound=bound, **kw)
    if to == "bool":
        return b.let(f"bool({x.name})", "bool", x.shape, **kw)
    return b.let(f"{to}({x.name})", to, x.shape, lo=x.lo, hi=x.hi, **kw)


def int_math(b):
    x = b.pick(lambda v: v.is_int and abs(v.lo) < 2**20 and abs(v.hi) < 2**20)
    if not x:
        return None
    r = b.rng
    signed = x.dtype in ("i32", "i64")
    one = [(f"{x.name} + 1", x.lo + 1, x.hi + 1), (f"{x.name} * 2", 2 * x.lo, 2 * x.hi),
           (f"{x.name} % 3", 0, 3), (f"relu({x.name})", max(x.lo, 0), max(x.hi, 1)),
           (f"maximum({x.name}, 1)", max(x.lo, 1), max(x.hi, 2)),
           (f"minimum({x.name}, 2)", min(x.lo, 2), min(x.hi, 3))]
    if signed:
        one += [(f"-{x.name}", -x.hi + 1, -x.lo + 1),
                (f"abs({x.name})", 0, max(abs(x.lo), abs(x.hi)) + 1),
                (f"{x.name} - 1", x.lo - 1, x.hi - 1)]
    forms = [(e, lo, hi, x.shape, [x]) for e, lo, hi in one]
    y = b.pick(lambda v: v.dtype == x.dtype and v is not x and broadcast(
        v.shape, x.shape) is not None and numel(broadcast(v.shape, x.shape)) <= MAX_ELEMS)
    if y is not None:
        forms.append((f"{x.name} + {y.name}", x.lo + y.lo, x.hi + y.hi - 1,
                      broadcast(x.shape, y.shape), [x, y]))
    expr, lo, hi, shape, used = r.choice(forms)
    tlo, thi = INT_RANGE[x.dtype]
    if lo < tlo or hi > thi or hi <= lo:
        return None
    return b.let(expr, x.dtype, shape, lo=lo, hi=hi, batch=batched(shape, *used))


# -- reductions ----------------------------------------------------------------

def axes_arg(b, x, allow_list=True):
    """(text, axes) for a reduction: nothing (all axes), an int (maybe
    negative) or a list of distinct axes."""
    r = b.rng
    if x.rank == 0 or r.random() < 0.2:
        return "", list(range(x.rank))
    if allow_list and x.rank >= 2 and r.random() < 0.3:
        axes = sorted(r.sample(range(x.rank), r.randint(1, x.rank)))
        text = [str(a - x.rank if r.random() < 0.3 else a) for a in axes]
        return f", axis = [{', '.join(text)}]", axes
    a = r.randrange(x.rank)
    return f", axis = {a - x.rank if r.random() < 0.4 else a}", [a]


def reduce(b):
    x = b.pick(lambda v: (v.is_float and v.bound < MAX_BOUND) or v.is_int)
    if not x:
        return None
    r = b.rng
    op = r.choice(["sum", "mean", "max", "min"] if x.is_float else ["sum", "max", "min"])
    text, axes = axes_arg(b, x)
    keep = r.random() < 0.4 and x.rank > 0
    count = numel([x.shape[a] for a in axes])
    shape = [1 if i in axes else d for i, d in enumerate(x.shape) if keep or i not in axes]
    kw = ", keepdim = true" if keep else (", keepdim = false" if r.random() < 0.1 else "")
    bat = x.batch and 0 not in axes
    expr = f"{op}({x.name}{text}{kw})"
    if x.is_float:
        bound = x.bound * (count if op == "sum" else 1)
        if bound >= MAX_BOUND:
            return None
        return b.let(expr, x.dtype, shape, bound=bound, batch=bat)
    if op == "sum":
        lo, hi = x.lo * count, (x.hi - 1) * count + 1
        return b.let(expr, "i64", shape, lo=min(lo, 0), hi=max(hi, 1), batch=bat)
    return b.let(expr, x.dtype, shape, lo=x.lo, hi=x.hi, batch=bat)


def argmax(b):
    x = b.pick(lambda v: v.rank >= 1 and v.dtype != "bool")
    if not x:
        return None
    a = b.rng.randrange(x.rank)
    keep = b.rng.random() < 0.3
    shape = [1 if i == a else d for i, d in enumerate(x.shape) if keep or i != a]
    axis = a - x.rank if b.rng.random() < 0.5 else a
    kw = ", keepdim = true" if keep else ""
    return b.let(f"argmax({x.name}, axis = {axis}{kw})", "i64", shape,
                 lo=0, hi=x.shape[a], batch=x.batch and a != 0)


def softmax(b):
    x = b.floats(lambda v: v.rank >= 1)
    if not x:
        return None
    op = b.rng.choice(["softmax", "log_softmax"])
    a = b.rng.randrange(x.rank)
    axis = "" if (a == x.rank - 1 and b.rng.random() < 0.4) else \
        f", axis = {a - x.rank if b.rng.random() < 0.5 else a}"
    bound = 1.0 if op == "softmax" else 2 * x.bound + math.log(x.shape[a]) + 1
    return b.let(f"{op}({x.name}{axis})", x.dtype, x.shape, bound=bound, batch=x.batch)


# -- shapes ---------------------------------------------------------------------

def factor_shape(rng, n, max_rank=3):
    """A random shape with n elements."""
    primes, m, p = [], n, 2
    while m > 1:
        while m % p == 0:
            primes.append(p)
            m //= p
        p += 1
    rank = rng.randint(1, max_rank)
    dims = [1] * rank
    for q in primes:
        dims[rng.randrange(rank)] *= q
    return dims


def reshape(b):
    x = b.pick(lambda v: v.rank >= 1)
    if not x:
        return None
    r = b.rng
    keep = x.batch and x.rank >= 2 and r.random() < 0.8
    head = [x.shape[0]] if keep else []
    rest = numel(x.shape[1:] if keep else x.shape)
    new = head + factor_shape(r, rest)
    dims = [b.dim(d, keep and i == 0) for i, d in enumerate(new)]
    if r.random() < 0.5:
        dims[r.randrange(len(dims))] = "-1"
    return b.let(f"reshape({x.name}, [{', '.join(dims)}])", x.dtype, new,
                 bound=x.bound, lo=x.lo, hi=x.hi, batch=keep)


def to_image(b):
    """A reshape of a batched value to [b, c, h, w] (most values the data
    gives are not images), for the convolutions and pools."""
    x = b.pick(lambda v: v.batch and v.rank in (2, 3) and numel(v.shape[1:]) >= 4)
    if not x:
        return None
    n = numel(x.shape[1:])
    shapes = [(c, h, n // (c * h)) for c in (1, 2, 3, 4) for h in (2, 3, 4, 6, 8)
              if n % (c * h) == 0 and n // (c * h) >= 2]
    if not shapes:
        return None
    shape = [x.shape[0]] + list(b.rng.choice(shapes))
    return b.let(f"reshape({x.name}, {b.shape_text(shape, True)})", x.dtype, shape,
                 bound=x.bound, lo=x.lo, hi=x.hi, batch=True)


def flatten(b):
    x = b.pick(lambda v: v.rank >= 2)
    if not x:
        return None
    r = b.rng
    if r.random() < 0.4:
        s, e, text = 1, x.rank - 1, f"flatten({x.name})"
    else:
        s = r.randrange(x.rank)
        e = r.randrange(s, x.rank)
        args = f", start = {s - x.rank if r.random() < 0.3 else s}"
        if e != x.rank - 1 or r.random() < 0.5:
            args += f", end = {e - x.rank if r.random() < 0.3 else e}"
        text = f"flatten({x.name}{args})"
    shape = list(x.shape[:s]) + [numel(x.shape[s:e + 1])] + list(x.shape[e + 1:])
    return b.let(text, x.dtype, shape, bound=x.bound, lo=x.lo, hi=x.hi,
                 batch=x.batch and s > 0)


def transpose(b):
    x = b.pick(lambda v: v.rank >= 2)
    if not x:
        return None
    r = b.rng
    if r.random() < 0.5:
        perm = list(range(x.rank))
        perm[-2], perm[-1] = perm[-1], perm[-2]
        text = f"transpose({x.name})"
    else:
        perm = list(range(x.rank))
        if x.batch and r.random() < 0.7:
            rest = perm[1:]
            r.shuffle(rest)
            perm = [0] + rest
        else:
            r.shuffle(perm)
        shown = [str(p - x.rank if r.random() < 0.2 else p) for p in perm]
        text = f"transpose({x.name}, [{', '.join(shown)}])"
    shape = [x.shape[p] for p in perm]
    return b.let(text, x.dtype, shape, bound=x.bound, lo=x.lo, hi=x.hi,
                 batch=x.batch and perm[0] == 0)


def concat(b):
    x = b.pick(lambda v: v.rank >= 1)
    if not x:
        return None
    r = b.rng
    a = r.randrange(x.rank)
    def joins(v):
        return (v.dtype == x.dtype and v.rank == x.rank and all(
            i == a or v.shape[i] == x.shape[i] for i in range(x.rank)))
    parts = [x] + [b.pick(joins) for _ in range(r.choice([1, 1, 2]))]
    total = sum(p.shape[a] for p in parts)
    if numel(x.shape) // x.shape[a] * total > MAX_ELEMS:
        return None
    shape = list(x.shape)
    shape[a] = total
    axis = "" if a == 0 and r.random() < 0.5 else \
        f", axis = {a - x.rank if r.random() < 0.4 else a}"
    names = ", ".join(p.name for p in parts)
    return b.let(f"concat([{names}]{axis})", x.dtype, shape,
                 bound=max(p.bound for p in parts), lo=min(p.lo for p in parts),
                 hi=max(p.hi for p in parts), batch=x.batch and a != 0)


def split(b):
    x = b.pick(lambda v: any(d % 2 == 0 or d % 3 == 0 for d in v.shape))
    if not x:
        return None
    r = b.rng
    axes = [i for i, d in enumerate(x.shape) if d % 2 == 0 or d % 3 == 0]
    a = r.choice(axes)
    n = r.choice([k for k in (2, 3) if x.shape[a] % k == 0])
    shape = list(x.shape)
    shape[a] //= n
    names = [b.gen.fresh("v") for _ in range(n)]
    axis = "" if a == 0 and r.random() < 0.5 else \
        f", axis = {a - x.rank if r.random() < 0.4 else a}"
    b.emit(f"let ({', '.join(names)}) = split({x.name}, {n}{axis})")
    vals = [Val(nm, x.dtype, shape, bound=x.bound, lo=x.lo, hi=x.hi,
                batch=x.batch and a != 0) for nm in names]
    b.pool.extend(vals)
    return vals[-1]


def broadcast_to(b):
    x = b.pick(lambda v: numel(v.shape) * 2 <= MAX_ELEMS)
    if not x:
        return None
    r = b.rng
    shape = [r.choice([2, 3]) if d == 1 and r.random() < 0.7 else d for d in x.shape]
    if shape == list(x.shape) or r.random() < 0.3:
        shape = [r.choice([1, 2, 3])] + shape
    if numel(shape) > MAX_ELEMS or tuple(shape) == x.shape:
        return None
    return b.let(f"broadcast_to({x.name}, {b.shape_text(shape)})", x.dtype, shape,
                 bound=x.bound, lo=x.lo, hi=x.hi,
                 batch=x.batch and len(shape) == x.rank and shape[0] == x.shape[0])


def arange(b):
    n = b.rng.choice([2, 3, 4, 5, 8, 16])
    if b.rng.random() < 0.5:
        return b.let(f"f32(arange({n})) / {n}.0", "f32", [n], bound=1.0)
    return b.let(f"arange({b.dim(n)})", "i32", [n], lo=0, hi=n)


def index(b):
    x = b.pick(lambda v: v.rank >= 1)
    if not x:
        return None
    r = b.rng
    items, shape = [], []
    explicit = r.randint(1, x.rank)
    ellipsis_at = r.randint(0, explicit) if (r.random() < 0.4 and explicit < x.rank) \
        else None
    axes = list(range(explicit)) if ellipsis_at is None else \
        list(range(ellipsis_at)) + list(range(x.rank - explicit + ellipsis_at, x.rank))
    keep_batch = x.batch and r.random() < 0.8
    for pos, ax in enumerate(axes):
        if ellipsis_at == pos:
            items.append("...")
        d = x.shape[ax]
        if ax == 0 and keep_batch:
            items.append(":")
            continue
        kind = r.random()
        if kind < 0.3:
            i = r.randrange(d)
            items.append(str(i - d if r.random() < 0.4 else i))
        elif kind < 0.4:
            items.append(":")
        else:
            lo = r.randrange(d)
            hi = r.randint(lo + 1, d)
            step = r.choice([1, 1, 2, 3])
            text = (str(lo) if lo or r.random() < 0.5 else "") + ":" + \
                   (str(hi - d) if hi < d and r.random() < 0.3 else
                    (str(hi) if hi < d or r.random() < 0.5 else ""))
            if step > 1:
                text += f":{step}"
            items.append(text)
    if ellipsis_at == len(axes):
        items.append("...")
    # The resulting shape, from the items as written.
    ax_iter = iter(axes)
    kept = {}
    for it in items:
        if it == "...":
            continue
        ax = next(ax_iter)
        d = x.shape[ax]
        if ":" not in it:
            kept[ax] = None
            continue
        parts = it.split(":") + [""]
        lo = int(parts[0]) if parts[0] else 0
        hi = int(parts[1]) if parts[1] else d
        step = int(parts[2]) if parts[2] else 1
        lo, hi = (lo + d if lo < 0 else lo), (hi + d if hi < 0 else hi)
        kept[ax] = (hi - lo - 1) // step + 1
    for ax in range(x.rank):
        if ax not in kept:
            shape.append(x.shape[ax])
        elif kept[ax] is not None:
            shape.append(kept[ax])
    bat = x.batch and kept.get(0, x.shape[0]) == x.shape[0] and 0 not in \
        [a for a, v in kept.items() if v is None]
    return b.let(f"{x.name}[{', '.join(items)}]", x.dtype, shape, bound=x.bound,
                 lo=x.lo, hi=x.hi, batch=bat)


# -- linear algebra and neural ops without parameters ---------------------------

def matmul(b):
    x = b.floats(lambda v: v.rank >= 1)
    if not x:
        return None
    r = b.rng
    k = x.shape[-1]
    def rhs_ok(v):
        if v.dtype != x.dtype or v.bound >= MAX_BOUND or v.rank == 0:
            return False
        if v.rank == 1:
            return v.shape[0] == k
        return v.shape[-2] == k and result_shape(x.shape, v.shape) is not None
    y = b.pick(rhs_ok)
    if y is None or r.random() < 0.4:
        if x.rank < 2:
            return None
        y_text, y_shape = f"transpose({x.name})", x.shape[:-2] + (x.shape[-1], x.shape[-2])
        y_bound = x.bound
        bat = x.batch and x.rank >= 3
    else:
        y_text, y_shape, y_bound = y.name, y.shape, y.bound
        bat = x.batch and x.rank >= 2 and (y.rank <= 2 or x.rank >= y.rank)
    shape = result_shape(x.shape, y_shape)
    bound = x.bound * y_bound * k
    if shape is None or numel(shape) > MAX_ELEMS or bound >= MAX_BOUND:
        return None
    return b.let(f"{x.name} @ {y_text}", x.dtype, shape, bound=bound,
                 batch=bat and len(shape) == x.rank)


def result_shape(a, b):
    """torch.matmul's result shape, or None."""
    if len(a) == 1 and len(b) == 1:
        return () if a[0] == b[0] else None
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        return None
    batch = broadcast(a2[:-2], b2[:-2])
    if batch is None:
        return None
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def pool2d(b):
    x = b.floats(lambda v: v.rank == 4 and min(v.shape[2:]) >= 2)
    if not x:
        return None
    r = b.rng
    op = r.choice(["max_pool2d", "avg_pool2d"])
    k = r.randint(1, min(3, *x.shape[2:]))
    s = r.choice([k, 1, 2])
    p = r.randint(0, k // 2)
    out = [(d + 2 * p - k) // s + 1 for d in x.shape[2:]]
    args = f"{x.name}, {k}"
    if s != k or r.random() < 0.3:
        args += f", stride = {s}"
    if p or r.random() < 0.2:
        args += f", padding = {p}"
    return b.let(f"{op}({args})", x.dtype, list(x.shape[:2]) + out,
                 bound=x.bound, batch=x.batch)


def layer_norm(b):
    """layer_norm with weight and bias computed from the pool (a block
    uses parameters instead: gen_program.param_layer_norm)."""
    x = b.floats(lambda v: v.rank >= 1)
    if not x:
        return None
    d = x.shape[-1]
    w = b.pick(lambda v: v.dtype == x.dtype and v.shape == (d,) and v.bound < 100)
    if w is None:
        if x.rank == 1:
            w = x
        else:
            axes = ", ".join(str(i) for i in range(x.rank - 1))
            w = b.let(f"mean({x.name}, axis = [{axes}])", x.dtype, [d], bound=x.bound)
    eps = b.rng.choice(["", ", eps = 1e-5", ", eps = 0.001"])
    bound = math.sqrt(d) * w.bound + w.bound
    return b.let(f"layer_norm({x.name}, {w.name}, {w.name}{eps})", x.dtype, x.shape,
                 bound=bound, batch=x.batch)


def attention(b):
    """attention on a rank-4 value, or on a rank-3 [b, t, c] one split
    into heads as nn.split_heads does."""
    r = b.rng
    x = b.floats(lambda v: v.rank == 4 or (v.rank == 3 and v.shape[2] % 2 == 0))
    if not x:
        return None
    if x.rank == 3:
        bt, t, c = x.shape
        h = r.choice([h for h in (1, 2, 4) if c % h == 0])
        q = b.let(f"transpose(reshape({x.name}, [{b.dim(bt, x.batch)}, {b.dim(t)}, "
                  f"{h}, {b.dim(c // h)}]), [0, 2, 1, 3])", x.dtype,
                  [bt, h, t, c // h], bound=x.bound, batch=x.batch)
    else:
        q = x
    kv = b.pick(lambda v: v.dtype == q.dtype and v.rank == 4 and v.shape[:2] ==
                q.shape[:2] and v.shape[3] == q.shape[3] and v.bound < MAX_BOUND)
    kv = kv or q
    causal = r.random() < 0.5 and kv.shape[2] == q.shape[2]
    args = [q.name, kv.name, kv.name]
    if causal or r.random() < 0.3:
        args.append(f"causal = {'true' if causal else 'false'}")
    if r.random() < 0.3:
        args.append(f"scale = {r.choice(['0.5', '0.125', '1.0', '2'])}")
    return b.let(f"attention({', '.join(args)})", q.dtype,
                 list(q.shape[:3]) + [kv.shape[3]], bound=kv.bound, batch=q.batch)


def embedding_table(b):
    """embedding with a table from the pool: ids in range of its rows."""
    ids = b.pick(lambda v: v.is_int and v.lo >= 0 and numel(v.shape) <= 256)
    if not ids:
        return None
    t = b.floats(lambda v: v.rank == 2 and v.shape[0] >= ids.hi and
                 numel(ids.shape) * v.shape[1] <= MAX_ELEMS)
    if not t:
        return None
    return b.let(f"embedding({ids.name}, {t.name})", t.dtype,
                 list(ids.shape) + [t.shape[1]], bound=t.bound, batch=ids.batch)


# The ops that need no parameters, with their weights.
BUILTIN_OPS = [
    (unary, 10), (binary, 8), (compare, 3), (logic, 2), (where, 3), (cast, 4),
    (int_math, 2), (reduce, 4), (argmax, 1), (softmax, 3), (reshape, 3),
    (to_image, 2), (flatten, 2), (transpose, 2), (concat, 2), (split, 2), (broadcast_to, 1),
    (arange, 1), (index, 4), (matmul, 4), (pool2d, 2), (layer_norm, 2),
    (attention, 2), (embedding_table, 1),
]
