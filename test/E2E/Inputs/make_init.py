"""Writes initial parameters for an end-to-end training test with the NumPy
reference's PyTorch-default initialiser (test/reference/models.py).

make_init.py OUT.safetensors --model mlp|lenet|cnn [--cnn-config JSON] [--seed N]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import models  # noqa: E402
import safetensors_np  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--model", required=True, choices=["mlp", "lenet", "cnn"])
    parser.add_argument("--cnn-config")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.model == "mlp":
        net, shape = models.mlp(), (784,)
    elif args.model == "lenet":
        net, shape = models.lenet(), (1, 28, 28)
    else:
        net, shape = models.net_from_json(args.cnn_config), (1, 28, 28)
    params = models.init_params(net, shape, np.random.default_rng(args.seed))
    safetensors_np.save(args.out, params)


if __name__ == "__main__":
    main()
