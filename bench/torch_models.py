"""The benchmark models of bench/cpu_train.py and bench/gpu_train.py in
PyTorch eager: the same layers, initial recipe and optimizer as
examples/fashion_mlp.mdl and examples/lenet.mdl (AdamW, lr 1e-3, weight decay
0.01), trained on Fashion-MNIST batches in file order."""
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/datasets/fashion-mnist"
BATCH = {"mlp": 128, "lenet": 64}


def throughput(model_name, steps, data_dir=DATA, device="cpu", threads=None):
    """samples/s of `steps` optimizer steps after 10 warm-up steps."""
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
    from idx_np import read_idx
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(0)
    images = torch.from_numpy(read_idx(os.path.join(
        data_dir, "train-images-idx3-ubyte.gz")).astype(np.float32) / 255.0)
    labels = torch.from_numpy(read_idx(os.path.join(
        data_dir, "train-labels-idx1-ubyte.gz")).astype(np.int64))
    nn = torch.nn
    batch = BATCH[model_name]
    if model_name == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                              nn.Linear(256, 10))
    else:
        model = nn.Sequential(
            nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
            nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))
        images = images.reshape(-1, 1, 28, 28)
    model = model.to(device)
    images, labels = images.to(device), labels.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    warmup = 10

    def sync():
        if device != "cpu":
            torch.cuda.synchronize()

    start = None
    for step in range(steps + warmup):
        if step == warmup:
            sync()
            start = time.perf_counter()
        i = (step * batch) % (len(images) - batch)
        x, y = images[i:i + batch], labels[i:i + batch]
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    sync()
    return steps * batch / (time.perf_counter() - start)
