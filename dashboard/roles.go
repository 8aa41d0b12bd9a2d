package dashboard

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/shuffledp/shuffledp/internal/directed"
	"github.com/shuffledp/shuffledp/metrics"
)

// ServerBoard is the server's page. It takes only what the server knows:
// the batches it applied (their size and time), its evaluations (accuracy,
// and the epsilon of its ledger of released batches) and its own errors. It
// has no method for a dummy count, a sampled client or any per-client
// figure. A nil *ServerBoard ignores every call.
type ServerBoard struct{ b *board }

// NewServer returns the server's page for a run configured as cfg.
func NewServer(cfg Config) *ServerBoard { return &ServerBoard{newBoard(RoleServer, cfg)} }

// RoundApplied records the round-th batch applied: reports opened and
// averaged, refused the reports left out (not opened or decoded), in d.
func (s *ServerBoard) RoundApplied(round, reports, refused int, d time.Duration) {
	if s == nil {
		return
	}
	s.b.update(func(st *State) {
		st.Released = round
		st.Rounds = thin(append(st.Rounds, Round{Round: round, Seconds: d.Seconds(), Reports: reports}))
	})
	if refused > 0 {
		s.b.addError(fmt.Sprintf("round %d: %d reports did not open or decode and were left out", round, refused))
	}
}

// Evaluated records an evaluation record of the run (what the metrics file
// gets): its accuracies and the ledger's epsilon at the run's delta.
func (s *ServerBoard) Evaluated(rec metrics.Record) {
	if s == nil {
		return
	}
	infinite := rec.Epsilon != nil && math.IsInf(*rec.Epsilon, 1)
	s.b.update(func(st *State) {
		e := Eval{Round: rec.Round, Accuracy: finitePtr(rec.TestAccuracy), AccuracyEMA: finitePtr(rec.TestAccuracyEMA),
			Epsilon: finitePtr(rec.Epsilon), LedgerRounds: rec.LedgerRounds}
		e.EpsilonText = epsilonText(e.Epsilon)
		st.Evals = thin(append(st.Evals, e))
		if rec.Round > st.Released {
			st.Released = rec.Round
		}
		st.Epsilon, st.EpsilonText, st.Delta, st.EvalSet = e.Epsilon, e.EpsilonText, rec.Delta, rec.EvalSet
		st.EpsilonLabel = rec.Label()
		if rec.LedgerRounds != nil {
			st.LedgerRounds = *rec.LedgerRounds
		}
	})
	if infinite {
		s.b.addError(fmt.Sprintf("round %d: the ledger's epsilon is infinite (no finite bound)", rec.Round))
	}
}

// Error records an error of the server (a refused batch, ...).
func (s *ServerBoard) Error(msg string) {
	if s != nil {
		s.b.addError(msg)
	}
}

// Status sets how the run stands ("running", or how it ended).
func (s *ServerBoard) Status(status string) {
	if s != nil {
		s.b.setStatus(status)
	}
}

// State returns a copy of what the page shows.
func (s *ServerBoard) State() State { return s.b.state() }

// Handler serves the page (GET /), its assets, GET /state and GET /events.
func (s *ServerBoard) Handler() http.Handler { return handler(s.b) }

// Close ends every open event stream after it sent the last state.
func (s *ServerBoard) Close() {
	if s != nil {
		s.b.close()
	}
}

// ShufflerBoard is the shuffler's page: its ledger, the rounds it released
// with their dummy reports, the clients connected, its rejections and
// discarded rounds. For the shuffler's operator only (CheckOperatorAddr).
// A nil *ShufflerBoard ignores every call.
type ShufflerBoard struct{ b *board }

// NewShuffler returns the shuffler's page with its own configuration (its
// flags); Configure adds the run's once the server published it.
func NewShuffler(cfg Config) *ShufflerBoard {
	b := newBoard(RoleShuffler, cfg)
	var zero int64
	b.st.DummiesTotal = &zero
	return &ShufflerBoard{b}
}

// Configure appends the run's configuration (as the server published it)
// and sets the ledger's target epsilon.
func (s *ShufflerBoard) Configure(fields []Field, targetEpsilon float64) {
	if s == nil {
		return
	}
	s.b.update(func(st *State) {
		st.Config = append(st.Config, fields...)
		st.TargetEpsilon = targetEpsilon
	})
}

// Ledger sets the ledger's epsilon and rounds (at start, from the durable
// ledger).
func (s *ShufflerBoard) Ledger(epsilon float64, rounds int64) {
	if s == nil {
		return
	}
	s.b.update(func(st *State) {
		st.Epsilon, st.LedgerRounds, st.Released = finite(epsilon), rounds, int(rounds)
		st.EpsilonText = epsilonText(st.Epsilon)
	})
}

// EpsilonLabel sets the name of the ledger's statement
// (ledger.Statement.Label) shown beside its epsilon.
func (s *ShufflerBoard) EpsilonLabel(label string) {
	if s == nil {
		return
	}
	s.b.update(func(st *State) { st.EpsilonLabel = label })
}

// Released records a released round: its batch of reports (dummies of
// them dummy reports), the clients connected, its time from relay to
// forward, and the ledger's epsilon and rounds after its debit.
func (s *ShufflerBoard) Released(reports, dummies, connected int, d time.Duration, epsilon float64, ledgerRounds int64) {
	if s == nil {
		return
	}
	s.b.update(func(st *State) {
		dm, cn := dummies, connected
		st.Rounds = thin(append(st.Rounds, Round{Round: int(ledgerRounds), Seconds: d.Seconds(), Reports: reports,
			Epsilon: finite(epsilon), EpsilonText: epsilonText(finite(epsilon)), Dummies: &dm, Connected: &cn}))
		st.Epsilon, st.LedgerRounds, st.Released = finite(epsilon), ledgerRounds, int(ledgerRounds)
		st.EpsilonText = epsilonText(st.Epsilon)
		total := *st.DummiesTotal + int64(dummies)
		st.DummiesTotal, st.Connected = &total, &cn
	})
	if math.IsInf(epsilon, 1) {
		s.b.addError(fmt.Sprintf("ledger round %d: the ledger's epsilon is infinite (no finite bound)", ledgerRounds))
	}
}

// Connected sets the number of clients registered now.
func (s *ShufflerBoard) Connected(n int) {
	if s == nil {
		return
	}
	s.b.update(func(st *State) { st.Connected = &n })
}

// Error records an error of the shuffler: a discarded round, a burst of
// rejected reports (by reason: never a client's identity), ...
func (s *ShufflerBoard) Error(msg string) {
	if s != nil {
		s.b.addError(msg)
	}
}

// Status sets how the run stands ("running", or how it ended).
func (s *ShufflerBoard) Status(status string) {
	if s != nil {
		s.b.setStatus(status)
	}
}

// State returns a copy of what the page shows.
func (s *ShufflerBoard) State() State { return s.b.state() }

// Handler serves the page (GET /), its assets, GET /state and GET /events.
func (s *ShufflerBoard) Handler() http.Handler { return handler(s.b) }

// Close ends every open event stream after it sent the last state.
func (s *ShufflerBoard) Close() {
	if s != nil {
		s.b.close()
	}
}

// Configure sets the page's configuration once the run is known (the
// server's flags and state directory are read after its page is created).
func (s *ServerBoard) Configure(cfg Config) {
	if s == nil {
		return
	}
	s.b.update(func(st *State) {
		st.Config = append([]Field(nil), cfg.Fields...)
		st.Planned, st.Delta, st.TargetEpsilon = cfg.Planned, cfg.Delta, cfg.TargetEpsilon
	})
}

// epsilonText prints an epsilon as every table does: rounded up at six
// digits (directed.Upper), "" for none.
func epsilonText(eps *float64) string {
	if eps == nil {
		return ""
	}
	return directed.Upper(*eps, directed.Digits)
}
