"""Bring your own model: federated learning in the shuffle model with the
model's arithmetic in Python (docs/python-federated.md).

The Go roles keep everything that carries the privacy guarantee: TLS,
client credentials, HPKE sealing, the local randomizer, the shuffler, the
durable ledger, the target epsilon, checkpoints, metrics and dashboards.
Python supplies only arithmetic, as four top-level functions of a module (or
of the script being run):

- ``init() -> params``: the initial parameters theta_0, a flat vector of D
  numbers (called once, in the server process);
- ``client_update(params, client) -> update``, or ``client_update(params,
  client, examples)``: the update of one client (its index ``client``; with
  a third parameter, also the indices of the examples the run's partition
  deals it, ``--examples-per-client`` and ``--partition``) at the round's
  published parameters; the library clips it, applies the run's randomizer, seals it to the server and submits it,
  exactly as ``shuffledp client`` does with a Go model's gradient. It is
  called in a client process, for that process's sampled clients only, and
  sees nothing of any other client;
- ``server_update(params, aggregate) -> params``: the next parameters from
  the current ones and the round's aggregate, the unbiased mean of the
  released reports (called in the server process; it never sees a report
  nor a client);
- ``evaluate(params)`` (optional): the test accuracy in [0, 1], an
  ``(accuracy, loss)`` pair or a dict with ``test_accuracy`` and
  ``test_loss``.

Vectors are handed to the functions as float64 numpy arrays (copies), or as
``array.array('d')`` where numpy is missing; a function may return any flat
sequence of numbers (a numpy array of float32 or float64, a CPU torch
tensor, a list). A result of the wrong length, with a NaN or an infinity, or
a function that raises, stops the run with an error naming the function.

:func:`up` runs the server, the shuffler and the client processes on
loopback (Go's package cluster, as ``shuffledp up``), each a Python process
running ``python -m shuffledp.federated`` with these functions. Epsilon is
the ledger's: every record carries the epsilon the server's ledger reported,
and :func:`ledger` reads the shuffler's ledger as ``shuffledp ledger show
--json`` does.
"""

from __future__ import annotations

import array
import ctypes
import importlib
import importlib.util
import inspect
import json
import math
import os
import sys
import threading
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence

from . import _lib

try:  # numpy is optional: array.array('d') stands in for it
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where numpy is absent
    _np = None

__all__ = ["App", "FederatedError", "up", "ledger", "run_role", "main"]


class FederatedError(_lib.ShuffleDPError):
    """A role or the deployment failed; ``str(err)`` is Go's message (which
    names the function at fault when a callback returned a bad value)."""


_P = ctypes.POINTER(ctypes.c_double)
_CLIENT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_longlong, ctypes.POINTER(ctypes.c_longlong),
                              ctypes.c_longlong, _P, _P, ctypes.c_longlong, ctypes.c_void_p, ctypes.c_longlong)
_SERVER_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, _P, _P, _P, ctypes.c_longlong, ctypes.c_void_p,
                              ctypes.c_longlong)
_EVAL_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, _P, ctypes.c_longlong, _P, ctypes.c_void_p,
                            ctypes.c_longlong)

_ROLE_FUNCTIONS = {"init": "the init function", "client_update": "the client update function",
                   "server_update": "the server update function", "evaluate": "the evaluation function"}


# ---------------------------------------------------------------------------------------------
# Vectors between C and Python.

def _vector(ptr: Any, n: int) -> Any:
    """A float64 copy of the n doubles at ptr: a numpy array, or array.array('d')."""
    if _np is not None:
        return _np.ctypeslib.as_array(ptr, shape=(n,)).copy()
    a = array.array("d")
    a.frombytes(ctypes.string_at(ptr, 8 * n))
    return a


def _flat(value: Any, what: str) -> Any:
    """value as a flat float64 vector (numpy array or array.array('d')), or
    FederatedError naming what."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().numpy()
    try:
        if _np is not None:
            out = _np.asarray(value, dtype=_np.float64)
            if out.ndim != 1:
                if out.ndim == 0:
                    raise TypeError("a scalar")
                out = out.reshape(-1)
            return _np.ascontiguousarray(out)
        return array.array("d", value)
    except (TypeError, ValueError) as e:
        raise FederatedError(f"{what} returned {type(value).__name__}, not a flat sequence of numbers ({e})") from None


def _write(out: Any, vec: Any, n: int, what: str, model: str = "the model has") -> None:
    """Copy vec (of length n, else FederatedError naming what) to the doubles at out."""
    if len(vec) != n:
        raise FederatedError(f"{what} returned {len(vec)} values; {model} {n} parameters")
    if _np is not None:
        ctypes.memmove(out, vec.ctypes.data, 8 * n)
    else:
        ctypes.memmove(out, vec.buffer_info()[0], 8 * n)


def _fail(err: Any, errlen: int, what: str, exc: BaseException) -> int:
    """Write exc's message for Go into err and return 1 (the traceback of a
    raised exception goes to stderr)."""
    if isinstance(exc, FederatedError):
        msg = str(exc)
    else:
        traceback.print_exc(file=sys.stderr)
        msg = f"{what} raised {type(exc).__name__}: {exc}"
    b = msg.encode("utf-8", "replace")[: max(errlen - 1, 0)]
    ctypes.memmove(err, b + b"\0", len(b) + 1)
    return 1


# ---------------------------------------------------------------------------------------------
# The user's functions, and how a child process finds them again.

def _ref(fn: Callable[..., Any], name: str) -> Dict[str, str]:
    """Where a role process finds fn: its module's file and qualified name."""
    if not callable(fn):
        raise TypeError(f"{name} must be a function, got {type(fn).__name__}")
    qual = getattr(fn, "__qualname__", "")
    mod = sys.modules.get(getattr(fn, "__module__", "") or "")
    path = getattr(mod, "__file__", None)
    if "<" in qual or "." in qual or not qual or path is None:
        raise TypeError(f"{name} must be a top-level function of a module or script file (the role processes "
                        f"import it again), got {qual or fn!r}")
    return {"file": os.path.abspath(path), "module": fn.__module__, "qualname": qual}


_loaded: Dict[str, Any] = {}


def _resolve(ref: Dict[str, str]) -> Callable[..., Any]:
    """The function ref names: its module imported by name when it is an
    importable module, else loaded from its file (a script's guard
    ``if __name__ == "__main__"`` keeps its main from running)."""
    path = ref["file"]
    mod = _loaded.get(path)
    if mod is None:
        if ref["module"] != "__main__":
            try:
                mod = importlib.import_module(ref["module"])
                if os.path.abspath(getattr(mod, "__file__", "") or "") != path:
                    mod = None
            except ImportError:
                mod = None
        if mod is None:
            sys.path.insert(0, os.path.dirname(path))
            spec = importlib.util.spec_from_file_location("__shuffledp_app__", path)
            if spec is None or spec.loader is None:
                raise FederatedError(f"cannot load {path}")
            mod = importlib.util.module_from_spec(spec)
            sys.modules["__shuffledp_app__"] = mod
            spec.loader.exec_module(mod)
        _loaded[path] = mod
    fn = getattr(mod, ref["qualname"], None)
    if not callable(fn):
        raise FederatedError(f"{path} has no function {ref['qualname']}")
    return fn


def _takes(fn: Callable[..., Any], n: int) -> bool:
    """Whether fn accepts n positional arguments."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    count = 0
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            count += 1
    return count >= n


class App:
    """The model's arithmetic: ``init``, ``client_update``, ``server_update``
    and optionally ``evaluate`` (see the module's documentation). Each must be
    a top-level function of a module or of the script being run: the role
    processes import it again."""

    def __init__(self, init: Callable[[], Any], client_update: Callable[[Any, int], Any],
                 server_update: Callable[[Any, Any], Any], evaluate: Optional[Callable[[Any], Any]] = None):
        self.init, self.client_update, self.server_update, self.evaluate = init, client_update, server_update, evaluate
        self.client_takes_examples = _takes(client_update, 3)
        self._refs = {"init": _ref(init, "init"), "client_update": _ref(client_update, "client_update"),
                      "server_update": _ref(server_update, "server_update")}
        if evaluate is not None:
            self._refs["evaluate"] = _ref(evaluate, "evaluate")

    def spec(self) -> str:
        """The JSON that ``python -m shuffledp.federated --app`` takes."""
        return json.dumps(self._refs, sort_keys=True)

    @classmethod
    def from_spec(cls, spec: str) -> "App":
        refs = json.loads(spec)
        fns = {k: _resolve(v) for k, v in refs.items()}
        return cls(fns["init"], fns["client_update"], fns["server_update"], fns.get("evaluate"))


# ---------------------------------------------------------------------------------------------
# Roles.

def _callbacks(app: Optional[App]) -> Dict[str, Any]:
    """The ctypes callbacks of app's functions (kept referenced for the call)."""
    if app is None:
        return {"client": _CLIENT_FN(), "server": _SERVER_FN(), "eval": _EVAL_FN()}

    def client(_ctx, c, examples, nexamples, params, update, n, err, errlen):
        try:
            args = (_vector(params, n), int(c))
            if app.client_takes_examples:
                args += ([int(examples[i]) for i in range(nexamples)],)
            _write(update, _flat(app.client_update(*args), _ROLE_FUNCTIONS["client_update"]), n,
                   _ROLE_FUNCTIONS["client_update"])
            return 0
        except BaseException as e:  # noqa: BLE001 - every failure goes back to Go, named
            return _fail(err, errlen, _ROLE_FUNCTIONS["client_update"], e)

    def server(_ctx, theta, mean, nxt, n, err, errlen):
        try:
            out = app.server_update(_vector(theta, n), _vector(mean, n))
            _write(nxt, _flat(out, _ROLE_FUNCTIONS["server_update"]), n, _ROLE_FUNCTIONS["server_update"])
            return 0
        except BaseException as e:  # noqa: BLE001
            return _fail(err, errlen, _ROLE_FUNCTIONS["server_update"], e)

    def evaluate(_ctx, theta, n, out, err, errlen):
        try:
            acc, loss = _evaluation(app.evaluate(_vector(theta, n)))
            out[0], out[1] = acc, loss
            return 0
        except BaseException as e:  # noqa: BLE001
            return _fail(err, errlen, _ROLE_FUNCTIONS["evaluate"], e)

    return {"client": _CLIENT_FN(client), "server": _SERVER_FN(server),
            "eval": _EVAL_FN(evaluate) if app.evaluate is not None else _EVAL_FN()}


def _evaluation(v: Any) -> tuple:
    """(accuracy, loss) of what an evaluation function returned (NaN: not given)."""
    what = _ROLE_FUNCTIONS["evaluate"]
    if isinstance(v, dict):
        unknown = set(v) - {"test_accuracy", "test_loss"}
        if unknown:
            raise FederatedError(f"{what} returned unknown keys {sorted(unknown)} (test_accuracy, test_loss)")
        acc, loss = v.get("test_accuracy", math.nan), v.get("test_loss", math.nan)
    elif isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise FederatedError(f"{what} returned {len(v)} values; want accuracy or (accuracy, loss)")
        acc, loss = v
    else:
        acc, loss = v, math.nan
    try:
        return float(acc), float(loss)
    except (TypeError, ValueError):
        raise FederatedError(f"{what} returned {v!r}; want accuracy or (accuracy, loss)") from None


def _run(role: str, request: Dict[str, Any], app: Optional[App] = None, theta0: Any = None) -> Dict[str, Any]:
    """shuffledp_run: the Go role with app's callbacks."""
    lib = _lib._load()
    fn = lib.shuffledp_run
    fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, _P, ctypes.c_longlong, _CLIENT_FN, _SERVER_FN, _EVAL_FN,
                   ctypes.c_void_p]
    fn.restype = ctypes.c_void_p
    cbs = _callbacks(app if role in ("server", "client") else None)
    if role == "client":
        cbs["server"], cbs["eval"] = _SERVER_FN(), _EVAL_FN()
    if role == "server":
        cbs["client"] = _CLIENT_FN()
    ptr, n = None, 0
    if theta0 is not None:
        n = len(theta0)
        ptr = (ctypes.c_double * n).from_buffer_copy(bytes(theta0.tobytes() if hasattr(theta0, "tobytes") else theta0))
    raw_ptr = fn(role.encode(), json.dumps(request).encode(), ctypes.cast(ptr, _P) if ptr is not None else None, n,
                 cbs["client"], cbs["server"], cbs["eval"], None)
    try:
        raw = ctypes.string_at(raw_ptr)
    finally:
        lib.shuffledp_free(raw_ptr)
    out = json.loads(raw)
    if "error" in out:
        raise FederatedError(out["error"])
    return out["result"]


def run_role(role: str, args: Sequence[str], app: Optional[App] = None) -> Dict[str, Any]:
    """Run one role in this process, with the flags of ``shuffledp ROLE``
    (server: the train flags, ``--listen``, ``--state``, ``--pki``; client:
    ``--shuffler``, ``--server``, ``--clients LO:HI``, ``--pki``,
    ``--credentials``; shuffler: its own) until its run ends; the server and
    the client need app. Deploying by hand on several machines is this, one
    call per role (docs/python-federated.md)."""
    args = [str(a) for a in args]
    if role in ("server", "client") and app is None:
        raise TypeError(f"the {role} role needs the App")
    theta0 = None
    if role == "server":
        theta0 = _flat(app.init(), _ROLE_FUNCTIONS["init"])
        if len(theta0) == 0:
            raise FederatedError("the init function returned no parameters")
    return _run(role, {"args": args}, app, theta0)


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m shuffledp.federated --app SPEC ROLE FLAGS...``: one role
    process of :func:`up` (or of a deployment by hand)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    app = None
    if len(argv) >= 2 and argv[0] == "--app":
        app, argv = App.from_spec(argv[1]), argv[2:]
    if not argv:
        print("usage: python -m shuffledp.federated [--app SPEC] server|shuffler|client FLAGS...", file=sys.stderr)
        return 2
    try:
        res = run_role(argv[0], argv[1:], app)
    except (FederatedError, TypeError) as e:
        print(f"shuffledp: {e}", file=sys.stderr)
        return 1
    return 130 if res.get("interrupted") else 0


# ---------------------------------------------------------------------------------------------
# The whole deployment on this machine.

def _flags(kw: Dict[str, Any]) -> List[str]:
    """--name=value arguments of keyword parameters (clip_norm -> --clip-norm;
    True -> --name; False and None are left out)."""
    out = []
    for k, v in kw.items():
        if v is None or v is False:
            continue
        name = "--" + k.replace("_", "-")
        if v is True:
            out.append(name)
        elif isinstance(v, float):
            out.append(f"{name}={v!r}")
        else:
            out.append(f"{name}={v}")
    return out


class _Follower(threading.Thread):
    """Reads the lines appended to a metrics file and hands each decoded record to fn."""

    def __init__(self, path: str, fn: Callable[[Dict[str, Any]], None]):
        super().__init__(daemon=True)
        self.path, self.fn, self.records = path, fn, []
        self.offset = os.path.getsize(path) if os.path.exists(path) else 0
        self.done = threading.Event()
        self.error: Optional[BaseException] = None

    def poll(self) -> None:
        if not os.path.exists(self.path):
            return
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self.offset += end
        for line in data[:end].splitlines():
            if line.strip():
                rec = json.loads(line)
                self.records.append(rec)
                self.fn(rec)

    def run(self) -> None:
        while not self.done.wait(0.2):
            try:
                self.poll()
            except BaseException as e:  # noqa: BLE001 - reported by up
                self.error = e
                return

    def finish(self) -> None:
        self.done.set()
        self.join()
        if self.error is None:
            self.poll()
        if self.error is not None:
            raise self.error


def up(app: App, *, state: str, clients: int, sample: Optional[int] = None, rounds: Optional[int] = None,
       on_eval: Optional[Callable[[Dict[str, Any]], None]] = None, env: Optional[Dict[str, str]] = None,
       **flags: Any) -> List[Dict[str, Any]]:
    """Run a whole deployment on this machine (``shuffledp up``): the server,
    the shuffler and the client processes on loopback, each a Python process
    with app's functions, until the run ends. ``rounds`` sets the number of
    rounds (``epochs = rounds * sample / clients``; with
    ``participation="checkin"`` there is no ``sample``: the expected batch
    ``rate * clients``, rounded, takes its place); every other keyword is a
    flag of ``shuffledp up`` with ``_`` for ``-`` (``randomizer``, ``eps0``,
    ``clip``, ``clip_norm``, ``sigma``, ``delta``, ``target_epsilon``,
    ``eval_every``, ``round_timeout``, ``release_when_complete``,
    ``client_processes``, ``examples_per_client``, ``partition``,
    ``local_steps``, ...; ``--model`` is external, the data the client
    function's: ``data_dir`` is read only for the labels of a partition by
    label). A rerun with the same state directory resumes; a finished
    run returns at once. on_eval hears every evaluation record (a dict: one
    line of DIR/metrics.jsonl: ``round``, ``test_accuracy``, ``epsilon`` the
    ledger's, ...) as it is written; the records of this call are returned.
    env is added to the role processes' environment (this process's own is
    the one it had when the shared library was loaded)."""
    checkin = flags.get("participation") == "checkin"
    if checkin and sample is not None:
        raise TypeError("sample does not apply to participation checkin (the batch size is random: give rate)")
    for name, v in (("clients", clients),) + ((("sample", sample),) if not checkin else ()):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    per_round = sample
    if checkin:
        rate = flags.get("rate")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
            raise ValueError(f"rate must be in (0, 1] with participation checkin, got {rate!r}")
        per_round = max(1, int(math.floor(rate * clients + 0.5)))  # Go's expected batch, math.Round
    if rounds is not None:
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
        if "epochs" in flags:
            raise TypeError("give rounds or epochs, not both")
        flags["epochs"] = rounds * per_round / clients
    if "model" in flags:
        raise TypeError("model is the App's: the model is external")
    args = [f"--state={state}", f"--clients={clients}"] + ([f"--sample={sample}"] if sample is not None else []) + _flags(flags)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    extra_env = env
    env = [f"PYTHONPATH={os.pathsep.join([pkg_root] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p])}"]
    if os.environ.get("SHUFFLEDP_LIBRARY"):
        env.append(f"SHUFFLEDP_LIBRARY={os.environ['SHUFFLEDP_LIBRARY']}")
    env += [f"{k}={v}" for k, v in (extra_env or {}).items()]
    request = {"args": args, "launch": [sys.executable, "-m", "shuffledp.federated", "--app", app.spec()], "env": env}
    os.makedirs(state, exist_ok=True)
    follower = _Follower(os.path.join(state, "metrics.jsonl"), on_eval or (lambda _r: None))
    follower.start()
    try:
        res = _run("up", request)
    finally:
        follower.finish()
    if res.get("interrupted"):
        raise KeyboardInterrupt(f"stopped; state saved in {state}: the same call resumes")
    return follower.records


def ledger(state: str, **kw: Any) -> Dict[str, Any]:
    """The shuffler's ledger of the run in state, as ``shuffledp ledger show
    --state DIR --json`` prints it (``epsilon``, ``delta``, ``rounds``,
    ``bound``, ``events``...); keywords: ``run``, ``delta``, ``entries``,
    ``accountant`` (ledger, the default: the run's own number, which its
    records carry; rdp, pld or best)."""
    return _lib.call("ledger.show", dict(kw, state=state))


if __name__ == "__main__":
    sys.exit(main())
