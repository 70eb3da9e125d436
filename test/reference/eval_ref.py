#!/usr/bin/python3
"""Prints a reference model's accuracy and mean cross-entropy over every sample of a test set.

Usage: eval_ref.py W.safetensors --model mlp|lenet|cnn [--images X --labels Y]
The default set is Debian's Fashion-MNIST test set (10,000 samples). Unlike a
training epoch nothing is dropped: accuracy is correct/N and the loss is the
mean over all N samples (not a mean of batch means). Ties in argmax go to the
lowest class index, as torch.argmax.
"""
import argparse
import os
import sys

import numpy as np

import dataset
import layers
import models
import safetensors_np

DTYPES = {"f32": np.float32, "f64": np.float64}


def parse_args(argv):
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("weights", help="parameters (safetensors)")
    p.add_argument("--model", required=True, choices=["mlp", "lenet", "cnn"])
    p.add_argument("--cnn-config", help="JSON network description for --model cnn (text or a file path)")
    p.add_argument("--images", default=os.path.join(dataset.FASHION, "t10k-images-idx3-ubyte.gz"))
    p.add_argument("--labels", default=os.path.join(dataset.FASHION, "t10k-labels-idx1-ubyte.gz"))
    p.add_argument("--chunk", type=int, default=1000, help="samples per forward pass (memory only)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    return p.parse_args(argv)


def evaluate(params, net, images, labels, dtype, chunk):
    """(correct count, mean cross-entropy) of net over all samples."""
    correct, loss_sum = 0, 0.0
    for start in range(0, len(images), chunk):
        x = dataset.model_input(images[start:start + chunk], net, dtype)
        y = labels[start:start + chunk]
        logits, _ = models.forward(params, net, x)
        correct += int((np.argmax(logits, axis=-1) == y).sum())
        loss, _ = layers.cross_entropy(logits, y)
        loss_sum += float(loss) * len(y)
    return correct, loss_sum / len(images)


def run(args):
    """Loads everything, evaluates and prints the result lines."""
    dtype = DTYPES[args.dtype]
    loaded, _ = safetensors_np.load(args.weights)
    params = {n: a.astype(dtype) for n, a in loaded.items()}
    net = models.config_for(args.model, params, args.cnn_config)
    images, labels = dataset.load_split(args.images, args.labels)
    if len(images) == 0:
        raise ValueError(f"{args.images} holds no samples")
    models.check_params(params, net, dataset.model_input(images[:1], net, dtype).shape[1:])
    correct, loss = evaluate(params, net, images, labels, dtype, args.chunk)
    print(f"accuracy {correct / len(images):.4f}")
    print(f"loss {loss:.6f}")
    print(f"correct {correct} of {len(images)}")


def main(argv=None):
    """Entry point: one clear message and exit status 2 for usage or input errors."""
    args = parse_args(argv)
    try:
        run(args)
    except (OSError, ValueError) as e:
        print(f"eval_ref: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
