"""Writes the malformed inputs of e2e-bad-inputs.test into DIR (NumPy only):

  nul.safetensors   valid weights of the Fashion-MNIST MLP whose JSON header
                    is followed by a NUL and garbage inside its length
  bomb.npz          a member of 256 MB of zeros (256 KB deflated) whose
                    samples are [1, 1] bytes, not the field's [28, 28]
  truncated.npz     a deflated image batch cut short inside its member
"""
import io
import json
import struct
import sys
import zipfile

import numpy as np


def safetensors_with_nul(path):
    shapes = {"fc1.weight": [256, 784], "fc1.bias": [256],
              "fc2.weight": [10, 256], "fc2.bias": [10]}
    header, offset, data = {}, 0, b""
    for name, shape in shapes.items():
        size = int(np.prod(shape)) * 4
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [offset, offset + size]}
        offset += size
        data += np.zeros(shape, "<f4").tobytes()
    text = json.dumps(header).encode() + b"\0garbage"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def npz(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, array in members.items():
            out = io.BytesIO()
            np.save(out, array)
            z.writestr(name + ".npy", out.getvalue())


def main():
    out = sys.argv[1]
    safetensors_with_nul(out + "/nul.safetensors")
    npz(out + "/bomb.npz", {"image": np.zeros((256 << 20, 1, 1), "u1")})
    npz(out + "/images.npz", {"image": np.zeros((8, 28, 28), "u1")})
    with open(out + "/images.npz", "rb") as f:
        whole = f.read()
    with open(out + "/truncated.npz", "wb") as f:
        # Keep the directory, lose the middle of the member's data.
        middle = len(whole) // 2
        f.write(whole[:middle] + whole[middle + 40:])


if __name__ == "__main__":
    main()
