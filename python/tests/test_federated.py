"""The federated API (shuffledp.federated) against real processes: a server,
a shuffler and two client processes on loopback, each a Python process
with fedapp's functions (small synthetic model, a few rounds)."""

import glob
import json
import math
import os

import pytest

from shuffledp import federated
import fedapp

APP = federated.App(fedapp.init, fedapp.client_update, fedapp.server_update, fedapp.evaluate)


def calls(d):
    out = []
    for f in glob.glob(os.path.join(d, "*.log")):
        with open(f) as fh:
            out += [dict(json.loads(line), pid=os.path.basename(f)) for line in fh]
    return out


def flag(argv, name):
    for a in argv:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return None


def test_up_trust_boundary_and_ledger(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    state = str(tmp_path / "run")
    heard = []
    recs = federated.up(APP, state=state, clients=12, sample=4, rounds=3, randomizer="r2", eps0=4, clip=1,
                        eval_every=1, release_when_complete=True, client_processes=2, dataset="synthetic",
                        env={"FEDAPP_LOG": str(logs)}, on_eval=heard.append)
    assert [r["round"] for r in recs] == [0, 1, 2, 3]
    assert heard == recs
    assert recs[0]["test_accuracy"] == 1.0  # evaluate at theta_0 = 0
    assert all(0 < r["test_accuracy"] <= 1 for r in recs)
    assert recs[-1]["model"] == "external"
    # epsilon is the ledger's: the last record's equals `ledger show`'s.
    led = federated.ledger(state)
    assert led["rounds"] == 3
    assert recs[-1]["epsilon"] == led["epsilon"] > 0
    cs = calls(str(logs))
    server = [c for c in cs if c["fn"] in ("init", "server_update")]
    clients = [c for c in cs if c["fn"] == "client_update"]
    # The server function runs in the server process only, once a round,
    # with two arguments (parameters, aggregate) of the model's length.
    assert [c["fn"] for c in server] == ["init", "server_update", "server_update", "server_update"]
    assert all(c["argv"][0] == "server" for c in server)
    assert all(c["n"] == c["m"] == fedapp.D and c["extra"] == 0 for c in server[1:])
    # The client function runs in client processes, for 4 sampled clients a
    # round, each of its own process's range, with (parameters, own index).
    assert len(clients) == 12
    for c in clients:
        assert c["argv"][0] == "client"
        lo, hi = map(int, flag(c["argv"], "clients").split(":"))
        assert lo <= c["client"] < hi and c["n"] == fedapp.D and c["examples"] == [c["client"]]
    # A finished run's second call returns at once, with nothing new.
    assert federated.up(APP, state=state, clients=12, sample=4, rounds=3, randomizer="r2", eps0=4, clip=1,
                        eval_every=1, release_when_complete=True, client_processes=2, dataset="synthetic",
                        env={"FEDAPP_LOG": str(logs)}) == []


def test_examples_per_client(tmp_path):
    """--examples-per-client and --partition pass through: the client function
    gets the examples the partition deals its client, the same every round,
    disjoint across clients."""
    logs = tmp_path / "logs"
    logs.mkdir()
    federated.up(APP, state=str(tmp_path / "run"), clients=8, sample=4, rounds=2, randomizer="r2", eps0=4, clip=1,
                 release_when_complete=True, dataset="synthetic", examples_per_client=3, partition="iid",
                 env={"FEDAPP_LOG": str(logs)})
    held = {}
    for c in calls(str(logs)):
        if c["fn"] == "client_update":
            assert held.setdefault(c["client"], c["examples"]) == c["examples"]
    assert len(held) >= 4
    flat = [e for ex in held.values() for e in ex]
    assert all(len(ex) == 3 for ex in held.values()) and len(set(flat)) == len(flat)
    assert all(0 <= e < 24 for e in flat)


@pytest.mark.parametrize("kw", [
    dict(randomizer="gaussian", sigma=2.0, clip=1, sample=4),
    dict(randomizer="gaussian", sigma=2.0, clip=1, participation="checkin", rate=0.6, clients=64),
    dict(randomizer="privunit", eps0=4, clip=1, sample=4),
])
def test_other_randomizers(tmp_path, kw):
    """The Gaussian randomizer (sampled, and with check-in: no sample, the
    rounds from the expected batch) and PrivUnit: the run finishes its rounds
    and epsilon is the ledger's."""
    state = str(tmp_path / "run")
    kw.setdefault("clients", 8)
    recs = federated.up(APP, state=state, rounds=2, release_when_complete=True, dataset="synthetic",
                        round_timeout="5s", eval_every=1, **kw)
    led = federated.ledger(state)
    assert [r["round"] for r in recs] == [0, 1, 2] and led["rounds"] == 2
    assert recs[-1]["epsilon"] == led["epsilon"] > 0


def test_client_function_arity():
    assert federated.App(fedapp.init, fedapp.client_update, fedapp.server_update).client_takes_examples
    assert not federated.App(fedapp.init, fedapp.two_argument_update, fedapp.server_update).client_takes_examples


@pytest.mark.parametrize("bad,want", [
    ("short", "the client update function returned 3 values; the model has 5 parameters"),
    ("nan", "the client update function returned NaN at index 1"),
    ("raise", "the client update function raised ValueError: no data for client"),
    ("server-long", "the server update function returned 6 values; the model has 5 parameters"),
])
def test_bad_callback_is_refused_naming_it(tmp_path, bad, want):
    state = str(tmp_path / "run")
    with pytest.raises(federated.FederatedError) as e:
        federated.up(APP, state=state, clients=4, sample=2, rounds=2, randomizer="rinf", eps0=2, clip=1,
                     release_when_complete=True, dataset="synthetic", env={"FEDAPP_BAD": bad})
    assert want in str(e.value)
    led = federated.ledger(state)
    # A bad client update is refused before any report: nothing is debited.
    # The server's refusal comes after the first release, which was debited.
    assert led["rounds"] == (1 if bad == "server-long" else 0)


def test_app_needs_top_level_functions():
    with pytest.raises(TypeError, match="client_update must be a top-level function"):
        federated.App(fedapp.init, lambda p, c: p, fedapp.server_update)
    with pytest.raises(TypeError, match="server_update must be a function"):
        federated.App(fedapp.init, fedapp.client_update, 3)


def test_up_refuses_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="rounds must be a positive integer"):
        federated.up(APP, state=str(tmp_path), clients=4, sample=2, rounds=0)
    with pytest.raises(TypeError, match="model is the App's"):
        federated.up(APP, state=str(tmp_path), clients=4, sample=2, rounds=1, model="cnn")
    with pytest.raises(federated.FederatedError, match="eps0 must be positive"):
        federated.up(APP, state=str(tmp_path / "x"), clients=4, sample=2, rounds=1, randomizer="rinf", eps0=-1)


def test_vectors_without_numpy(monkeypatch):
    """Where numpy is missing the functions get array.array('d') and may
    return lists; lengths are checked the same way."""
    import array
    import ctypes
    monkeypatch.setattr(federated, "_np", None)
    buf = (ctypes.c_double * 3)(1.5, -2.0, 0.25)
    v = federated._vector(ctypes.cast(buf, federated._P), 3)
    assert isinstance(v, array.array) and list(v) == [1.5, -2.0, 0.25]
    out = (ctypes.c_double * 3)()
    federated._write(ctypes.cast(out, federated._P), federated._flat([1, 2, 3], "f"), 3, "f")
    assert list(out) == [1.0, 2.0, 3.0]
    with pytest.raises(federated.FederatedError, match="f returned 2 values; the model has 3 parameters"):
        federated._write(ctypes.cast(out, federated._P), federated._flat([1, 2], "f"), 3, "f")
    with pytest.raises(federated.FederatedError, match="not a flat sequence"):
        federated._flat("abc", "f")


def test_evaluation_shapes():
    assert federated._evaluation(0.5) == (0.5, pytest.approx(math.nan, nan_ok=True))
    assert federated._evaluation((0.5, 2)) == (0.5, 2.0)
    assert federated._evaluation({"test_accuracy": 0.25}) [0] == 0.25
    with pytest.raises(federated.FederatedError, match="unknown keys"):
        federated._evaluation({"accuracy": 1})
