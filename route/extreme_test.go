package route

import (
	"testing"

	"github.com/shuffledp/shuffledp/event"
)

// TestExtremePLDAndCertified: at n = 1e9, k = 100, eps0 = 8, T = 1e6,
// delta = 1e-12 the PLD route answers (it used to fail: the FFT's
// round-off bound was above delta) and wins best, below clones-rdp
// (0.04865) and inside dp_accounting's [0.0450, 0.0468] for the same
// pair; the certified interval exists (its lower end, the witnesses'
// optimistic PLDs, never fails for mass at +inf).
func TestExtremePLDAndCertified(t *testing.T) {
	events := []event.Composed{{Event: event.Event{Mechanism: event.SubsampledShuffle, N: 1e9, K: 100, Eps0: 8}, Count: 1e6}}
	const delta = 1e-12
	p, err := PLD(events, delta)
	if err != nil {
		t.Fatal(err)
	}
	if !(p.Lower <= p.Upper) || p.Lower < 0.0450 || p.Upper > 0.0468 {
		t.Errorf("PLD interval [%v, %v] not inside [0.0450, 0.0468]", p.Lower, p.Upper)
	}
	c, err := CertifiedInterval(events, delta)
	if err != nil {
		t.Fatal(err)
	}
	if c.UpperRoute != RoutePLD || c.Upper != p.Upper || !(c.Lower > 0 && c.Lower <= c.Upper) {
		t.Errorf("certified %+v, PLD upper %v", c, p.Upper)
	}
}

// TestBestMemoCopies: a memoised Best returns the same numbers, and its
// slices are the caller's own.
func TestBestMemoCopies(t *testing.T) {
	events := []event.Composed{{Event: event.Event{Mechanism: event.SubsampledShuffle, N: 1e4, K: 100, Eps0: 1}, Count: 50}}
	a, err := Best(events, 1e-6, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Routes[0].Epsilon = -1
	b, err := Best(events, 1e-6, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Routes[0].Epsilon < 0 || b.Epsilon != a.Epsilon || len(b.Routes) != len(a.Routes) {
		t.Errorf("second Best %+v after the first's slice was changed", b)
	}
	if k1, k2 := memoKey(events, 1e-6, nil), memoKey(events, 1e-6*(1+1e-15), nil); k1 == k2 {
		t.Errorf("memoKey does not tell delta %v from the next float", 1e-6)
	}
}
