package training

import (
	"context"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/route"
)

// TestRecordsCarryTheLedgersStatement: every metrics row's epsilon is the
// ledger's statement (the run's one number, best over every route: for a
// central DP-SGD run the PLD route, which the rows used to leave out for
// the RDP route's larger number), with its bound, route and winner; and a
// run that opts into best-conjecture has it recorded in its ledger and
// every epsilon a conjectured bound attains labelled.
func TestRecordsCarryTheLedgersStatement(t *testing.T) {
	central := baseConfig(t)
	central.Randomizer, central.Participation, central.Sigma, central.Clip = RandomizerCentralGaussian, ParticipationSample, 0.8, 0.5
	conj := baseConfig(t)
	conj.Randomizer, conj.Participation, conj.Sigma, conj.Clip = RandomizerGaussian, ParticipationSample, 0.8, 0.5
	conj.Bound = route.BoundBestConjecture
	for _, cfg := range []Config{central, conj} {
		t.Run(cfg.Randomizer+"/"+cfg.Bound, func(t *testing.T) {
			cfg.Epochs, cfg.EvalEvery = 1, 4
			tr, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), blobs(100, 10, 4, 1, 2))
			if err != nil {
				t.Fatal(err)
			}
			var recs []metrics.Record
			if _, err := tr.Run(context.Background(), Hooks{OnEval: func(r metrics.Record) error { recs = append(recs, r); return nil }}); err != nil {
				t.Fatal(err)
			}
			last := recs[len(recs)-1]
			st, err := tr.Ledger().Statement()
			if err != nil {
				t.Fatal(err)
			}
			if last.Epsilon == nil || *last.Epsilon != st.Epsilon || last.Route != st.Route || last.BoundWinner != st.Winner ||
				last.Bound != st.Bound || last.Conjecture != st.Conjecture || last.Label() != st.Label() {
				t.Errorf("last record %v %q %q %q conjecture %v, ledger %+v", last.Epsilon, last.Bound, last.Route, last.BoundWinner, last.Conjecture, st)
			}
			if info := tr.Ledger().Info(); info.Bound != cfg.Bound && !(cfg.Bound == "" && info.Bound == "best") {
				t.Errorf("ledger records bound %q, run's %q", info.Bound, cfg.Bound)
			}
			cfgV := tr.Config()
			ev := cfgV.RoundEvent()
			switch cfg.Bound {
			case "":
				best, err := route.Best([]event.Composed{{Event: ev, Count: int64(last.Round)}}, cfg.Delta, nil)
				if err != nil {
					t.Fatal(err)
				}
				rdp, err := route.Account([]event.Composed{{Event: ev, Count: int64(last.Round)}}, "", cfg.Delta, nil)
				if err != nil {
					t.Fatal(err)
				}
				if *last.Epsilon != best.Epsilon || last.Route != best.Route || last.Bound != "best" || !(best.Epsilon < rdp.Epsilon) {
					t.Errorf("central run: record %v by %s, route.Best %v by %s (RDP route %v)", *last.Epsilon, last.Route, best.Epsilon, best.Route, rdp.Epsilon)
				}
			default:
				if !last.Conjecture || !strings.Contains(last.Label(), "CONJECTURE") || !strings.Contains(last.Progress(), "CONJECTURE") {
					t.Errorf("best-conjecture run won by %q: conjecture %v, label %q, progress %q", last.BoundWinner, last.Conjecture, last.Label(), last.Progress())
				}
			}
		})
	}
}
