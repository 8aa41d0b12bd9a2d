"""dp_accounting's event algebra over the shuffledp accountant.

Google's ``dp_accounting`` describes a training run as a tree of
``DpEvent`` objects: a leaf mechanism (``GaussianDpEvent``), a sampling
wrapper (``PoissonSampledDpEvent``, ``SampledWithoutReplacementDpEvent``),
and composition nodes (``SelfComposedDpEvent``, ``ComposedDpEvent``).
This module offers the same names and parameter names, so code written
for ``dp_accounting`` reads the same here, and adds the shuffle model's
events (:class:`~shuffledp.SubsampledShuffleEvent` and the others of
:mod:`shuffledp.events`, which are ``DpEvent`` too).

Nothing is computed here: :func:`flatten` turns a tree into the
(event, count) list the Go accountant composes, and
:meth:`shuffledp.Accountant.supports` says whether a tree has such a
form. The mapping, each an identity of mechanisms (no bound is loosened):

- ``GaussianDpEvent(noise_multiplier)`` alone: the Gaussian mechanism of
  sensitivity 1 under add/remove, i.e. the Poisson-sampled Gaussian at
  ``sampling_probability`` 1 (Go's ``sampled-gaussian``, rate 1);
- ``PoissonSampledDpEvent(q, GaussianDpEvent(s))``: ``sampled-gaussian``
  (rate q, sigma s, add/remove), the event of central DP-SGD;
- ``SampledWithoutReplacementDpEvent(n, k, ShuffleEvent(n=k, eps0))``:
  ``subsampled-shuffle`` (k of n sampled, then k reports shuffled), and
  likewise ``ShuffleGaussianEvent(n=k, sigma)`` inside gives
  ``subsampled-shuffle-gaussian``;
- ``SelfComposedDpEvent(e, c)``: e's list with every count times c;
- ``ComposedDpEvent([e1, e2, ...])``: the lists concatenated, in order;
- ``NoOpDpEvent()``: nothing.

Anything else (``NonPrivateDpEvent``, ``UnsupportedDpEvent``, a
Poisson-sampled shuffle, ...) is not supported: ``supports`` is False and
``compose`` raises :class:`UnsupportedEventError`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from ._lib import ShuffleDPError


class UnsupportedEventError(ShuffleDPError):
    """The accountant has no route for this event (dp_accounting's
    ``UnsupportedEventError``)."""


class DpEvent:
    """The base of every privacy event (dp_accounting's ``DpEvent``)."""


def check_int(name: str, value: Any, minimum: Optional[int]) -> int:
    """value as an int >= minimum (None: any int; the range is then Go's to
    check); a bool, a string or a non-integral number is refused with an
    error naming the argument."""
    what = "an integer" if minimum is None else f"an integer >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) \
                and float(value) == int(value):
            value = int(value)
        else:
            raise ShuffleDPError(f"{name} must be {what}, got {value!r} ({type(value).__name__})")
    if minimum is not None and value < minimum:
        raise ShuffleDPError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_real(name: str, value: Any) -> float:
    """value as a finite float; NaN, infinities, strings and bools are
    refused with an error naming the argument (the range is Go's to
    check, with the same name)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ShuffleDPError(f"{name} must be a finite number, got {value!r} ({type(value).__name__})")
    v = float(value)
    if not math.isfinite(v):
        raise ShuffleDPError(f"{name} must be a finite number, got {v}")
    return v


@dataclass(frozen=True)
class NoOpDpEvent(DpEvent):
    """An event that releases nothing; composes to nothing."""


@dataclass(frozen=True)
class NonPrivateDpEvent(DpEvent):
    """A release without privacy: no accountant supports it."""


@dataclass(frozen=True)
class UnsupportedDpEvent(DpEvent):
    """An event the accountant cannot analyse (dp_accounting's name)."""


@dataclass(frozen=True)
class GaussianDpEvent(DpEvent):
    """The Gaussian mechanism with noise standard deviation
    ``noise_multiplier`` times the L2 sensitivity."""

    noise_multiplier: float

    def __post_init__(self) -> None:
        v = check_real("noise_multiplier", self.noise_multiplier)
        if v <= 0:
            raise ShuffleDPError(f"noise_multiplier must be > 0, got {v}")
        object.__setattr__(self, "noise_multiplier", v)


@dataclass(frozen=True)
class PoissonSampledDpEvent(DpEvent):
    """``event`` applied to a Poisson sample: each record is included
    independently with ``sampling_probability``."""

    sampling_probability: float
    event: DpEvent

    def __post_init__(self) -> None:
        v = check_real("sampling_probability", self.sampling_probability)
        if not 0 < v <= 1:
            raise ShuffleDPError(f"sampling_probability must be in (0, 1], got {v}")
        object.__setattr__(self, "sampling_probability", v)
        _check_event("event", self.event)


@dataclass(frozen=True)
class SampledWithoutReplacementDpEvent(DpEvent):
    """``event`` applied to ``sample_size`` records drawn without
    replacement from ``source_dataset_size``."""

    source_dataset_size: int
    sample_size: int
    event: DpEvent

    def __post_init__(self) -> None:
        n = check_int("source_dataset_size", self.source_dataset_size, 1)
        k = check_int("sample_size", self.sample_size, 1)
        if k > n:
            raise ShuffleDPError(f"sample_size must be <= source_dataset_size ({n}), got {k}")
        object.__setattr__(self, "source_dataset_size", n)
        object.__setattr__(self, "sample_size", k)
        _check_event("event", self.event)


@dataclass(frozen=True)
class SelfComposedDpEvent(DpEvent):
    """``event`` applied ``count`` times (adaptively)."""

    event: DpEvent
    count: int

    def __post_init__(self) -> None:
        _check_event("event", self.event)
        object.__setattr__(self, "count", check_int("count", self.count, 0))


@dataclass(frozen=True)
class ComposedDpEvent(DpEvent):
    """The events applied one after the other (adaptively)."""

    events: Tuple[DpEvent, ...]

    def __post_init__(self) -> None:
        if isinstance(self.events, (DpEvent, str, bytes)) or not isinstance(self.events, Sequence):
            raise ShuffleDPError(f"events must be a list of DpEvent, got {type(self.events).__name__}")
        for i, e in enumerate(self.events):
            _check_event(f"events[{i}]", e)
        object.__setattr__(self, "events", tuple(self.events))


def _check_event(name: str, e: Any) -> None:
    if not isinstance(e, DpEvent):
        raise ShuffleDPError(f"{name} must be a DpEvent, got {type(e).__name__}")


def flatten(e: DpEvent) -> List[Tuple[Any, int]]:
    """The (shuffledp Event, count) list the Go accountant composes for the
    tree e, in order; raises :class:`UnsupportedEventError` naming the
    first node without a route."""
    from . import events as ev  # the shuffle-model events are DpEvents

    if isinstance(e, ev.Event):
        return [(e, 1)]
    if isinstance(e, NoOpDpEvent):
        return []
    if isinstance(e, GaussianDpEvent):
        return [(ev.SampledGaussianEvent(rate=1, sigma=e.noise_multiplier), 1)]
    if isinstance(e, PoissonSampledDpEvent):
        if isinstance(e.event, GaussianDpEvent):
            return [(ev.SampledGaussianEvent(rate=e.sampling_probability, sigma=e.event.noise_multiplier), 1)]
        raise UnsupportedEventError(f"{e!r}: Poisson sampling is supported around GaussianDpEvent only")
    if isinstance(e, SampledWithoutReplacementDpEvent):
        inner, n, k = e.event, e.source_dataset_size, e.sample_size
        if isinstance(inner, (ev.ShuffleEvent, ev.ShuffleGaussianEvent)) and inner.n != k:
            raise UnsupportedEventError(f"{e!r}: the shuffled event inside must have n = sample_size ({k}), got n={inner.n}")
        if isinstance(inner, ev.ShuffleEvent):
            return [(ev.SubsampledShuffleEvent(n=n, k=k, eps0=inner.eps0), 1)]
        if isinstance(inner, ev.ShuffleGaussianEvent):
            return [(ev.SubsampledShuffleGaussianEvent(n=n, k=k, sigma=inner.sigma, adjacency=inner.adjacency), 1)]
        raise UnsupportedEventError(f"{e!r}: sampling without replacement is supported around ShuffleEvent and "
                                    "ShuffleGaussianEvent (n = sample_size) only")
    if isinstance(e, SelfComposedDpEvent):
        return [(x, c * e.count) for x, c in flatten(e.event)] if e.count else []
    if isinstance(e, ComposedDpEvent):
        out: List[Tuple[Any, int]] = []
        for x in e.events:
            out += flatten(x)
        return out
    raise UnsupportedEventError(f"{e!r} is not supported by the shuffledp accountant")
