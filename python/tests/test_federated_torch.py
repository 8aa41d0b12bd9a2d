"""python/examples/federated_torch.py end to end, on a tiny MNIST-shaped
set of IDX files written here (no network): it trains a PyTorch model over
the real processes and its last line's epsilon is the ledger's. Skips
where PyTorch or numpy is missing (Debian: python3-torch, python3-numpy;
.ci/run installs both)."""

import json
import os
import struct
import subprocess
import sys

import pytest

from shuffledp import federated

np = pytest.importorskip("numpy")
pytest.importorskip("torch")

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "federated_torch.py")


def write_idx(path, arr):
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    with open(path, "wb") as f:
        f.write(struct.pack(">HBB", 0, 0x08, arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape) + arr.tobytes())


def fake_mnist(d, n_train=64, n_test=40):
    """Two blobs of pixels per class: learnable, MNIST-shaped."""
    rng = np.random.default_rng(7)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        y = rng.integers(0, 10, n)
        x = rng.integers(0, 40, (n, 28, 28))
        for i, c in enumerate(y):
            x[i, 2 * c:2 * c + 3, :] = 255
        write_idx(os.path.join(d, f"{prefix}-images-idx3-ubyte"), x)
        write_idx(os.path.join(d, f"{prefix}-labels-idx1-ubyte"), y)


def test_federated_torch_example(tmp_path):
    data, state = tmp_path / "mnist", tmp_path / "run"
    data.mkdir()
    fake_mnist(str(data))
    p = subprocess.run([sys.executable, EXAMPLE, "--state", str(state), "--clients", "64", "--sample", "16",
                        "--rounds", "4", "--randomizer", "r2", "--eps0", "6", "--clip", "1", "--lr", "1",
                        "--eval-every", "2", "--data-dir", str(data)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["round"] for r in lines] == [0, 2, 4]
    assert all(0 <= r["test_accuracy"] <= 1 for r in lines)
    assert lines[0]["test_accuracy"] == pytest.approx(float(np.mean(read_labels(data) == 0)))  # theta_0 = 0: class 0
    led = federated.ledger(str(state))
    assert led["rounds"] == 4 and lines[-1]["epsilon"] == led["epsilon"] > 0
    assert "equal to the last line's" in p.stderr


def test_federated_torch_example_examples_per_client(tmp_path):
    """--examples-per-client 4 --partition shards:2 (Go reads the IDX labels to
    deal them) --local-steps 2: the run finishes and its epsilon is the
    ledger's."""
    data, state = tmp_path / "mnist", tmp_path / "run"
    data.mkdir()
    fake_mnist(str(data))
    p = subprocess.run([sys.executable, EXAMPLE, "--state", str(state), "--clients", "16", "--sample", "8",
                        "--rounds", "2", "--randomizer", "r2", "--eps0", "6", "--clip", "1", "--lr", "1",
                        "--examples-per-client", "4", "--partition", "shards:2", "--local-steps", "2",
                        "--data-dir", str(data)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    assert lines[-1]["round"] == 2 and lines[-1]["epsilon"] == federated.ledger(str(state))["epsilon"] > 0


def read_labels(d):
    with open(os.path.join(d, "t10k-labels-idx1-ubyte"), "rb") as f:
        raw = f.read()
    return np.frombuffer(raw, dtype=np.uint8, offset=8)
