#!/usr/bin/python3
"""The PyTorch half of issue 16's acceptance 2, for a machine with torch
(the CI machine has none; test/E2E/resnet-state-dict.test checks the file
layout there with NumPy):

  resnet_torch_load.py W.safetensors --width W [--prog PROG --images X.npy]

builds examples/resnet.mdl's network as a torch.nn.Module with
torchvision's module names (conv1, bn1, layer1..3 of BasicBlocks with
`downsample` = Sequential(conv1x1, BatchNorm2d), fc), loads the file that
`PROG --save W.safetensors` wrote with load_state_dict(strict=True), and,
given PROG and X.npy (u8 [N, 28, 28], N a multiple of the program's batch),
compares model.eval()'s predictions with `PROG infer` (running
statistics): prints `strict load: ok` and `predictions: N of N agree`."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from safetensors.torch import load_file
from torch import nn


class BasicBlock(nn.Module):
    """torchvision.models.resnet.BasicBlock (expansion 1)."""

    def __init__(self, inplanes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet(nn.Module):
    def __init__(self, width, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, width, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = nn.Sequential(BasicBlock(width, width, 1))
        self.layer2 = nn.Sequential(BasicBlock(width, 2 * width, 2))
        self.layer3 = nn.Sequential(BasicBlock(2 * width, 4 * width, 2))
        self.fc = nn.Linear(4 * width, classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("weights")
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--prog")
    ap.add_argument("--images")
    a = ap.parse_args()
    model = ResNet(a.width)
    model.load_state_dict(load_file(a.weights), strict=True)
    print("strict load: ok")
    if not (a.prog and a.images):
        return 0
    images = np.load(a.images)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "labels.npz")
        subprocess.run([a.prog, "infer", "classify", "--cpu", "--weights", a.weights,
                        "--input", "image=" + a.images, "--output", out], check=True,
                       stdout=subprocess.DEVNULL)
        ours = np.load(out)["label"]
    model.eval()
    with torch.no_grad():
        x = torch.from_numpy(images.astype(np.float32) / 255.0).reshape(-1, 1, 28, 28)
        theirs = model(x).argmax(-1).numpy()
    agree = int((ours == theirs).sum())
    print(f"predictions: {agree} of {len(theirs)} agree")
    return 0 if agree == len(theirs) else 1


if __name__ == "__main__":
    sys.exit(main())
