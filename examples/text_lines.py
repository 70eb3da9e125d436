#!/usr/bin/python3
"""Writes the data of examples/text_classifier.mdl: the non-empty lines of
Debian's GPL-3 (label 0), Apache-2.0 (1) and GFDL-1.3 (2) license texts as bytes,
cut to T bytes and padded with 0, shuffled with a fixed seed, 80% for
training and 20% for the test set.

  examples/text_lines.py [OUT_DIR (default: lines)] [--length T (default 64)]

Needs NumPy (Debian's python3-numpy).
"""
import argparse
import os

import numpy as np

SOURCES = ["/usr/share/common-licenses/GPL-3", "/usr/share/common-licenses/Apache-2.0",
           "/usr/share/common-licenses/GFDL-1.3"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="lines")
    parser.add_argument("--length", type=int, default=64)
    a = parser.parse_args()
    rows, labels = [], []
    for label, path in enumerate(SOURCES):
        with open(path, "rb") as f:
            for line in f.read().split(b"\n"):
                line = line.strip()
                if not line:
                    continue
                row = np.zeros(a.length, np.uint8)
                data = np.frombuffer(line[:a.length], np.uint8)
                row[:len(data)] = data
                rows.append(row)
                labels.append(label)
    tokens, labels = np.stack(rows), np.array(labels, np.uint8)
    order = np.random.default_rng(0).permutation(len(tokens))
    tokens, labels = tokens[order], labels[order]
    cut = len(tokens) * 4 // 5
    os.makedirs(a.out, exist_ok=True)
    for split, sl in (("train", slice(0, cut)), ("test", slice(cut, None))):
        np.save(os.path.join(a.out, split + "_tokens.npy"), tokens[sl])
        np.save(os.path.join(a.out, split + "_labels.npy"), labels[sl])
    print(f"{a.out}: {cut} training and {len(tokens) - cut} test lines of "
          f"{a.length} bytes; classes {np.bincount(labels).tolist()}")


if __name__ == "__main__":
    main()
