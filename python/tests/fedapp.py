"""The model of test_federated.py's deployments: D = 5 parameters, client i's
update is params - target(i) (the gradient of |params - target(i)|^2 / 2),
the server steps params - 0.5 * aggregate. Every call is logged, with the
process's role flags, to $FEDAPP_LOG/PID.log; $FEDAPP_BAD makes the client
(or server) function misbehave."""

import json
import math
import os
import sys

D = 5


def _log(**kw):
    d = os.environ.get("FEDAPP_LOG")
    if d:
        kw["argv"] = sys.argv[sys.argv.index("--app") + 2:] if "--app" in sys.argv else sys.argv
        with open(os.path.join(d, f"{os.getpid()}.log"), "a") as f:
            f.write(json.dumps(kw) + "\n")


def target(i):
    return [0.1 * ((i + j) % 3 - 1) for j in range(D)]


def init():
    _log(fn="init")
    return [0.0] * D


def client_update(params, client, examples):
    _log(fn="client_update", client=client, n=len(params), examples=examples)
    bad = os.environ.get("FEDAPP_BAD", "")
    if bad == "short":
        return [0.0] * (D - 2)
    if bad == "nan":
        return [0.0, float("nan")] + [0.0] * (D - 2)
    if bad == "raise":
        raise ValueError("no data for client %d" % client)
    t = target(client)
    return [params[j] - t[j] for j in range(D)]


def two_argument_update(params, client):
    return [0.0] * len(params)


def server_update(params, aggregate, *rest):
    _log(fn="server_update", n=len(params), m=len(aggregate), extra=len(rest), aggregate=[float(a) for a in aggregate])
    if os.environ.get("FEDAPP_BAD") == "server-long":
        return [0.0] * (D + 1)
    return [params[j] - 0.5 * aggregate[j] for j in range(D)]


def evaluate(params):
    d = math.sqrt(sum((p - 0.0) ** 2 for p in params))
    return {"test_accuracy": 1 / (1 + d), "test_loss": d}
