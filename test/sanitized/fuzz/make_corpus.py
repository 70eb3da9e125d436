#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora into corpus/TARGET/: a few valid
files of each format (written by NumPy, or byte for byte as the reference
writers lay them out) and a few edge cases, each the smallest file that
reaches one check. The output depends on nothing but this script (and, for
the manifests, on modelc), so the corpora in the repository are exactly
what it writes:

    /usr/bin/python3 test/sanitized/fuzz/make_corpus.py \\
        [--modelc build/bin/modelc]    # also the manifest seeds

Regression inputs of fixed findings live beside the seeds, named
regress-*; this script leaves them alone.
"""
import argparse
import gzip
import io
import json
import os
import struct
import subprocess
import tempfile
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def write(target, name, data):
    directory = os.path.join(HERE, "corpus", target)
    os.makedirs(directory, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def safetensors(header, data=b"", pad=True, raw=None):
    text = raw if raw is not None else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    f32 = np.arange(6, dtype="<f4").tobytes()
    write("safetensors", "empty", safetensors({}))
    write("safetensors", "one-f32", safetensors(
        {"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}, f32))
    write("safetensors", "metadata-and-dtypes", safetensors({
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]},
        "b": {"dtype": "I64", "shape": [], "data_offsets": [4, 12]},
        "c": {"dtype": "BOOL", "shape": [0, 3], "data_offsets": [12, 12]},
        "d": {"dtype": "U8", "shape": [3], "data_offsets": [12, 15]},
    }, bytes(range(15))))
    # Edge cases, each refused by one check.
    valid = {"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}
    text = json.dumps(valid).encode()
    write("safetensors", "edge-nul-then-garbage",
          safetensors(None, f32, pad=False, raw=text + b"\0garbage"))
    write("safetensors", "edge-tab-padding",
          safetensors(None, f32, pad=False, raw=text + b"\t\t"))
    write("safetensors", "edge-duplicate-key", safetensors(None, f32, raw=(
        b'{"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]},'
        b'"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}}')))
    write("safetensors", "edge-overlap", safetensors({
        "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
        "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}, f32))
    write("safetensors", "edge-gap", safetensors(
        {"a": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}, f32))
    write("safetensors", "edge-unknown-dtype", safetensors(
        {"a": {"dtype": "F8_E4M3", "shape": [24], "data_offsets": [0, 24]}}, f32))


def npy(array, version=None):
    out = io.BytesIO()
    if version is None:
        np.save(out, array)
    else:
        np.lib.format.write_array(out, array, version=version)
    return out.getvalue()


def npy_seeds():
    write("npy", "f32-2x3", npy(np.arange(6, dtype="<f4").reshape(2, 3)))
    write("npy", "u8-scalar", npy(np.array(7, dtype="u1")))
    write("npy", "bool-empty", npy(np.zeros((0, 2), dtype="?")))
    write("npy", "i64-v2", npy(np.arange(3, dtype="<i8"), version=(2, 0)))
    write("npy", "f16-v3", npy(np.ones(2, dtype="<f2"), version=(3, 0)))
    good = npy(np.arange(3, dtype="<i4"))
    write("npy", "edge-one-tuple-without-comma", good.replace(b"(3,)", b"(3) "))
    write("npy", "edge-fortran", npy(np.asfortranarray(np.ones((2, 2), "<f4"))))
    write("npy", "edge-trailing-byte", good + b"\0")
    write("npy", "edge-big-endian", npy(np.arange(2, dtype=">f4")))


def npz(members, compressed):
    out = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)
    return out.getvalue()


def npz_seeds():
    x = npy(np.arange(12, dtype="<f4").reshape(4, 3))
    y = npy(np.arange(4, dtype="<i8"))
    write("npz", "stored-two", npz([("x.npy", x), ("y.npy", y)], False))
    write("npz", "deflated-two", npz([("x.npy", x), ("y.npy", y)], True))
    write("npz", "member-without-suffix", npz([("x", y)], True))
    # A member whose .npy header claims far more data than the archive
    # records: refused before its data is inflated.
    bomb = npy(np.zeros((4, 3), dtype="u1")).replace(b"(4, 3)", b"(4000000, 3)")
    write("npz", "edge-header-claims-more", npz([("x.npy", bomb)], True))
    write("npz", "edge-not-npy", npz([("x.npy", b"hello")], True))
    write("npz", "edge-empty-archive", npz([], True))


def idx(array, code):
    header = bytes([0, 0, code, array.ndim]) + b"".join(
        struct.pack(">I", d) for d in array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def idx_seeds():
    images = np.arange(12, dtype="u1").reshape(3, 2, 2)
    write("idx", "u8-images", idx(images, 0x08))
    write("idx", "u8-labels-gz", gzip.compress(idx(np.arange(5, dtype="u1"), 0x08), mtime=0))
    write("idx", "i32", idx(np.arange(4, dtype="i4").reshape(2, 2), 0x0C))
    write("idx", "f64-gz", gzip.compress(idx(np.ones((2, 3), "f8"), 0x0E), mtime=0))
    shard = struct.pack("<256i", 20240520, 1, 6, *([0] * 253))
    write("idx", "llmc-shard", shard + np.arange(6, dtype="<u2").tobytes())
    write("idx", "edge-truncated", idx(images, 0x08)[:-3])
    write("idx", "edge-gz-trailing-garbage",
          gzip.compress(idx(images, 0x08), mtime=0) + b"junk")


def state_json_seeds():
    state = {"step": 20, "epoch": 1, "batch_in_epoch": 3, "rng_counter": 20,
             "loss_scale": 1.0, "source_hash": "0123456789abcdef",
             "entry": "train", "total_steps": 100, "seed": 7,
             "params_finite": True, "settings": {"lr": "0.01"}}
    write("state-json", "valid", json.dumps(state, indent=2) + "\n")
    old = {k: v for k, v in state.items() if k not in ("params_finite", "settings")}
    write("state-json", "older-without-settings", json.dumps(old))
    write("state-json", "edge-negative-counter", json.dumps(dict(state, rng_counter=-1)))
    write("state-json", "edge-float-integer", json.dumps(dict(state, epoch=9.99e22)))
    write("state-json", "edge-nul-then-garbage", json.dumps(state) + "\0garbage")


def manifest_seeds(modelc):
    """The manifests of two examples, cut out of the object files modelc
    writes (symbol modelc_manifest, modelc_manifest_size bytes)."""
    for example in ["fashion_mlp", "lenet"]:
        with tempfile.TemporaryDirectory() as tmp:
            obj = os.path.join(tmp, "p.o")
            subprocess.run([modelc, os.path.join(ROOT, "examples", example + ".mdl"),
                            "--target", "cpu", "--emit=obj", "-o", obj], check=True)
            write("manifest", example, symbol_bytes(obj, "modelc_manifest", tmp))


def symbol_bytes(obj, symbol, tmp):
    table = subprocess.run(["llvm-objdump-19", "-t", obj], check=True,
                           capture_output=True, text=True).stdout
    for line in table.splitlines():
        fields = line.split()
        if fields and fields[-1] == symbol:
            value, section, size = int(fields[0], 16), fields[-3], int(fields[-2], 16)
            out = os.path.join(tmp, "section")
            subprocess.run(["llvm-objcopy-19", "-O", "binary",
                            "--only-section=" + section, obj, out], check=True)
            with open(out, "rb") as f:
                return f.read()[value:value + size]
    raise SystemExit(f"{obj}: no symbol {symbol}")


def frontend_seeds():
    write("frontend", "minimal-infer", (
        "import \"nn\"\n"
        "infer double {\n  input x: f32[2, 4]\n"
        "  output y = nn.linear(x * 2.0, 3) as fc\n}\n"))
    write("frontend", "edge-deep-nesting", "const A = " + "(" * 300 + "1" + ")" * 300 + "\n")
    write("frontend", "edge-bad-utf8", b"const A = \"\xff\xfe\"\n")
    write("frontend", "edge-unterminated", "block b(x: f32[n]) -> f32[n] {\n  return x +")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modelc", help="also write the manifest seeds")
    args = parser.parse_args()
    safetensors_seeds()
    npy_seeds()
    npz_seeds()
    idx_seeds()
    state_json_seeds()
    frontend_seeds()
    if args.modelc:
        manifest_seeds(args.modelc)


if __name__ == "__main__":
    main()
