#!/usr/bin/python3
"""Per-example gradients/s: PyTorch CPU against the Go implementation in model/,
side by side in one run (see BENCHMARKS.md, "Per-example gradients: cnn-tanh").

Networks (--model):
  cnn-tanh  the authors' released NeurIPS'21 code (MNIST_dpsgd_norm_infinity.py,
            MNIST_dpsgd_norm_2.py), 13,706 parameters: conv 16 8x8 stride 2,
            TF 'same' padding, tanh, max-pool 2x2 stride 1, conv 16 4x4 stride 2
            'valid', tanh, max-pool 2x2 stride 1, dense 32 tanh, dense 10.
  cnn       NeurIPS'21 Table 1 (the TF Privacy tutorial model), 26,010
            parameters: the same with ReLU and 32 filters in conv2.
Softmax cross-entropy; Keras defaults (Glorot-uniform kernels, zero biases).
TF 'same' padding pads max((out-1)*s + k - n, 0) in total, the smaller half
before (3 and 3 for 28x28 with k = 8, s = 2); applied with F.pad.

PyTorch methods, both computing the gradient of every example separately:
  vmap  functorch.vmap(functorch.grad(loss)) over a batch (the fast path)
  loop  one forward/backward per example (batch of 1)
each with torch.set_num_threads(T) for the thread counts given. Go: the
benchmark BenchmarkPerExampleGradient/<model> of package model (`go test`),
with 1 and 2 workers (goroutines with their own Worker). Rounds interleave Go
and PyTorch (the machine is shared); medians over rounds are printed, with
the range. Figures: examples/s (wall) and examples per CPU-second of the
process (getrusage / time.process_time; insensitive to other jobs).

Usage: /usr/bin/python3 scripts/bench_torch_per_example.py [--model cnn-tanh]
       [--mnist DIR] [--threads 1,2] [--batch 256] [--seconds 3] [--rounds 3]
       [--no-go] [--no-loop]
Run from the repository root (Go is run there). Needs Debian's python3-torch
(1.13, with functorch; `apt-get install python3-torch`); use /usr/bin/python3.
Without --mnist, synthetic images with MNIST's density (19% non-zero) are
used on both sides; with it, the first images of train-images-idx3-ubyte.
"""
import argparse
import os
import re
import statistics
import subprocess
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from functorch import grad, make_functional, vmap


def tf_same_padding(n, k, s):
    out = (n + s - 1) // s
    total = max((out - 1) * s + k - n, 0)
    return total // 2, total - total // 2


class CNN(nn.Module):
    def __init__(self, filters2, act, side=28):
        super().__init__()
        self.act = act
        self.pad = tf_same_padding(side, 8, 2)
        self.conv1 = nn.Conv2d(1, 16, 8, stride=2)
        self.conv2 = nn.Conv2d(16, filters2, 4, stride=2)
        self.fc1 = nn.Linear(4 * 4 * filters2, 32)
        self.fc2 = nn.Linear(32, 10)
        for m in (self.conv1, self.conv2, self.fc1, self.fc2):
            nn.init.xavier_uniform_(m.weight)  # Glorot uniform, as Keras
            nn.init.zeros_(m.bias)

    def forward(self, x):
        before, after = self.pad
        x = F.pad(x, (before, after, before, after))
        x = F.max_pool2d(self.act(self.conv1(x)), 2, 1)  # 14x14 -> 13x13
        x = F.max_pool2d(self.act(self.conv2(x)), 2, 1)  # 5x5 -> 4x4
        # Keras flattens NHWC; the order does not change the cost.
        x = x.permute(0, 2, 3, 1).flatten(1)
        return self.fc2(self.act(self.fc1(x)))


NETWORKS = {
    "cnn-tanh": (lambda: CNN(16, torch.tanh), 13706),
    "cnn": (lambda: CNN(32, F.relu), 26010),
}


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


GO_LINE = re.compile(r"^BenchmarkPerExampleGradient/(\S+?)/workers=(\d+)\S*\s+\d+\s+\S+ ns/op\s+(\S+) examples/cpu-s\s+(\S+) examples/s")


def go_bench(model, seconds, mnist):
    env = dict(os.environ)
    if mnist:
        env["SHUFFLEDP_MNIST_DIR"] = mnist
    cmd = ["go", "test", "./model", "-run", "^$", "-bench", f"PerExampleGradient/^{model}$/",
           "-benchtime", f"{seconds}s", "-count", "1"]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        m = GO_LINE.match(line)
        if m and m.group(1) == model:
            res[int(m.group(2))] = (float(m.group(4)), float(m.group(3)))
    if not res:
        raise SystemExit("no Go benchmark lines parsed from:\n" + out)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="cnn-tanh", choices=sorted(NETWORKS))
    ap.add_argument("--mnist", default="")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-go", action="store_true")
    ap.add_argument("--no-loop", action="store_true")
    a = ap.parse_args()

    torch.manual_seed(0)
    build, want = NETWORKS[a.model]
    model = build()
    nparams = sum(p.numel() for p in model.parameters())
    assert nparams == want, nparams
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

    threads = [int(s) for s in a.threads.split(",")]
    rows = {}  # label -> list of (wall, cpu)
    for r in range(a.rounds):
        if not a.no_go:
            for workers, v in sorted(go_bench(a.model, a.seconds, a.mnist).items()):
                rows.setdefault(f"Go model.CNN ({a.model}), workers={workers}", []).append(v)
        for t in threads:
            torch.set_num_threads(t)
            rows.setdefault(f"PyTorch vmap(grad), threads={t}", []).append(measure(vmap_step, a.batch, a.seconds))
            if not a.no_loop:
                rows.setdefault(f"PyTorch loop batch-1, threads={t}", []).append(measure(loop_step, 32, a.seconds))
        print(f"round {r + 1}/{a.rounds} done", flush=True)

    print(f"\nmodel {a.model} ({nparams} params), torch {torch.__version__}, batch {a.batch}, "
          f"input {'MNIST' if a.mnist else 'synthetic'}, {a.rounds} interleaved rounds of {a.seconds:g} s, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'implementation':48s} {'examples/s (median, range)':>32s} {'examples/cpu-s (median, range)':>34s}")
    for label, vs in rows.items():
        w = [v[0] for v in vs]
        c = [v[1] for v in vs]
        print(f"{label:48s} {statistics.median(w):9.0f} ({min(w):6.0f}-{max(w):6.0f})      "
              f"{statistics.median(c):9.0f} ({min(c):6.0f}-{max(c):6.0f})")


if __name__ == "__main__":
    main()
