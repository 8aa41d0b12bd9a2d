#!/usr/bin/python3
"""PyTorch CPU per-example gradients of the NeurIPS'21 Table 1 CNN (comparison
for the Go implementation in model/; see BENCHMARKS.md, "Per-example gradients").

Architecture (Girgis et al., "Renyi Differential Privacy of the Subsampled
Shuffle Model in Distributed Learning", NeurIPS 2021, Table 1; the TF Privacy
MNIST tutorial model), 26,010 parameters:
  conv 16 8x8 stride 2, TF 'same' padding (= 3 zeros on each side for 28x28)
  ReLU, max-pool 2x2 stride 1, conv 32 4x4 stride 2 'valid', ReLU,
  max-pool 2x2 stride 1, dense 32 ReLU, dense 10, softmax cross-entropy.

Two methods, both computing the gradient of every example separately:
  vmap  functorch.vmap(functorch.grad(loss)) over a batch (the fast path)
  loop  one forward/backward per example (batch of 1)
Each is run with torch.set_num_threads(T) for the thread counts given.
Reports examples/s (wall) and examples per CPU-second (process time).

Usage: /usr/bin/python3 scripts/bench_torch_per_example.py [--mnist DIR]
       [--threads 1,2] [--batch 256] [--seconds 5]
Needs Debian's python3-torch (1.13, with functorch); use /usr/bin/python3.
Without --mnist, synthetic images with MNIST's density (19% non-zero) are
used; with it, the first images of train-images-idx3-ubyte.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from functorch import grad, make_functional, vmap


class Table1CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 8, stride=2, padding=3)
        self.conv2 = nn.Conv2d(16, 32, 4, stride=2)
        self.fc1 = nn.Linear(512, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2, 1)  # 14x14 -> 13x13
        x = F.max_pool2d(F.relu(self.conv2(x)), 2, 1)  # 5x5 -> 4x4
        x = x.flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


def images(n, mnist_dir):
    if mnist_dir:
        raw = np.fromfile(os.path.join(mnist_dir, "train-images-idx3-ubyte"), dtype=np.uint8)
        x = raw[16:16 + n * 784].astype(np.float32) / 255
        return torch.from_numpy(x.reshape(n, 1, 28, 28))
    rng = np.random.default_rng(1)
    x = np.zeros((n, 28, 28), dtype=np.float32)
    box = rng.random((n, 20, 20)) < 0.37
    x[:, 4:24, 4:24] = np.where(box, rng.random((n, 20, 20)), 0)
    return torch.from_numpy(x.reshape(n, 1, 28, 28))


def measure(fn, n_per_call, seconds):
    fn()  # warm-up
    calls, t0, c0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        fn()
        calls += 1
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return calls * n_per_call / wall, calls * n_per_call / cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mnist", default="")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=5)
    a = ap.parse_args()

    torch.manual_seed(0)
    model = Table1CNN()
    nparams = sum(p.numel() for p in model.parameters())
    assert nparams == 26010, nparams
    fmodel, params = make_functional(model)
    x = images(a.batch, a.mnist)
    y = torch.arange(a.batch) % 10

    def loss(params, xi, yi):
        out = fmodel(params, xi.unsqueeze(0))
        return F.cross_entropy(out, yi.unsqueeze(0))

    per_example = vmap(grad(loss), in_dims=(None, 0, 0))

    def vmap_step():
        return per_example(params, x, y)

    def loop_step():
        for i in range(32):
            model.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()

    print(f"torch {torch.__version__}, params {nparams}, batch {a.batch}, "
          f"input {'MNIST' if a.mnist else 'synthetic'}")
    for t in [int(s) for s in a.threads.split(",")]:
        torch.set_num_threads(t)
        w, c = measure(vmap_step, a.batch, a.seconds)
        print(f"vmap(grad) threads={t}: {w:8.0f} examples/s  {c:8.0f} examples/cpu-s")
        w, c = measure(loop_step, 32, a.seconds)
        print(f"loop batch-1 threads={t}: {w:8.0f} examples/s  {c:8.0f} examples/cpu-s")


if __name__ == "__main__":
    main()
