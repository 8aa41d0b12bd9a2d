"""The Go accountant, loaded with ctypes (the shared library built from
cmd/libshuffledp at install time). Every computation goes through
:func:`call`; nothing here computes a bound."""

from __future__ import annotations

import ctypes
import json
import os
import re
import threading
from typing import Any, Optional

LIBNAME = "libshuffledp.so"


class ShuffleDPError(ValueError):
    """An error of the Go accountant; ``str(err)`` is Go's message (the one
    ``shuffledp account`` prints after ``shuffledp:``)."""


_FLAG = re.compile(r"--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


def python_names(message: str) -> str:
    """Go's message with its command-line flag names (``--client-sigma``)
    replaced by the Python argument names (``client_sigma``): the Python
    API's errors name what its caller wrote."""
    return _FLAG.sub(lambda m: m.group(1).replace("-", "_"), message)


_lib: Optional[ctypes.CDLL] = None
_lock = threading.Lock()


def _load() -> ctypes.CDLL:
    global _lib
    with _lock:
        if _lib is None:
            path = os.environ.get("SHUFFLEDP_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBNAME)
            if not os.path.exists(path):
                raise ShuffleDPError(f"the accountant's shared library is missing at {path}: "
                                     "install the package with pip (its build step runs go build)")
            lib = ctypes.CDLL(path)
            lib.shuffledp_call.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
            lib.shuffledp_call.restype = ctypes.c_void_p  # freed by shuffledp_free
            lib.shuffledp_free.argtypes = [ctypes.c_void_p]
            lib.shuffledp_free.restype = None
            _lib = lib
        return _lib


def call(method: str, request: Any) -> Any:
    """Call the Go accountant's method (account.Call) with request encoded
    as JSON; return the decoded result or raise :class:`ShuffleDPError`
    with Go's message."""
    lib = _load()
    body = request if isinstance(request, (bytes, str)) else json.dumps(request, allow_nan=False)
    if isinstance(body, str):
        body = body.encode()
    ptr = lib.shuffledp_call(method.encode(), body)
    if not ptr:
        raise ShuffleDPError(f"internal error: {method} returned no response")
    try:
        raw = ctypes.string_at(ptr)
    finally:
        lib.shuffledp_free(ptr)
    out = json.loads(raw)
    if "error" in out:
        raise ShuffleDPError(python_names(out["error"]))
    return out["result"]


def call_raw(method: str, request: Any) -> str:
    """Like :func:`call`, but return the JSON text of the result exactly as
    Go wrote it (within the response envelope)."""
    lib = _load()
    body = request if isinstance(request, (bytes, str)) else json.dumps(request, allow_nan=False)
    if isinstance(body, str):
        body = body.encode()
    ptr = lib.shuffledp_call(method.encode(), body)
    try:
        raw = ctypes.string_at(ptr).decode()
    finally:
        lib.shuffledp_free(ptr)
    if raw.startswith('{"error":'):
        raise ShuffleDPError(python_names(json.loads(raw)["error"]))
    prefix = '{"result":'
    if not (raw.startswith(prefix) and raw.endswith("}")):
        raise ShuffleDPError(f"internal error: unexpected response {raw[:80]!r}")
    return raw[len(prefix):-1]
