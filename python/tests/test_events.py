"""Events: to_json writes Go's bytes, from_json reads them back; the
Accountant's numbers equal the command's for the same event and rounds."""

import json
import math

import pytest

import shuffledp
from shuffledp import _lib
from shuffledp.events import go_float
from conftest import flags

EVENTS = [
    shuffledp.SubsampledShuffleEvent(n=60000, k=600, eps0=1),
    shuffledp.SubsampledShuffleEvent(n=1000000, k=1000, eps0=1e-7),
    shuffledp.SubsampledShuffleEvent(n=10, k=10, eps0=0.1 + 0.2),
    shuffledp.ShuffleEvent(n=2000, eps0=0.5),
    shuffledp.ShuffleEvent(n=2000, eps0=1234567.125),
    shuffledp.ShuffleGaussianEvent(n=1000, sigma=3),
    shuffledp.ShuffleGaussianEvent(n=1000, sigma=1e21, adjacency="zero-out"),
    shuffledp.ShuffleGaussianEvent(n=1000, sigma=1e-100, adjacency=None),
    shuffledp.SubsampledShuffleGaussianEvent(n=60000, k=600, sigma=2.5e-6),
    shuffledp.CheckInGaussianEvent(n=60000, rate=0.1, sigma=5),
    shuffledp.CheckInGaussianEvent(n=60000, rate=1e-6, sigma=0.000123, adjacency="zero-out"),
    shuffledp.SampledGaussianEvent(rate=0.01, sigma=1.1),
    shuffledp.SampledGaussianEvent(rate=1, sigma=123456789012345678901234.0, n=60000, adjacency="zero-out"),
]


@pytest.mark.parametrize("e", EVENTS, ids=repr)
def test_event_json_is_gos(e):
    go = _lib.call_raw("event", e.to_json())  # Go's event.Parse, then json.Marshal
    assert e.to_json() == go
    back = shuffledp.Event.from_json(go)
    assert type(back) is type(e) and back == e and back.to_json() == go


def test_go_float_formatting():
    # Go's encoding/json spellings, by hand (strconv 'f' / 'e' with shortest digits).
    cases = {0.0: "0", 1.0: "1", 0.5: "0.5", 1e-6: "0.000001", 1e-7: "1e-7", 2.5e-10: "2.5e-10", 1e20: "100000000000000000000",
             1e21: "1e+21", 1.5e300: "1.5e+300", 0.1 + 0.2: "0.30000000000000004", 123456.789: "123456.789", -2.0: "-2"}
    for x, want in cases.items():
        assert go_float(x) == want, x
    with pytest.raises(ValueError):
        go_float(math.nan)


def test_from_json_refuses_what_go_refuses():
    with pytest.raises(shuffledp.ShuffleDPError, match='unknown field "foo"'):
        shuffledp.Event.from_json('{"mechanism":"shuffle","n":10,"eps0":1,"foo":1}')
    with pytest.raises(shuffledp.ShuffleDPError, match="^k "):
        shuffledp.Event.from_json('{"mechanism":"subsampled-shuffle","n":10,"k":11,"eps0":1}')


@pytest.mark.parametrize("e,cli_flags", [
    (shuffledp.ShuffleGaussianEvent(n=100, sigma=0), ["--mechanism", "shuffle-gaussian", "--n", "100", "--sigma", "0"]),
    (shuffledp.SubsampledShuffleEvent(n=100, k=200, eps0=1), ["--n", "100", "--k", "200", "--eps0", "1"]),
    (shuffledp.CheckInGaussianEvent(n=100, rate=0, sigma=1), ["--mechanism", "checkin-gaussian", "--n", "100", "--rate", "0", "--sigma", "1"]),
])
def test_compose_refuses_invalid_event_with_gos_message(cli, e, cli_flags):
    rc, _, err = cli("account", "--json", *cli_flags)
    assert rc != 0
    with pytest.raises(shuffledp.ShuffleDPError) as exc:
        shuffledp.Accountant().compose(e, 1)
    # Go's message, with the command's flag names replaced by the Python argument names
    assert str(exc.value).endswith(_lib.python_names(err[len("shuffledp: "):].rstrip("\n")))
    assert "--" not in str(exc.value)


ACCOUNTED = [
    (shuffledp.SubsampledShuffleEvent(n=60000, k=600, eps0=1), 100, 1e-5, "best"),
    (shuffledp.SubsampledShuffleEvent(n=60000, k=600, eps0=1), 100, 1e-5, "clones-rdp"),
    (shuffledp.ShuffleEvent(n=2000, eps0=0.5), 3, 1e-6, "ccs21-upper2"),
    (shuffledp.ShuffleGaussianEvent(n=1000, sigma=3), 10, 1e-6, "best"),
    (shuffledp.CheckInGaussianEvent(n=60000, rate=0.1, sigma=5), 100, 1e-5, "iclr23-eq13"),
    (shuffledp.SampledGaussianEvent(rate=0.01, sigma=1.1), 1000, 1e-5, "best"),
    (shuffledp.SampledGaussianEvent(rate=0.01, sigma=1.1), 1000, 1e-5, "pld"),
]


def event_flags(e):
    d = e.to_dict()
    if e.mechanism == "sampled-gaussian" and not d.get("n"):
        d.pop("n")
    return flags(**d)


@pytest.mark.parametrize("e,count,delta,bound", ACCOUNTED, ids=lambda x: repr(x))
def test_accountant_equals_cli(cli_json, e, count, delta, bound):
    want = cli_json("account", *event_flags(e), "--steps", str(count), "--delta", repr(delta), "--bound", bound)
    acct = shuffledp.Accountant(bound=bound)
    # Composing in two parts is the same composition.
    acct.compose(e, count // 2).compose(e, count - count // 2)
    s = acct.epsilon_statement(delta)
    assert acct.get_epsilon(delta) == s.epsilon == want["epsilon"]
    assert s.winning_bound == want.get("winning_bound", "") and s.kind == want["kind"]
    assert s.adjacency == want["adjacency"] and s.rounds == count


def test_certified_interval_equals_cli(cli_json):
    e = shuffledp.SubsampledShuffleEvent(n=1000, k=100, eps0=1)
    want = cli_json("account", *event_flags(e), "--steps", "10", "--delta", "1e-6", "--bound", "certified")
    iv = shuffledp.Accountant().compose(e, 10).certified_interval(1e-6)
    assert [iv.lower, iv.upper] == want["interval"] and iv.witness == want["witness"] and iv.ratio == want["ratio"]
    assert iv.lower <= iv.upper
    with pytest.raises(shuffledp.ShuffleDPError, match="certified"):
        shuffledp.Accountant().compose(shuffledp.ShuffleGaussianEvent(n=100, sigma=2), 1).certified_interval(1e-6)


def test_get_delta_inverts_get_epsilon():
    # The RDP route: delta at the epsilon it gave is at most the delta asked for, and close to it.
    for e, count in [(shuffledp.SubsampledShuffleEvent(n=60000, k=600, eps0=1), 100),
                     (shuffledp.SampledGaussianEvent(rate=0.01, sigma=1.1), 1000)]:
        acct = shuffledp.Accountant(bound="rdp-best").compose(e, count)
        for delta in (1e-5, 1e-8):
            eps = acct.get_epsilon(delta)
            d = acct.get_delta(eps)
            assert 0 < d <= delta * (1 + 1e-9) and d > delta / 10, (e, delta, eps, d)
        assert acct.get_delta(0) <= 1
    assert shuffledp.Accountant().get_delta(1.0) == 0.0  # nothing composed
    assert shuffledp.Accountant().get_epsilon(1e-5) == 0.0


def test_accountant_errors():
    acct = shuffledp.Accountant().compose(shuffledp.ShuffleEvent(n=100, eps0=1), 2)
    with pytest.raises(shuffledp.ShuffleDPError, match=r"^delta must be in \(0,1\), got 0$"):
        acct.get_epsilon(0)
    with pytest.raises(shuffledp.ShuffleDPError, match="epsilon must be a finite number >= 0, got -1"):
        acct.get_delta(-1)
    with pytest.raises(shuffledp.ShuffleDPError, match="count must be an integer >= 0"):
        acct.compose(shuffledp.ShuffleEvent(n=100, eps0=1), -1)
    with pytest.raises(shuffledp.ShuffleDPError, match='^bound "nope" does not apply'):
        shuffledp.Accountant(bound="nope").compose(shuffledp.ShuffleEvent(n=100, eps0=1), 1).get_epsilon(1e-5)
    with pytest.raises(shuffledp.ShuffleDPError, match="lower bound"):
        shuffledp.Accountant(bound="ccs21-lower").compose(shuffledp.ShuffleEvent(n=100, eps0=1), 1).get_delta(1)
    with pytest.raises(TypeError):
        acct.compose("shuffle", 1)  # type: ignore[arg-type]
    with pytest.raises(shuffledp.ShuffleDPError, match='unknown method "nope"'):
        _lib.call("nope", "{}")


def test_event_bounds():
    assert "ccs21-upper2" in shuffledp.ShuffleEvent(n=100, eps0=1).bounds()
    assert "iclr23-thm1" in shuffledp.ShuffleGaussianEvent(n=100, sigma=1).bounds()
