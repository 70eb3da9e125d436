#!/usr/bin/python3
"""resnet-state-dict.test: `resnet_layout.py W.safetensors WIDTH` checks that
the file examples/resnet.mdl saves has exactly the state_dict of the
torch.nn.Module bench/resnet_torch_load.py builds (torchvision's ResNet
names, BasicBlock with `downsample` = Sequential(conv1x1, BatchNorm2d)):
the same keys, shapes and dtypes (F32, and I64 for num_batches_tracked),
so that load_state_dict(strict=True) takes it; and that the buffers hold
what training leaves (num_batches_tracked = the steps, a positive
running_var). The key list is written here from torchvision's module tree,
not from the program."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import safetensors_np  # noqa: E402


def torch_state_dict(width, classes=10):
    sd = {}

    def conv(name, cout, cin, k):
        sd[name + ".weight"] = ((cout, cin, k, k), np.float32)

    def bn(name, c):
        for k in ("weight", "bias", "running_mean", "running_var"):
            sd[f"{name}.{k}"] = ((c,), np.float32)
        sd[name + ".num_batches_tracked"] = ((), np.int64)

    conv("conv1", width, 1, 3)
    bn("bn1", width)
    inplanes = width
    for i, (planes, stride) in enumerate([(width, 1), (2 * width, 2), (4 * width, 2)], 1):
        p = f"layer{i}.0."
        conv(p + "conv1", planes, inplanes, 3)
        bn(p + "bn1", planes)
        conv(p + "conv2", planes, planes, 3)
        bn(p + "bn2", planes)
        if stride != 1 or inplanes != planes:
            conv(p + "downsample.0", planes, inplanes, 1)
            bn(p + "downsample.1", planes)
        inplanes = planes
    sd["fc.weight"] = ((classes, 4 * width), np.float32)
    sd["fc.bias"] = ((classes,), np.float32)
    return sd


def main(path, width, steps):
    tensors, _ = safetensors_np.load(path)
    want = torch_state_dict(width)
    ok = True
    for name in sorted(set(want) | set(tensors)):
        if name not in tensors:
            print(f"missing: {name}")
            ok = False
        elif name not in want:
            print(f"unexpected: {name}")
            ok = False
        elif tensors[name].shape != want[name][0] or tensors[name].dtype != want[name][1]:
            print(f"{name}: {tensors[name].dtype}{list(tensors[name].shape)}, "
                  f"torch has {np.dtype(want[name][1])}{list(want[name][0])}")
            ok = False
    print(f"keys: {len(tensors)} of {len(want)} as torch's state_dict" if ok else "layout: MISMATCH")
    counters = {int(v) for k, v in tensors.items() if k.endswith("num_batches_tracked")}
    var_ok = all(np.all(v > 0) for k, v in tensors.items() if k.endswith("running_var"))
    moved = all(np.any(v != 0) for k, v in tensors.items() if k.endswith("running_mean"))
    print(f"num_batches_tracked: {sorted(counters)}")
    print(f"running statistics updated: {'yes' if var_ok and moved else 'NO'}")
    return ok and counters == {steps} and var_ok and moved


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])) else 1)
