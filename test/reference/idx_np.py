"""Reads MNIST idx files (gzip-compressed or not) into NumPy arrays, refusing truncated or padded ones.

Format (http://yann.lecun.com/exdb/mnist/): two zero bytes, a type code, the
number of dimensions, one big-endian u32 per dimension, then the elements in
row-major order, big-endian. Compression is recognised by gzip's magic bytes,
not the file name, as the compiled programs do.
"""
import gzip

import numpy as np

TYPE_CODES = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
GZIP_MAGIC = b"\x1f\x8b"


class IdxError(ValueError):
    """A file that is not a well-formed idx file; the message names the file and the fault."""


def read_idx(path):
    """The array stored in the idx file at path, in native byte order."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob.startswith(GZIP_MAGIC):
        try:
            blob = gzip.decompress(blob)
        except (OSError, EOFError) as e:
            raise IdxError(f"{path}: broken gzip stream ({e})") from None
    try:
        return parse_idx(blob)
    except IdxError as e:
        raise IdxError(f"{path}: {e}") from None


def parse_idx(blob):
    """Parses the bytes of an uncompressed idx file; see read_idx."""
    if len(blob) < 4 or blob[0] != 0 or blob[1] != 0:
        raise IdxError("not an idx file (the first two bytes must be zero)")
    code, ndim = blob[2], blob[3]
    if code not in TYPE_CODES:
        raise IdxError(f"unknown element type code 0x{code:02x}")
    if len(blob) < 4 + 4 * ndim:
        raise IdxError(f"file ends inside its {ndim} dimension sizes")
    shape = tuple(int.from_bytes(blob[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    dtype = np.dtype(TYPE_CODES[code])
    expected = int(np.prod(shape, dtype=object)) * dtype.itemsize
    data = blob[4 + 4 * ndim:]
    if len(data) != expected:
        raise IdxError(f"shape {list(shape)} of {dtype.name} needs {expected} data bytes, "
                       f"the file has {len(data)}")
    return np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))
