"""Programs of the model generator: data, entries and the whole text.

`generate(seed)` returns the text of one `.mdl` program and its metadata
(the data and input files the runner writes, with the value ranges the
program relies on). The program depends only on the seed.

Structure: a program has data sets, train entries and infer entries. A
train entry grows a *shared section* from its data fields (casts, built-in
ops, stdlib layers, user blocks), then a loss and metrics; an infer entry
repeats the shared section on inputs named like the fields (so both create
the same parameters) and outputs values that keep the batch axis. Some
programs are infer-only, some have two train entries. The values a body
grows come from the built-in ops (gen_ops) and the block ops (gen_blocks).
"""
import random

import gen_blocks as blocks
import gen_ops as ops
from gen_ops import MAX_BOUND, Body, Val, fmt_float, numel


class ProgramGen:
    """One program being written: its random source, names, blocks, consts,
    data sets and the files the runner will write."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seed = seed
        self.counter = 0
        self.blocks = []
        self.consts = []      # (name, value)
        self.batch = self.rng.choice([1, 2, 2, 3, 4, 4, 8])
        self.batch_const = "B" if self.rng.random() < 0.5 else None
        if self.batch_const:
            self.consts.append(("B", self.batch))
        self.files = {}       # path -> file spec (see data_file)
        self.infer_inputs = {}  # entry -> {input: path}
        self.rows = {}          # entry -> rows of its input files
        self.data_text = []
        self.datasets = []

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- growing a body --------------------------------------------------------
    def grow(self, body, n):
        """Adds n values to body by random ops (an op that does not apply
        to the pool returns None and another is drawn)."""
        table = ops.BUILTIN_OPS + blocks.STDLIB_OPS + blocks.COMMON_OPS + \
            (blocks.BLOCK_OPS if body.kind == "block" else []) + \
            ([(blocks.call_user_block, 12 if body.depth == 0 else 4)] if body.depth < 2 else [])
        fns, weights = zip(*table)
        done = tries = 0
        while done < n and tries < 20 * n:
            tries += 1
            op = self.rng.choices(fns, weights)[0]
            if op(self, body) if op in blocks.PROGRAM_OPS else op(body):
                done += 1

    # -- the whole program ------------------------------------------------------
    def program(self):
        """The text and the runner's metadata: one or two train entries
        (with an infer entry repeating the first), or infer entries only."""
        r = self.rng
        trains, infers = [], []
        kind = r.choices(["train", "infer_only", "two_trains"], [0.72, 0.16, 0.12])[0]
        if kind != "infer_only":
            ds = self.data_set("d0")
            t, shared = self.train_entry("t0", ds)
            trains.append(t)
            if r.random() < 0.8:
                infers.append(self.shared_infer("r0", ds, shared))
            if kind == "two_trains":
                ds1 = ds if r.random() < 0.5 else self.data_set("d1")
                trains.append(self.train_entry("t1", ds1)[0])
        if kind == "infer_only" or r.random() < 0.25:
            for i in range(r.choice([1, 1, 2])):
                infers.append(self.free_infer(f"r{len(infers) + 5}"))
        for ds in self.datasets:
            self.finish_data(ds)
        out = [f"# modelc generator program, seed {self.seed}", 'import "nn"']
        out += [f"const {n} = {v}" for n, v in self.consts]
        block_lines = [ln for b in self.blocks for ln in b.lines]
        entries = [ln for e in trains + infers for ln in e]
        parts = [block_lines, self.data_text, entries]
        if r.random() < 0.2:
            parts = [self.data_text, entries, block_lines]   # order does not matter
        for p in parts:
            out += p
        meta = {"seed": self.seed, "files": self.files, "infer_inputs": self.infer_inputs}
        return "\n".join(out) + "\n", meta

    # -- data -----------------------------------------------------------------
    def data_set(self, name):
        """Fields of a data set (the text is written by finish_data, after
        the entries, since a loss may add a target field)."""
        r = self.rng
        ds = {"name": name, "fields": [], "eval": r.random() < 0.3}
        self.datasets.append(ds)
        spe = r.choice([1, 2, 3])
        ds["accumulate"] = r.choice([1, 1, 1, 2])
        ds["n"] = self.batch * ds["accumulate"] * spe
        template = r.choice(["vector", "vector", "image", "image", "sequence", "tokens", "tokens"])
        if template == "vector":
            f = r.choice([4, 6, 8, 12, 16, 32])
            self.field(ds, "feat", r.choice(["f32", "f32", "f64", "u8", "u16"]), [f])
            self.field(ds, "lab", r.choice(["u8", "i32", "i64", "u16"]), [],
                       hi=r.randint(2, 10), role="label")
        elif template == "image":
            if r.random() < 0.1:
                shape = [1, 28, 28]
            else:
                shape = [r.choice([1, 2, 3]), r.randint(4, 8), r.randint(4, 8)]
            self.field(ds, "img", r.choice(["u8", "f32"]), shape)
            self.field(ds, "lab", r.choice(["u8", "i32"]), [], hi=r.randint(2, 10),
                       role="label")
        elif template == "sequence":
            t, d = r.randint(2, 8), r.choice([4, 8, 16])
            self.field(ds, "seq", r.choice(["f32", "f64"]), [t, d])
            self.field(ds, "lab", r.choice(["i32", "i64"]), r.choice([[], [t]]),
                       hi=r.randint(2, 8), role="label")
        else:
            t = r.randint(2, 8)
            self.field(ds, "tok", r.choice(["u8", "u16", "i32", "i64"]), [t + 1],
                       hi=r.randint(4, 40), role="tokens",
                       windows=r.random() < 0.4)
        if not any(f.get("windows") for f in ds["fields"]):
            for _ in range(r.choice([0, 0, 1, 2])):
                dt = r.choice(["bool", "i64", "f64", "u16", "f32", "i32"])
                shape = r.choice([[], [2], [4], [3, 2]])
                self.field(ds, self.fresh("aux"), dt, shape, hi=r.randint(2, 16))
        return ds

    def field(self, ds, name, dtype, shape, hi=16, role="feature", windows=False):
        r = self.rng
        f = {"name": name, "dtype": dtype, "shape": shape, "lo": 0, "hi": hi,
             "role": role, "windows": windows, "ignore": None}
        if dtype in ops.FLOATS:
            f["lo"], f["hi"] = -1, 1
        elif dtype == "u8" and role == "feature":
            f["hi"] = 256
        ds["fields"].append(f)
        if (role == "label" and len(shape) == 1 and shape[0] >= 3
                and not windows and r.random() < 0.4):
            if dtype in ("i32", "i64"):
                f["ignore"] = r.choice([-100, -100, -1, hi])
            elif dtype == "u8":
                f["ignore"] = 255
        return f

    def finish_data(self, ds):
        """The data declaration (and its eval copy): one npy per field, or
        the fields as members of one npz, or a token stream in windows."""
        r = self.rng
        use_npz = r.random() < 0.25
        for suffix in [""] + (["_eval"] if ds["eval"] else []):
            name = ds["name"] + suffix
            n = ds["n"] if not suffix else self.batch * r.choice([1, 2])
            lines = [f"data {name} {{"]
            for f in ds["fields"]:
                dims = [self.dim_with_const(d) for d in f["shape"]]
                if f["windows"]:
                    path = f"{name}_{f['name']}.bin"
                    length = f["shape"][0]
                    tokens = n * (length - 1) + 1
                    self.files[path] = dict(spec_of(f), kind="raw", shape=[tokens])
                    src = f'windows(file("{path}"))'
                elif use_npz:
                    path = f"{name}.npz"
                    spec = self.files.setdefault(path, {"kind": "npz", "members": {}})
                    spec["members"][f["name"]] = dict(spec_of(f), shape=[n] + f["shape"])
                    src = f'npz("{path}", "{f["name"]}")'
                else:
                    path = f"{name}_{f['name']}.npy"
                    self.files[path] = dict(spec_of(f), kind="npy", shape=[n] + f["shape"])
                    src = f'npy("{path}")'
                lines.append(f"  {f['name']}: {f['dtype']}[{', '.join(dims)}] = {src}")
            self.data_text += lines + ["}"]

    def dim_with_const(self, d):
        for name, v in self.consts:
            if v == d and self.rng.random() < 0.5:
                return name
            if v + 1 == d and self.rng.random() < 0.5:
                return f"{name} + 1"
        if d >= 4 and self.rng.random() < 0.15:
            name = f"D{d}"
            if all(n != name for n, _ in self.consts):
                self.consts.append((name, d))
            return name
        return str(d)

    # -- entries --------------------------------------------------------------
    def field_vals(self, fields, prefix):
        return [Val(prefix + f["name"], f["dtype"], [self.batch] + f["shape"],
                    bound=1.0, lo=f["lo"], hi=f["hi"] if f["dtype"] not in ops.FLOATS else 2,
                    batch=True) for f in fields]

    def prep(self, body):
        """Features from raw fields: integers and bytes to floats in about
        [-1, 1], f64 to f32 (the stdlib layers take f32), bools to 0/1."""
        for v in list(body.pool):
            r = self.rng.random()
            if v.dtype == "u8" and v.hi > 16:
                body.let(f"f32({v.name}) / 255.0", "f32", v.shape, bound=1.0, batch=True)
            elif v.is_int and r < 0.5:
                body.let(f"f32({v.name}) / {fmt_float(v.hi)}", "f32", v.shape,
                         bound=1.0, batch=True)
            elif v.dtype in ("f64", "f16", "bf16") and r < 0.7:
                body.let(f"f32({v.name})", "f32", v.shape, bound=1.0, batch=True)
            elif v.dtype == "bool" and r < 0.5:
                body.let(f"f32({v.name})", "f32", v.shape, bound=1.0, batch=True)
            if v.dtype in ("u8", "u16", "i64") and v.hi <= 64 and r < 0.6:
                # ids for an embedding: nn.embedding takes i32
                body.let(f"i32({v.name})", "i32", v.shape, lo=0, hi=v.hi, batch=True)

    def train_entry(self, name, ds):
        r = self.rng
        body = Body(self, "train")
        tokens = [f for f in ds["fields"] if f["role"] == "tokens"]
        features = [f for f in ds["fields"] if f["role"] not in ("label", "tokens")]
        labels = [f for f in ds["fields"] if f["role"] == "label"]
        body.pool = self.field_vals(features, "batch.")
        label_val = None
        if tokens:
            f = tokens[0]
            t = f["shape"][0] - 1
            tok = Val(f"batch.{f['name']}", f["dtype"], [self.batch, t + 1],
                      lo=0, hi=f["hi"], batch=True)
            ids = body.let(f"i32({tok.name}[:, 0:{self.dim_with_const(t)}])"
                           if f["dtype"] != "i32" else f"{tok.name}[:, 0:{t}]",
                           "i32", [self.batch, t], lo=0, hi=f["hi"], batch=True)
            label_val = Val(f"{tok.name}[:, 1:{t + 1}]", f["dtype"], [self.batch, t],
                            lo=0, hi=f["hi"], batch=True)
            label_val.ignore = f["ignore"]
            if r.random() < 0.5:
                blocks.nn_embedding(self, body, ids)
        else:
            self.prep(body)
        if labels:
            f = labels[0]
            label_val = Val(f"batch.{f['name']}", f["dtype"], [self.batch] + f["shape"],
                            lo=0, hi=f["hi"], batch=True)
            label_val.ignore = f["ignore"]
        self.grow(body, r.randint(3, 8))
        shared = list(body.lines)
        shared_pool = list(body.pool)
        loss_terms, metrics = self.loss(body, ds, label_val)
        lines = [f"train {name} {{", f"  data = {ds['name']}",
                 f"  batch = {self.batch_const or self.batch}"]
        lines += body.lines
        lines.append(f"  loss = {' + '.join(loss_terms)}")
        if metrics:
            lines += ["  metrics {"] + [f"    {k} = {e}" for k, e in metrics] + ["  }"]
        lines += self.settings(ds)
        return lines + ["}"], (shared, shared_pool, ds)

    def loss(self, body, ds, label):
        """Loss terms (f32 scalars) and metrics, from the values of the body."""
        r = self.rng
        terms, metrics = [], []
        if label is not None and r.random() < 0.85:
            logits = self.logits(body, label)
            lab = label.name
            if label.dtype not in ("i32", "i64") and r.random() < 0.5:
                lab = f"i32({lab})"
            args = f"{logits.name}, {lab}"
            ign = getattr(label, "ignore", None)
            if ign is not None and ign != -100:
                args += f", ignore_index = {ign}"
            elif r.random() < 0.15:
                args += ", ignore_index = -100"
            ce = body.let(f"cross_entropy({args})", "f32", [], bound=10.0)
            terms.append(ce.name)
            if r.random() < 0.6:
                metrics.append(("acc", f"accuracy({logits.name}, {lab})"))
        if not terms or r.random() < 0.4:
            terms.append(self.scalar_term(body, ds))
        if len(terms) > 1 and r.random() < 0.5:
            terms[1] = f"0.1 * {terms[1]}"
        for v in body.dangling()[-3:]:
            # Values nothing uses would be dead code: the loss keeps them live.
            expr = f"mean({v.name})" if v.is_float else f"mean(f32({v.name}))"
            terms.append(f"0.01 * {expr if v.dtype in ('f32', 'bool') or not v.is_float else f'f32({expr})'}")
        for _ in range(r.choice([0, 0, 1, 2])):
            v = body.pick(lambda v: v.rank >= 0 and v.dtype != "bool" and
                          (v.is_int or v.bound < MAX_BOUND) and not v.name.startswith("&"))
            if v is not None:
                op = r.choice(["sum", "max", "min"] + (["mean"] if v.is_float else []))
                metrics.append((self.fresh("m"), f"{op}({v.name})"))
        return terms, metrics

    def logits(self, body, label):
        """A float value of shape label.shape + [C] with C >= the label range."""
        r = self.rng
        classes = max(label.hi, 2) + r.choice([0, 0, 1, 3])
        lead = list(label.shape)
        target = tuple(lead + [classes])
        v = body.pick(lambda v: v.is_float and v.shape == target and v.bound < 100)
        if v is not None:
            return v
        src = body.floats(lambda v: v.batch and v.rank >= 1 and v.bound < 1000)
        if src is None:
            src = body.pool[0]
            src = body.let(f"f32({src.name})" if src.dtype != "f32" else src.name,
                           "f32", src.shape, bound=1.0, batch=True)
        if src.dtype != "f32":
            src = body.let(f"f32({src.name})", "f32", src.shape, bound=src.bound, batch=True)
        if tuple(src.shape[:-1]) == tuple(lead) and src.rank == len(lead) + 1:
            return blocks.nn_linear_to(self, body, src, classes)
        flat = src
        if src.rank != 2:
            flat = body.let(f"reshape({src.name}, [{body.dim(self.batch, True)}, -1])",
                            "f32", [self.batch, numel(src.shape[1:])], bound=src.bound,
                            batch=True)
        out = blocks.nn_linear_to(self, body, flat, numel(target[1:]))
        if len(target) == 2:
            return out
        return body.let(f"reshape({out.name}, {body.shape_text(target, True)})", "f32",
                        target, bound=out.bound, batch=True)

    def scalar_term(self, body, ds):
        r = self.rng
        v = body.floats(lambda v: not v.name.startswith("batch.")) or body.floats()
        if v is None:
            v = body.let(f"f32({body.pool[0].name})", "f32", body.pool[0].shape,
                         bound=1.0, batch=True)
        choice = r.random()
        if choice < 0.3 and v.batch:
            tgt = self.field(ds, self.fresh("tgt"), v.dtype if v.dtype != "bf16" else "f32",
                             list(v.shape[1:]))
            tname = f"batch.{tgt['name']}"
            if tgt["dtype"] != v.dtype:
                tname = f"{v.dtype}({tname})"
            expr = f"mse_loss({v.name}, {tname})"
        elif choice < 0.45:
            w = body.pick(lambda u: u.dtype == v.dtype and u.shape == v.shape and u is not v)
            expr = f"mse_loss({v.name}, {(w or v).name})" if w else f"mean({v.name} * {v.name})"
        else:
            expr = f"{r.choice(['mean', 'sum', 'max', 'min'])}({v.name})"
        if v.dtype != "f32":
            expr = f"f32({expr})"
        return body.let(expr, "f32", [], bound=1.0).name

    def settings(self, ds):
        r = self.rng
        steps = r.randint(1, 6)
        opt = r.choice(["sgd", "adam", "adamw"])
        if opt == "sgd":
            args = [f"lr = {r.choice(['0.01', '0.05', '1e-3'])}"]
            mom = r.choice([0, 0, 0.5, 0.9])
            if mom:
                args.append(f"momentum = {mom}")
                if r.random() < 0.5:
                    args.append("nesterov = true")
            if r.random() < 0.3:
                args.append("weight_decay = 0.01")
        else:
            args = [f"lr = {r.choice(['1e-3', '0.01', '3e-4'])}"]
            if r.random() < 0.3:
                args.append("betas = [0.9, 0.95]")
            if r.random() < 0.2:
                args.append("eps = 1e-6")
            if r.random() < 0.3:
                args.append(f"weight_decay = {r.choice(['0', '0.1', '0.01'])}")
        lines = [f"  optimizer = {opt}({', '.join(args)})", f"  steps = {steps}"]
        sched = r.choice(["none", "constant", "warmup_cosine", "linear", "step_lr"])
        if sched == "constant":
            lines.append(f"  schedule = {r.choice(['constant()', 'constant'])}")
        elif sched in ("warmup_cosine", "linear") and steps > 1:
            extra = ", min_lr = 1e-4" if sched == "warmup_cosine" and r.random() < 0.5 else ""
            lines.append(f"  schedule = {sched}(warmup = {r.randrange(steps)}{extra})")
        elif sched == "step_lr":
            lines.append(f"  schedule = step_lr(every = {r.randint(1, 3)}, gamma = 0.5)")
        if r.random() < 0.3:
            lines.append(f"  grad_clip = {r.choice(['1.0', '0.5', '10'])}")
        if ds["accumulate"] > 1:
            lines.append(f"  accumulate = {ds['accumulate']}")
        if r.random() < 0.3:
            lines.append(f"  seed = {r.randint(0, 99)}")
        if r.random() < 0.3:
            lines.append(f"  shuffle = {r.choice(['true', 'false'])}")
        if r.random() < 0.4:
            lines.append(f"  precision = {r.choice(['f32', 'bf16'])}")
        if ds["eval"]:
            every = r.choice(["epoch", "1", "2"])
            lines += ["  eval {", f"    data = {ds['name']}_eval", f"    every = {every}"]
            if r.random() < 0.5:
                lines.append("    steps = 1")
            lines.append("  }")
        if r.random() < 0.3:
            lines += ["  log {", f"    every = {r.randint(1, 3)}", "  }"]
        if r.random() < 0.1:
            lines += ["  checkpoint {", f"    every = {r.randint(1, 3)}",
                      '    dir = "ckpt"', "  }"]
        return lines

    def shared_infer(self, name, ds, shared):
        """An infer entry that repeats a train entry's shared section."""
        lines, pool, _ = shared
        text = "\n".join(lines)
        used = [f for f in ds["fields"] if f"batch.{f['name']}" in text]
        outs = self.outputs(lines, [v for v in pool if not v.name.startswith("batch.")])
        if not used or not outs:
            return []
        body = [f"infer {name} {{"]
        self.infer_inputs[name] = {}
        for f in used:
            body.append(f"  input {f['name']}: {f['dtype']}"
                        f"[{', '.join(str(d) for d in [self.batch] + f['shape'])}]")
            self.input_file(name, f["name"], spec_of(f), f["shape"])
        body += [ln.replace("batch.", "") for ln in lines]
        return body + outs + ["}"]

    def outputs(self, lines, pool):
        """Output declarations: values that keep the batch axis, those that
        nothing uses first (so that the body is not dead code), and one
        unused value without the batch axis, broadcast to get one."""
        r = self.rng
        unused = ops.unused(lines, pool)
        batched = [v for v in pool if v.batch]
        outs = [v for v in unused if v.batch][-3:] or \
            r.sample(batched, min(len(batched), r.choice([1, 1, 2])))
        exprs = []
        lift = [v for v in unused if not v.batch and numel(v.shape) * self.batch <= 4096]
        if lift:
            v = lift[-1]
            exprs.append(f"broadcast_to(reshape({v.name}, [1, -1]), "
                         f"[{self.batch}, {numel(v.shape)}])")
        for v in outs:
            expr = v.name
            if v.is_float and v.rank >= 2 and r.random() < 0.3:
                expr = f"softmax({v.name}, axis = -1)"
            elif v.rank >= 2 and v.dtype != "bool" and r.random() < 0.2:
                expr = f"argmax({v.name}, axis = -1)"
            exprs.append(expr)
        return [f"  output {self.fresh('y')} = {e}" for e in exprs]

    def free_infer(self, name):
        """An infer entry of its own: inputs of random types, a body, outputs."""
        r = self.rng
        body = Body(self, "infer")
        inputs = []
        self.infer_inputs[name] = {}
        for i in range(r.choice([1, 1, 2, 3])):
            dt = r.choice(["f32", "f32", "f32", "f64", "f16", "i32", "i64", "u8", "bool"])
            shape = r.choice([[4], [8], [2, 8], [3, 4], [2, 4, 4], [16]])
            iname = f"x{i}"
            hi = r.randint(2, 16)
            spec = {"dtype": dt, "lo": -1 if dt in ops.FLOATS else 0,
                    "hi": 1 if dt in ops.FLOATS else hi, "ignore": None}
            inputs.append(f"  input {iname}: {dt}[{', '.join(str(d) for d in [self.batch] + shape)}]")
            self.input_file(name, iname, spec, shape)
            body.pool.append(Val(iname, dt, [self.batch] + shape, bound=1.0, lo=spec["lo"],
                                 hi=spec["hi"] if dt not in ops.FLOATS else 2, batch=True))
        if r.random() < 0.5:
            self.prep(body)
        self.grow(body, r.randint(1, 6))
        inputs_seen = len(inputs)
        derived = body.pool[inputs_seen:]
        outs = self.outputs(body.lines, derived) or self.outputs(body.lines, body.pool)
        lines = [f"infer {name} {{"]
        order = inputs + body.lines
        if r.random() < 0.2:
            order = body.lines + inputs     # inputs may be declared anywhere
        return lines + order + outs + ["}"]

    def input_file(self, entry, name, spec, shape):
        """An infer input's file; all inputs of an entry have the same rows,
        a multiple of the batch or one more (a padded last batch)."""
        if entry not in self.rows:
            self.rows[entry] = self.batch * self.rng.choice([1, 2, 3]) + \
                self.rng.choice([0, 0, 1])
        rows = self.rows[entry]
        path = f"{entry}_{name}.npy"
        self.files[path] = dict(spec, kind="npy", shape=[rows] + list(shape))
        self.infer_inputs[entry][name] = path


def spec_of(f):
    return {"dtype": f["dtype"], "lo": f["lo"], "hi": f["hi"], "ignore": f["ignore"]}


def generate(seed):
    """The program for `seed`: (text, metadata for the runner)."""
    return ProgramGen(seed).program()
