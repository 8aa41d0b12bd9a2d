"""shuffledp.account and shuffledp.calibrate against the Go command's
--json output, and every error path against the command's message."""

import json

import pytest

import shuffledp
from shuffledp import _lib
from conftest import flags

# A table of settings: every mechanism, named bounds, "all", the
# certified interval, PLD, orders, adjacency, client sigma, defaults.
SETTINGS = [
    dict(),
    dict(n=60000, k=600, eps0=1, steps=100, delta="1/60000"),
    dict(mechanism="subsampled-shuffle", n=1000, k=100, eps0=1, steps=10, delta=1e-6, bound="certified"),
    dict(mechanism="subsampled-shuffle", n=1000, k=100, eps0=1, steps=10, delta=1e-6, bound="pld"),
    dict(mechanism="subsampled-shuffle", n=100000, k=1000, eps0=2, steps=1000, delta=1e-8, bound="neurips21-upper"),
    dict(mechanism="shuffle", n=200, eps0=0.5, steps=2, delta=1e-6, bound="all"),
    dict(mechanism="shuffle", n=2000, eps0=0.5, steps=1, delta=1e-6, bound="fmt20-numeric"),
    dict(mechanism="shuffle", n=2000, eps0=0.5, steps=3, delta=1e-6, bound="ccs21-upper2"),
    dict(mechanism="shuffle-gaussian", n=1000, sigma=3, steps=10, delta=1e-6, orders="2:64"),
    dict(mechanism="shuffle-gaussian", n=1000, sigma=3, steps=10, delta=1e-6, orders=[2, 4, 8, 16], adjacency="zero-out"),
    dict(mechanism="subsampled-shuffle-gaussian", n=60000, k=600, sigma=2, steps=100, delta=1e-5),
    dict(mechanism="checkin-gaussian", n=60000, rate=0.1, sigma=5, steps=100, delta=1e-5, bound="iclr23-eq13"),
    dict(mechanism="sampled-gaussian", rate=0.01, sigma=1.1, steps=1000, delta=1e-5),
    dict(mechanism="sampled-gaussian", n=60000, k=600, client_sigma=0.1, steps=100, delta=1e-5),
    dict(mechanism="sampled-gaussian", n=600, k=60, sigma=1.1, steps=10, delta=1e-5, bound="all"),
]


@pytest.mark.parametrize("kw", SETTINGS, ids=lambda kw: " ".join(flags(**kw)) or "defaults")
def test_account_equals_cli(cli_json, kw):
    want = cli_json("account", *flags(**kw))
    got = shuffledp.account(**kw)
    assert got.raw == want
    assert got.epsilon == want["epsilon"] and got.bound == want["bound"] and got.delta == want["delta"]
    assert got.winning_bound == want.get("winning_bound", "")
    if "interval" in want:
        assert got.interval == tuple(want["interval"])
    if kw.get("bound") == "all":
        assert len(got.rows) == len(want["all"]) > 1
        for r in want["all"]:
            assert got.row(r["bound"])["epsilon"] == r["epsilon"]


def test_account_explicit_ends():
    # The certified interval's lower end 0 (n=3, k=1, delta=0.1): no ratio
    # (null, not an infinity JSON cannot carry), the ends named.
    got = shuffledp.account("subsampled-shuffle", n=3, k=1, eps0=0.5, steps=1, delta=0.1, bound="certified")
    assert got.kind == "certified-lower" and got.lower == 0 and got.upper is not None and got.upper >= got.lower
    assert got.raw.get("ratio") is None and "lower end is 0" in got.raw["ratio_note"]
    assert got.raw["lower_bound"] is True
    up = shuffledp.account("subsampled-shuffle", n=1000, k=100, eps0=1, steps=10, delta=1e-6)
    assert up.kind == "upper" and up.upper == up.epsilon and up.lower is None
    rdp_lower = shuffledp.account("subsampled-shuffle", n=1000, k=100, eps0=1, steps=10, delta=1e-6, bound="krr3-lower")
    assert rdp_lower.kind == "rdp-lower" and rdp_lower.upper is None and rdp_lower.lower is None


CALIBRATIONS = [
    ("sigma", 1.0, dict(mechanism="shuffle-gaussian", n=1000, steps=10, delta=1e-5, orders="2:64")),
    ("steps", 4.0, dict(mechanism="subsampled-shuffle", n=10000, k=100, eps0=1, delta=1e-6, bound="rdp-best")),
    ("eps0", 1.0, dict(mechanism="shuffle", n=1000, steps=5, delta=1e-6, bound="ccs21-upper2")),
]


@pytest.mark.parametrize("solve,target,kw", CALIBRATIONS, ids=lambda x: str(x))
def test_calibrate_equals_cli(cli_json, solve, target, kw):
    want = cli_json("calibrate", "--solve", solve, "--epsilon", str(target), *flags(**kw))
    got = shuffledp.calibrate(solve, target, **kw)
    assert got.raw == want
    assert got.value == want["value"] and got.epsilon <= target
    helper = {"sigma": shuffledp.calibrate_sigma, "steps": shuffledp.calibrate_steps, "eps0": shuffledp.calibrate_eps0}[solve]
    assert helper(target, **kw) == want["value"]


# Invalid input: the exception's message is the command's (after "shuffledp: ").
ERRORS = [
    dict(delta=2),
    dict(delta=0),
    dict(n=1000, k=2000),
    dict(k=0),
    dict(eps0=-1),
    dict(n=0),
    dict(steps=-1),
    dict(mechanism="nope"),
    dict(bound="nope", steps=1),
    dict(mechanism="shuffle", n=100, eps0=1, bound="iclr23-thm1"),
    dict(mechanism="shuffle-gaussian", n=100, sigma=2, eps0=1),
    dict(mechanism="shuffle-gaussian", n=100, sigma=0),
    dict(mechanism="shuffle", n=100, eps0=1, k=5),
    dict(mechanism="checkin-gaussian", n=100, sigma=2, rate=1.5),
    dict(mechanism="checkin-gaussian", n=100, sigma=2, rate=0.1, adjacency="add-remove"),
    dict(mechanism="sampled-gaussian", rate=0.01, sigma=1, adjacency="replace-one"),
    dict(mechanism="sampled-gaussian", n=600, client_sigma=0.1, sigma=1),
    dict(mechanism="sampled-gaussian", n=600, client_sigma=0.1),
    dict(mechanism="shuffle", n=100, eps0=1, client_sigma=0.1),
    dict(orders="x"),
    dict(orders="0:4"),
    dict(mechanism="shuffle", n=100, eps0=1, adjacency="zero-out"),
]


@pytest.mark.parametrize("kw", ERRORS, ids=lambda kw: " ".join(flags(**kw)))
def test_account_error_equals_cli(cli, kw):
    rc, out, err = cli("account", "--json", *flags(**kw))
    assert rc != 0 and err.startswith("shuffledp: "), (rc, out, err)
    with pytest.raises(shuffledp.ShuffleDPError) as exc:
        shuffledp.account(**kw)
    assert str(exc.value) == _lib.python_names(err[len("shuffledp: "):].rstrip("\n"))


CALIBRATE_ERRORS = [
    ("sigma", 1.0, dict(mechanism="shuffle", n=100, eps0=1, steps=10)),
    ("k", 1.0, dict(mechanism="shuffle", n=100, eps0=1, steps=10)),
    ("rate", 1.0, dict(mechanism="shuffle-gaussian", n=100, sigma=1, steps=10)),
    ("nope", 1.0, dict(mechanism="shuffle", n=100, eps0=1)),
    ("sigma", 1.0, dict(mechanism="shuffle-gaussian", n=100, sigma=2, steps=10)),
    ("sigma", -1.0, dict(mechanism="shuffle-gaussian", n=100, steps=10)),
    ("sigma", 1.0, dict(mechanism="shuffle-gaussian", n=100, steps=10, bound="all")),
    ("sigma", 1.0, dict(mechanism="nope", n=100, steps=10)),
    ("sigma", 1.0, dict(mechanism="shuffle-gaussian", n=100, steps=10, delta=3)),
    ("steps", 1e-9, dict(mechanism="shuffle-gaussian", n=100, sigma=1)),
]


@pytest.mark.parametrize("solve,target,kw", CALIBRATE_ERRORS, ids=lambda x: str(x))
def test_calibrate_error_equals_cli(cli, solve, target, kw):
    rc, out, err = cli("calibrate", "--json", "--solve", solve, "--epsilon", str(target), *flags(**kw))
    assert rc != 0 and err.startswith("shuffledp: "), (rc, out, err)
    with pytest.raises(shuffledp.ShuffleDPError) as exc:
        shuffledp.calibrate(solve, target, **kw)
    assert str(exc.value) == _lib.python_names(err[len("shuffledp: "):].rstrip("\n"))


def test_bad_quotient_names_delta():
    # The command's flag parser words this one itself (pflag); the library names the parameter too.
    with pytest.raises(shuffledp.ShuffleDPError, match=r'^delta: not a number or a quotient a/b: "1/0"$'):
        shuffledp.account(delta="1/0")


def test_unknown_parameter_is_a_type_error():
    with pytest.raises(TypeError, match="unknown parameter 'epsilon0'"):
        shuffledp.calibrate("sigma", 1.0, epsilon0=1)
    with pytest.raises(TypeError):
        shuffledp.account(epsilon0=1)  # type: ignore[call-arg]


def test_mechanisms():
    assert shuffledp.mechanisms() == ["checkin-gaussian", "sampled-gaussian", "shuffle", "shuffle-gaussian",
                                      "subsampled-shuffle", "subsampled-shuffle-gaussian"]
