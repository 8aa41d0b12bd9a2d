"""shuffledp: privacy accounting of the shuffle model, from Python.

A thin layer over the Go accountant of the shuffledp repository (loaded
with ctypes from the shared library built at install time): no bound is
computed in Python, every number is Go's, and every error carries Go's
message (:class:`ShuffleDPError`).

- :func:`account`: ``shuffledp account --json`` as a call.
- :class:`Accountant` with ``compose(event, count)``, ``get_epsilon(delta)``,
  ``get_delta(epsilon)`` and ``certified_interval(delta)``, over the events
  :class:`SubsampledShuffleEvent`, :class:`ShuffleEvent`,
  :class:`ShuffleGaussianEvent`, :class:`SubsampledShuffleGaussianEvent`,
  :class:`CheckInGaussianEvent`, :class:`SampledGaussianEvent`
  (``to_json``/``from_json`` as Go writes and reads them).
- dp_accounting's event algebra (:mod:`shuffledp.dp_event`):
  :class:`GaussianDpEvent`, :class:`PoissonSampledDpEvent`,
  :class:`SampledWithoutReplacementDpEvent`, :class:`SelfComposedDpEvent`,
  :class:`ComposedDpEvent`, composed by the same :class:`Accountant`
  (``supports``, ``compose``), dp_accounting's parameter names
  (``noise_multiplier``, ``sampling_probability``) accepted beside ours.
- :func:`calibrate` and ``calibrate_sigma/steps/eps0/k``: ``shuffledp
  calibrate``.
- :mod:`shuffledp.federated`: bring your own model (PyTorch, numpy): the
  networked deployment's roles with the client update, the server step and
  the evaluation in Python (docs/python-federated.md).
"""

from ._lib import ShuffleDPError
from .accountant import (AccountResult, Accountant, Calibration, CertifiedInterval, Statement, account, calibrate,
                         calibrate_eps0, calibrate_k, calibrate_sigma, calibrate_steps, mechanisms)
from .dp_event import (ComposedDpEvent, DpEvent, GaussianDpEvent, NonPrivateDpEvent, NoOpDpEvent, PoissonSampledDpEvent,
                       SampledWithoutReplacementDpEvent, SelfComposedDpEvent, UnsupportedDpEvent, UnsupportedEventError)
from .events import (CheckInGaussianEvent, Event, SampledGaussianEvent, ShuffleEvent, ShuffleGaussianEvent,
                     SubsampledShuffleEvent, SubsampledShuffleGaussianEvent)

__all__ = [
    "ShuffleDPError", "AccountResult", "Accountant", "Calibration", "CertifiedInterval", "Statement", "account",
    "calibrate", "calibrate_eps0", "calibrate_k", "calibrate_sigma", "calibrate_steps", "mechanisms",
    "CheckInGaussianEvent", "Event", "SampledGaussianEvent", "ShuffleEvent", "ShuffleGaussianEvent",
    "SubsampledShuffleEvent", "SubsampledShuffleGaussianEvent",
    "DpEvent", "NoOpDpEvent", "NonPrivateDpEvent", "UnsupportedDpEvent", "GaussianDpEvent", "PoissonSampledDpEvent",
    "SampledWithoutReplacementDpEvent", "SelfComposedDpEvent", "ComposedDpEvent", "UnsupportedEventError",
]
__version__ = "0.1.0"
