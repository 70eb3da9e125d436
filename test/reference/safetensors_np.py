"""Reads and writes safetensors files with NumPy alone, rejecting anything the format forbids.

The layout (https://huggingface.co/docs/safetensors): an 8-byte little-endian
header length N, N bytes of UTF-8 JSON mapping each tensor name to
{"dtype", "shape", "data_offsets": [begin, end]} (offsets into the byte buffer
that follows the header) plus an optional "__metadata__" map of strings, then the
buffer. The checks are strict because this module is the judge of files the
compiled programs write: a file the Rust reference would refuse must fail here.
"""
import json

import numpy as np

# safetensors dtype names and their little-endian NumPy equivalents. BF16 and
# the F8 types have no NumPy dtype; the programs write F32 parameters.
DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2",
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
    "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1",
    "BOOL": "?",
}
NAME_OF_DTYPE = {np.dtype(v): k for k, v in DTYPES.items()}

# The Rust implementation refuses headers above 100 MB; so do we.
MAX_HEADER = 100_000_000
INFO_KEYS = {"dtype", "shape", "data_offsets"}


class SafetensorsError(ValueError):
    """A file that is not valid safetensors; the message names the file and the fault."""


def load(path):
    """Returns ({name: array}, metadata dict) of the safetensors file at path."""
    with open(path, "rb") as f:
        blob = f.read()
    try:
        return parse(blob)
    except SafetensorsError as e:
        raise SafetensorsError(f"{path}: {e}") from None


def parse(blob):
    """Parses a whole safetensors file held in memory; see load."""
    if len(blob) < 8:
        raise SafetensorsError(f"file is {len(blob)} bytes, shorter than the 8-byte header length")
    header_len = int.from_bytes(blob[:8], "little")
    if header_len > MAX_HEADER or header_len > len(blob) - 8:
        raise SafetensorsError(f"header length {header_len} exceeds the file ({len(blob)} bytes)")
    header = _parse_header(blob[8:8 + header_len])
    metadata = header.pop("__metadata__", {})
    _check_metadata(metadata)
    buffer = memoryview(blob)[8 + header_len:]
    infos = {name: _tensor_info(name, info) for name, info in header.items()}
    _check_layout(infos, len(buffer))
    tensors = {}
    for name, (dtype, shape, (begin, end)) in infos.items():
        array = np.frombuffer(buffer[begin:end], dtype=dtype).reshape(shape)
        tensors[name] = array.astype(dtype.newbyteorder("="))
    return tensors, metadata


def _parse_header(raw):
    """The header's JSON object; duplicate keys are an error, not a silent overwrite."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SafetensorsError(f"header is not UTF-8 ({e})") from None
    if not text.startswith("{"):
        raise SafetensorsError("header does not start with '{'")

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise SafetensorsError(f"header repeats a key among {sorted(keys)}")
        return dict(pairs)

    try:
        header = json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as e:
        raise SafetensorsError(f"header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise SafetensorsError("header is not a JSON object")
    return header


def _check_metadata(metadata):
    """__metadata__ must map strings to strings."""
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise SafetensorsError("__metadata__ is not a map of strings to strings")


def _tensor_info(name, info):
    """(dtype, shape, (begin, end)) of one header entry, each field checked."""
    if not isinstance(info, dict) or set(info) != INFO_KEYS:
        raise SafetensorsError(f"tensor '{name}': entry must have exactly the keys {sorted(INFO_KEYS)}")
    if info["dtype"] not in DTYPES:
        raise SafetensorsError(f"tensor '{name}': unsupported dtype {info['dtype']!r}")
    shape, offsets = info["shape"], info["data_offsets"]
    if not isinstance(shape, list) or not all(_is_uint(d) for d in shape):
        raise SafetensorsError(f"tensor '{name}': shape {shape!r} is not a list of non-negative integers")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_uint(o) for o in offsets):
        raise SafetensorsError(f"tensor '{name}': data_offsets {offsets!r} is not two non-negative integers")
    dtype = np.dtype(DTYPES[info["dtype"]])
    begin, end = offsets
    size = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if end < begin or end - begin != size:
        raise SafetensorsError(
            f"tensor '{name}': data_offsets {offsets} hold {end - begin} bytes, "
            f"{info['dtype']}{shape} needs {size}")
    return dtype, tuple(shape), (begin, end)


def _is_uint(v):
    """JSON integers only: bool is an int subclass in Python and must not pass."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _check_layout(infos, buffer_len):
    """The tensors must tile the buffer exactly: no gap, no overlap, nothing left over."""
    cursor = 0
    for name, (_, _, (begin, end)) in sorted(infos.items(), key=lambda kv: kv[1][2]):
        if begin != cursor:
            raise SafetensorsError(f"tensor '{name}' starts at byte {begin}, expected {cursor} "
                                   "(a gap or an overlap)")
        cursor = end
    if cursor != buffer_len:
        raise SafetensorsError(f"tensors cover {cursor} bytes of a {buffer_len}-byte buffer")


def save(path, tensors, metadata=None):
    """Writes {name: array} (and optional string metadata) to path as safetensors."""
    with open(path, "wb") as f:
        f.write(serialize(tensors, metadata))


def serialize(tensors, metadata=None):
    """The bytes of a safetensors file: tensors in name order, header padded to 8 bytes."""
    header, chunks, offset = {}, [], 0
    if metadata:
        _check_metadata(metadata)
        header["__metadata__"] = dict(metadata)
    for name in sorted(tensors):
        array = np.asarray(tensors[name])
        if array.dtype.newbyteorder("=") not in NAME_OF_DTYPE:
            raise SafetensorsError(f"tensor '{name}': dtype {array.dtype} has no safetensors name")
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": NAME_OF_DTYPE[array.dtype.newbyteorder("=")],
                        "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    return len(raw).to_bytes(8, "little") + raw + b"".join(chunks)
