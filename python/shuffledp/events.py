"""Privacy events: one application of a mechanism with its parameters,
mirroring Go's ``event.Event`` (the DpEvent pattern of Google's
dp_accounting). ``to_json`` writes exactly the bytes Go's ``json.Marshal``
writes for the same event; ``from_json`` parses through Go's
``event.Parse`` (unknown fields refused, the event validated)."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any, Dict, Optional, Type

from . import _lib
from .dp_event import DpEvent, check_int, check_real

SUBSAMPLED_SHUFFLE = "subsampled-shuffle"
SHUFFLE = "shuffle"
SHUFFLE_GAUSSIAN = "shuffle-gaussian"
SUBSAMPLED_SHUFFLE_GAUSSIAN = "subsampled-shuffle-gaussian"
CHECKIN_GAUSSIAN = "checkin-gaussian"
SAMPLED_GAUSSIAN = "sampled-gaussian"


def alias(name: str, value: Any, other: str, other_value: Any) -> Any:
    """The value of a parameter that has a second name (dp_accounting's
    noise_multiplier for sigma, sampling_probability for rate): exactly
    one of the two must be given."""
    if value is not None and other_value is not None:
        raise _lib.ShuffleDPError(f"give {name} or {other}, not both")
    if value is None and other_value is None:
        raise _lib.ShuffleDPError(f"{name} (or {other}) is required")
    return value if value is not None else other_value


def go_float(x: float) -> str:
    """Format x as Go's encoding/json writes a float64: the shortest
    round-trip digits, in plain notation for 1e-6 <= |x| < 1e21 (and 0),
    otherwise in exponent notation with Go's exponent spelling."""
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"{x} is not a JSON number")
    a = abs(x)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        mant, exp = repr(x).split("e")
        e = int(exp)
        return f"{mant}e-{-e}" if e < 0 else f"{mant}e+{e:02d}"
    s = format(Decimal(repr(x)), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "-0" if s == "-0" else s


class Event(DpEvent):
    """One application of a mechanism (Go's ``event.Event``), a
    :class:`~shuffledp.dp_event.DpEvent` that composes with dp_accounting's
    event algebra. A zero field is "not used by this mechanism" and JSON
    omits it (n is always written). Use the subclasses; :meth:`from_json`
    returns one. A string, a bool, NaN or an infinity is refused naming the
    argument; ranges are checked by Go (:meth:`validate`)."""

    mechanism: str = ""

    def __init__(self, n: int = 0, k: int = 0, eps0: float = 0.0, sigma: float = 0.0, rate: float = 0.0,
                 adjacency: Optional[str] = None) -> None:
        self.n = check_int("n", n, 0)
        self.k = check_int("k", k, 0)
        self.eps0 = check_real("eps0", eps0)
        self.sigma = check_real("sigma", sigma)
        self.rate = check_real("rate", rate)
        self.adjacency = adjacency or None

    def to_dict(self) -> Dict[str, Any]:
        """The event as a dict in Go's field order, zero fields omitted."""
        d: Dict[str, Any] = {"mechanism": self.mechanism, "n": self.n}
        if self.k:
            d["k"] = self.k
        for name in ("eps0", "sigma", "rate"):
            if getattr(self, name):
                d[name] = getattr(self, name)
        if self.adjacency:
            d["adjacency"] = self.adjacency
        return d

    def to_json(self) -> str:
        """The event's JSON, byte for byte what Go's json.Marshal writes."""
        parts = []
        for key, v in self.to_dict().items():
            if isinstance(v, str):
                val = json.dumps(v)
            elif isinstance(v, int):
                val = str(v)
            else:
                val = go_float(v)
            parts.append(f'"{key}":{val}')
        return "{" + ",".join(parts) + "}"

    @staticmethod
    def from_json(data: str) -> "Event":
        """Parse an event written by Go (or :meth:`to_json`): Go's
        event.Parse refuses unknown fields and validates the event;
        returns the subclass of its mechanism."""
        d = _lib.call("event", data)
        return Event.from_dict(d)

    @staticmethod
    def from_dict(d: Dict[str, Any]) -> "Event":
        """The event of a dict with Go's JSON keys (not validated: see
        :meth:`validate`)."""
        cls = _CLASSES.get(d.get("mechanism", ""), Event)
        e = cls.__new__(cls)
        Event.__init__(e, n=d.get("n", 0), k=d.get("k", 0), eps0=d.get("eps0", 0.0), sigma=d.get("sigma", 0.0),
                       rate=d.get("rate", 0.0), adjacency=d.get("adjacency"))
        if cls is Event:
            e.mechanism = d.get("mechanism", "")
        return e

    def validate(self) -> "Event":
        """Validate the event with Go's Event.Validate; raise
        :class:`ShuffleDPError` naming the parameter, else return self."""
        _lib.call("event", self.to_json())
        return self

    def bounds(self) -> list:
        """The bound names ``shuffledp account --bound`` accepts for this
        event's mechanism."""
        return _lib.call("bounds", self.to_json())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self.to_json())

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "mechanism")
        return f"{type(self).__name__}({args})"


class SubsampledShuffleEvent(Event):
    """A round of the subsampled shuffle model (NeurIPS'21 Thm 1): k of n
    clients sampled without replacement, each sends an eps0-LDP report, the
    reports are shuffled."""

    mechanism = SUBSAMPLED_SHUFFLE

    def __init__(self, n: int, k: int, eps0: float) -> None:
        super().__init__(n=n, k=k, eps0=eps0)


class ShuffleEvent(Event):
    """One shuffle of all n clients' eps0-LDP reports (CCS'21)."""

    mechanism = SHUFFLE

    def __init__(self, n: int, eps0: float) -> None:
        super().__init__(n=n, eps0=eps0)


class ShuffleGaussianEvent(Event):
    """All n clients add N(0, sigma^2 I) to their clipped gradients, the
    reports are shuffled (ICLR'23 submission, Thm 1). adjacency is
    replace-one (the default) or zero-out; None writes an event without
    one (its legacy meaning, zero-out)."""

    mechanism = SHUFFLE_GAUSSIAN

    def __init__(self, n: int, sigma: Optional[float] = None, adjacency: Optional[str] = "replace-one", *,
                 noise_multiplier: Optional[float] = None) -> None:
        super().__init__(n=n, sigma=alias("sigma", sigma, "noise_multiplier", noise_multiplier), adjacency=adjacency)


class SubsampledShuffleGaussianEvent(Event):
    """k of n clients sampled per round, each adds Gaussian noise, the
    reports are shuffled (ICLR'23 submission, Thm 2)."""

    mechanism = SUBSAMPLED_SHUFFLE_GAUSSIAN

    def __init__(self, n: int, k: int, sigma: Optional[float] = None, adjacency: Optional[str] = "replace-one", *,
                 noise_multiplier: Optional[float] = None) -> None:
        super().__init__(n=n, k=k, sigma=alias("sigma", sigma, "noise_multiplier", noise_multiplier),
                         adjacency=adjacency)


class CheckInGaussianEvent(Event):
    """Shuffled check-in: each of n clients takes part with probability
    rate and adds Gaussian noise (ICLR'23 submission, eq. (11))."""

    mechanism = CHECKIN_GAUSSIAN

    def __init__(self, n: int, rate: Optional[float] = None, sigma: Optional[float] = None,
                 adjacency: Optional[str] = "replace-one", *, sampling_probability: Optional[float] = None,
                 noise_multiplier: Optional[float] = None) -> None:
        super().__init__(n=n, rate=alias("rate", rate, "sampling_probability", sampling_probability),
                         sigma=alias("sigma", sigma, "noise_multiplier", noise_multiplier), adjacency=adjacency)


class SampledGaussianEvent(Event):
    """The Poisson-subsampled Gaussian mechanism of central DP-SGD
    (Mironov, Talwar, Zhang 2019): rate, sigma; n optional. adjacency is
    add-remove (the default) or zero-out."""

    mechanism = SAMPLED_GAUSSIAN

    def __init__(self, rate: Optional[float] = None, sigma: Optional[float] = None, n: int = 0,
                 adjacency: Optional[str] = "add-remove", *, sampling_probability: Optional[float] = None,
                 noise_multiplier: Optional[float] = None) -> None:
        super().__init__(n=n, rate=alias("rate", rate, "sampling_probability", sampling_probability),
                         sigma=alias("sigma", sigma, "noise_multiplier", noise_multiplier), adjacency=adjacency)


_CLASSES: Dict[str, Type[Event]] = {c.mechanism: c for c in (
    SubsampledShuffleEvent, ShuffleEvent, ShuffleGaussianEvent, SubsampledShuffleGaussianEvent,
    CheckInGaussianEvent, SampledGaussianEvent)}
