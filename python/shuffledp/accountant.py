"""The accountant of composed events, in the shape of dp_accounting's
accountants (``compose``, ``get_epsilon``, ``get_delta``), and the
convenience calls mirroring ``shuffledp account`` and ``shuffledp
calibrate``. Every number comes from the Go accountant."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _lib
from .dp_event import DpEvent, UnsupportedEventError, check_int, flatten
from .events import Event, alias

Number = Union[int, float]


@dataclass(frozen=True)
class Statement:
    """An (epsilon, delta) statement of a composition (Go's
    account.Statement): ``bound`` asked for, ``winning_bound`` and
    ``route`` of best, the RDP ``order`` and ``conversion``, ``kind``
    ("upper": a guarantee; "rdp-lower": not one). ``conjecture`` is True
    when the number rests on a conjecture (the ICLR'23 shuffle Gaussian
    bounds, reached only through bound="best-conjecture" or by name): then
    it is no proven guarantee, and ``assumption`` says which."""

    bound: str
    epsilon: float
    delta: float
    kind: str
    rounds: int
    winning_bound: str = ""
    route: str = ""
    order: float = 0.0
    conversion: str = ""
    at_grid_edge: bool = False
    adjacency: str = ""
    assumption: str = ""
    conjecture: bool = False
    routes: List[Dict[str, Any]] = field(default_factory=list)

    @staticmethod
    def _from(d: Dict[str, Any]) -> "Statement":
        return Statement(bound=d["bound"], epsilon=d["epsilon"], delta=d["delta"], kind=d["kind"], rounds=d["rounds"],
                         winning_bound=d.get("winning_bound", ""), route=d.get("route", ""), order=d.get("order", 0.0),
                         conversion=d.get("conversion", ""), at_grid_edge=d.get("at_grid_edge", False),
                         adjacency=d.get("adjacency", ""), assumption=d.get("assumption", ""),
                         conjecture=d.get("conjecture", False), routes=d.get("routes", []))


@dataclass(frozen=True)
class CertifiedInterval:
    """The certified interval of a composition of eps0-LDP shuffle events
    (Go's route.CertifiedInterval): the worst case's epsilon lies in
    [lower, upper]; ``lower`` is the exact epsilon of ``witness``, a true
    lower bound, ``upper`` best's guarantee (attained by ``upper_bound``)."""

    lower: float
    upper: float
    delta: float
    ratio: float
    upper_bound: str
    witness: str
    rounds: int


class Accountant:
    """Composes privacy events and reports (epsilon, delta), like
    dp_accounting's RdpAccountant/PLDAccountant:

    >>> acct = Accountant()
    >>> acct.compose(SubsampledShuffleEvent(n=60000, k=600, eps0=1), 100)
    >>> acct.get_epsilon(1e-5)

    ``bound`` is "best" (the minimum over every valid route: RDP, the
    approximate-DP baselines, PLD), "pld", "rdp-best" or an RDP bound of
    the events' mechanisms (``Event.bounds()``). ``orders`` is the RDP order
    grid (None: the events' default grids)."""

    def __init__(self, bound: str = "best", orders: Optional[Sequence[Number]] = None) -> None:
        self.bound = bound
        self.orders = list(orders) if orders is not None else None
        self._events: List[Tuple[Event, int]] = []

    def supports(self, event: DpEvent) -> bool:
        """Whether the accountant has a route for event: a shuffledp Event,
        or a dp_accounting-style tree of them (:mod:`shuffledp.dp_event`)
        whose every node maps to one (dp_accounting's ``supports``)."""
        if not isinstance(event, DpEvent):
            return False
        try:
            flatten(event)
        except UnsupportedEventError:
            return False
        return True

    def compose(self, event: DpEvent, count: int = 1) -> "Accountant":
        """Record event applied count times (dp_accounting's ``compose``):
        a shuffledp Event or a tree of dp_accounting-style events
        (``SelfComposedDpEvent``, ``ComposedDpEvent``,
        ``PoissonSampledDpEvent(GaussianDpEvent)``, ...). Every event is
        validated by Go now, so that a bad event fails here, naming the
        parameter; an unsupported tree raises
        :class:`~shuffledp.dp_event.UnsupportedEventError` and composes
        nothing. Returns self."""
        if not isinstance(event, DpEvent):
            raise TypeError(f"compose takes a DpEvent (a shuffledp Event or a dp_event tree), got {type(event).__name__}")
        count = check_int("count", count, 0)
        parts = flatten(event)
        for e, _ in parts:
            e.validate()
        for e, c in parts:
            c *= count
            if c == 0:
                continue
            if self._events and self._events[-1][0] == e:
                self._events[-1] = (e, self._events[-1][1] + c)
            else:
                self._events.append((e, c))
        return self

    def __repr__(self) -> str:
        return f"Accountant(bound={self.bound!r}, events={self._events!r})"

    @property
    def events(self) -> List[Tuple[Event, int]]:
        """The composed (event, count) pairs."""
        return list(self._events)

    def _request(self, **extra: Any) -> str:
        body = ",".join(f'{{"event":{e.to_json()},"count":{c}}}' for e, c in self._events)
        req: Dict[str, Any] = {"bound": self.bound, **extra}
        if self.orders is not None:
            req["orders"] = self.orders
        return '{"events":[' + body + "]," + json.dumps(req, allow_nan=False)[1:]

    def epsilon_statement(self, delta: float) -> Statement:
        """The full statement at delta: epsilon, the winning bound and
        route, the order (Go's account.EpsilonOf)."""
        return Statement._from(_lib.call("epsilon", self._request(delta=delta)))

    def get_epsilon(self, target_delta: float) -> float:
        """The smallest epsilon such that the composition is
        (epsilon, target_delta)-DP under the accountant's bound."""
        return self.epsilon_statement(target_delta).epsilon

    def delta_statement(self, epsilon: float) -> Statement:
        """The full statement at epsilon (Go's account.DeltaOf: the RDP
        route of the bound; for "best" the RDP best curve, labelled
        "rdp-best", since the other routes are not inverted)."""
        return Statement._from(_lib.call("delta", self._request(epsilon=epsilon)))

    def get_delta(self, target_epsilon: float) -> float:
        """The smallest delta over the order grid such that the
        composition is (target_epsilon, delta)-DP by the RDP route."""
        return self.delta_statement(target_epsilon).delta

    def certified_interval(self, delta: float) -> CertifiedInterval:
        """[lower, upper] at delta for compositions of eps0-LDP shuffle
        events (an error for other mechanisms)."""
        d = _lib.call("certified", self._request(delta=delta))
        return CertifiedInterval(lower=d["lower"], upper=d["upper"], delta=d["delta"], ratio=d.get("ratio", float("inf")),
                                 upper_bound=d.get("upper_bound", ""), witness=d.get("witness", ""), rounds=d["rounds"])


@dataclass(frozen=True)
class AccountResult:
    """What ``shuffledp account --json`` prints, as an object: ``epsilon``,
    ``delta``, ``bound`` (the main row's, best's when several),
    ``winning_bound``, ``kind``, ``interval`` (certified bound), ``rows``
    (every row with bound="all") and ``raw``, the whole JSON object.
    ``upper`` is the main row's upper bound on epsilon (a guarantee; None
    for an RDP lower bound, which guarantees nothing), ``lower`` its lower
    bound on epsilon (the certified lower end; None otherwise): read these,
    not ``epsilon``, whose meaning depends on ``kind``. ``conjecture`` is
    True when the main row rests on a conjecture (no proven guarantee)."""

    epsilon: float
    delta: float
    bound: str
    winning_bound: str
    kind: str
    interval: Optional[Tuple[float, float]]
    rows: List[Dict[str, Any]]
    warnings: List[str]
    raw: Dict[str, Any]
    json: str
    upper: Optional[float] = None
    lower: Optional[float] = None
    conjecture: bool = False

    def row(self, bound: str) -> Dict[str, Any]:
        """The row of one bound (with bound="all")."""
        for r in self.rows or [self.raw]:
            if r["bound"] == bound:
                return r
        raise KeyError(bound)


_PARAMS = ("mechanism", "bound", "n", "k", "eps0", "sigma", "rate", "steps", "delta", "orders", "adjacency",
           "client_sigma")

# dp_accounting's names, accepted beside ours.
_ALIASES = {"noise_multiplier": "sigma", "sampling_probability": "rate"}


def _params(kw: Dict[str, Any]) -> Dict[str, Any]:
    kw = dict(kw)
    for other, name in _ALIASES.items():
        if other in kw:
            v = kw.pop(other)
            if v is not None or kw.get(name) is not None:
                kw[name] = alias(name, kw.get(name), other, v)
    out = {}
    for k, v in kw.items():
        if v is None:
            continue
        if k not in _PARAMS:
            raise TypeError(f"unknown parameter {k!r}: the parameters are {', '.join(_PARAMS + tuple(_ALIASES))}")
        if k in ("n", "k", "steps"):
            v = check_int(k, v, None)
        if isinstance(v, float) and not math.isfinite(v):
            raise _lib.ShuffleDPError(f"{k} must be a finite number, got {v}")
        out[k.replace("_", "-")] = list(v) if isinstance(v, (tuple, range)) else v
    return out


def account(mechanism: Optional[str] = None, *, n: Optional[int] = None, k: Optional[int] = None,
            eps0: Optional[float] = None, sigma: Optional[float] = None, rate: Optional[float] = None,
            steps: Optional[int] = None, delta: Optional[Union[float, str]] = None, bound: Optional[str] = None,
            orders: Optional[Union[str, Sequence[Number]]] = None, adjacency: Optional[str] = None,
            client_sigma: Optional[float] = None, noise_multiplier: Optional[float] = None,
            sampling_probability: Optional[float] = None) -> AccountResult:
    """``shuffledp account --json`` with the same parameters (None: the
    flag not given, its default used: subsampled-shuffle, n=10^6, k=1000,
    eps0=2, steps=10^5, delta=1e-8, bound "best"). bound="all" gives every
    applicable bound in ``rows``. delta may be a quotient string "1/60000";
    orders a "lo:hi" string or a list. Raises :class:`ShuffleDPError` with
    the command's message on invalid input, naming the Python argument.
    dp_accounting's names are accepted beside ours: noise_multiplier for
    sigma, sampling_probability for rate."""
    req = _params(dict(mechanism=mechanism, n=n, k=k, eps0=eps0, sigma=sigma, rate=rate, steps=steps, delta=delta,
                       bound=bound, orders=orders, adjacency=adjacency, client_sigma=client_sigma,
                       noise_multiplier=noise_multiplier, sampling_probability=sampling_probability))
    text = _lib.call_raw("account", req)
    d = json.loads(text)
    return AccountResult(epsilon=d["epsilon"], delta=d["delta"], bound=d["bound"], winning_bound=d.get("winning_bound", ""),
                         kind=d["kind"], interval=tuple(d["interval"]) if "interval" in d else None,
                         rows=d.get("all", []), warnings=d.get("warnings", []), raw=d, json=text,
                         upper=d.get("upper"), lower=d.get("lower"), conjecture=d.get("conjecture", False))


@dataclass(frozen=True)
class Calibration:
    """What ``shuffledp calibrate --json`` prints: ``value`` of the
    parameter ``solve`` at which ``epsilon`` <= ``target_epsilon``,
    ``bound``, ``next_epsilon`` (epsilon at value+1 for integers) and
    ``raw``, the whole JSON object."""

    solve: str
    value: float
    epsilon: float
    target_epsilon: float
    delta: float
    bound: str
    next_epsilon: Optional[float]
    raw: Dict[str, Any]


def calibrate(solve: str, epsilon: float, **params: Any) -> Calibration:
    """``shuffledp calibrate --json --solve SOLVE --epsilon EPSILON`` with
    the parameters of :func:`account` (mechanism, n, k, eps0, sigma, rate,
    steps, delta, bound, orders, adjacency, client_sigma); the parameter
    solved for must not be given. Solved by Go's package calibrate."""
    req = _params(params)
    req["solve"] = solve
    req["epsilon"] = epsilon
    d = _lib.call("calibrate", req)
    return Calibration(solve=d["solve"], value=d["value"], epsilon=d["epsilon"], target_epsilon=d["target_epsilon"],
                       delta=d["delta"], bound=d["bound"], next_epsilon=d.get("next_epsilon"), raw=d)


def calibrate_sigma(epsilon: float, **params: Any) -> float:
    """The smallest noise multiplier sigma meeting epsilon (Gaussian
    mechanisms), rounded up on the safe side."""
    return calibrate("sigma", epsilon, **params).value


def calibrate_steps(epsilon: float, **params: Any) -> int:
    """The largest number of rounds whose epsilon stays <= epsilon."""
    return int(calibrate("steps", epsilon, **params).value)


def calibrate_eps0(epsilon: float, **params: Any) -> float:
    """The largest local eps0 meeting epsilon (LDP mechanisms)."""
    return calibrate("eps0", epsilon, **params).value


def calibrate_k(epsilon: float, **params: Any) -> int:
    """The largest number of clients per round meeting epsilon."""
    return int(calibrate("k", epsilon, **params).value)


def mechanisms() -> List[str]:
    """The mechanism names (Go's event.Mechanisms)."""
    return _lib.call("mechanisms", "{}")
