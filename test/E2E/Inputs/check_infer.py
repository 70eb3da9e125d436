"""Checks a program's `infer classify` output against the NumPy reference's
forward pass of the Fashion-MNIST MLP: predicted labels must be equal.

check_infer.py WEIGHTS.safetensors IMAGES.npy LABELS.npy
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import models  # noqa: E402
import safetensors_np  # noqa: E402


def main():
    weights, images, labels = sys.argv[1:4]
    params, _ = safetensors_np.load(weights)
    x = np.load(images).astype(np.float32).reshape(-1, 784) / np.float32(255.0)
    logits, _ = models.forward(params, models.mlp(), x)
    expected = np.argmax(logits, axis=-1)
    got = np.load(labels)
    if got.shape != expected.shape:
        sys.exit(f"shape {got.shape}, expected {expected.shape}")
    wrong = np.flatnonzero(got != expected)
    if wrong.size:
        sys.exit(f"{wrong.size} of {got.size} labels differ, first at row {wrong[0]}: "
                 f"{got[wrong[0]]} vs {expected[wrong[0]]}")
    print(f"infer matches the reference on {got.size} rows")


if __name__ == "__main__":
    main()
