// Package dashboard serves a live page of one role of a networked run: the
// run's configuration, rounds released against planned, the ledger's epsilon
// (at the run's delta) against its target over rounds, the evaluated
// accuracy, the time of every round, the last errors, and — on the
// shuffler's page only — the dummy reports of every round and the connected
// clients. The page is one HTML file with its script and style sheet,
// embedded in the binary (no external asset: a strict Content-Security-Policy
// forbids any other origin); it follows the role's figures live through
// server-sent events (GET /events) and reads them once from GET /state.
//
// What a page may show is fixed by its type. A ServerBoard is fed what the
// server already knows — batch sizes, its own evaluation, the epsilon of its
// own ledger of released batches, its own errors — and has no method that
// takes a dummy count, a delivery status, a sampled client or anything per
// client: the server never learns them (docs/security-model.md). A
// ShufflerBoard also shows the dummy reports per round and the connected
// clients, which are the shuffler's own: a published dummy count breaks
// privacy (docs/proofs/dummy-reports.md, the dummy-count control), so the
// shuffler's page is for the shuffler's operator only, and CheckOperatorAddr
// refuses to bind it (or the shuffler's Prometheus metrics, which carry the
// same count) beyond loopback unless the operator acknowledges it.
//
// Every board's memory is bounded: at most MaxPoints points per series
// (older points are thinned, keeping every other one) and MaxErrors errors
// (consecutive repeats of one message are counted, not stored again), so
// nothing a peer can trigger grows it without bound.
package dashboard

import (
	"encoding/json"
	"math"
	"sync"
	"time"
)

// MaxPoints bounds the points kept per series; MaxErrors the errors kept.
const (
	MaxPoints = 2000
	MaxErrors = 20
)

// Role names a page's role.
const (
	RoleServer   = "server"
	RoleShuffler = "shuffler"
)

// Field is one line of the run's configuration as the page shows it.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Round is one released round.
type Round struct {
	// Round is the round's number: the server's rounds applied (counting
	// this one), or the shuffler's ledger rounds after its debit.
	Round int `json:"round"`
	// Seconds is the round's wall time: on the server, to open, aggregate
	// and apply the batch; on the shuffler, from relaying the round to
	// forwarding its batch.
	Seconds float64 `json:"seconds"`
	// Reports is the batch size (dummies included on the shuffler, which
	// the server cannot tell apart).
	Reports int `json:"reports"`
	// Epsilon is the ledger's epsilon after this round's debit (shuffler;
	// nil on the server, whose epsilon comes with its evaluations).
	Epsilon *float64 `json:"epsilon,omitempty"`
	// EpsilonText is Epsilon printed rounded up (internal/directed).
	EpsilonText string `json:"epsilon_text,omitempty"`
	// Dummies and Connected are the shuffler's own figures: dummy reports
	// in the batch and clients registered at the release. Never set on a
	// server's page.
	Dummies   *int `json:"dummies,omitempty"`
	Connected *int `json:"connected,omitempty"`
}

// Eval is one evaluation of the server's model.
type Eval struct {
	Round        int      `json:"round"`
	Accuracy     *float64 `json:"accuracy"`
	AccuracyEMA  *float64 `json:"accuracy_ema,omitempty"`
	Epsilon      *float64 `json:"epsilon"`
	EpsilonText  string   `json:"epsilon_text,omitempty"` // rounded up
	LedgerRounds *int64   `json:"ledger_rounds,omitempty"`
}

// Error is one error of the role: a refused batch or report, a discarded
// round, ... (Count > 1: repeated that many times in a row; Time is the
// last).
type Error struct {
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
	Count   int       `json:"count"`
}

// State is what the page shows: GET /state, and every server-sent event.
type State struct {
	Role   string  `json:"role"`
	Config []Field `json:"config"`
	// Planned is the run's planned rounds (0: unknown to this role).
	Planned int `json:"planned"`
	// Released counts the rounds released: the server's rounds applied,
	// the shuffler's ledger rounds.
	Released int `json:"released"`
	// Epsilon is the ledger's last epsilon at Delta (nil before any);
	// TargetEpsilon the run's target (0: none).
	Epsilon *float64 `json:"epsilon"`
	// EpsilonText is Epsilon printed as every epsilon is (rounded up,
	// internal/directed; "" when nil): the page shows it, not Epsilon.
	EpsilonText string `json:"epsilon_text,omitempty"`
	// EpsilonLabel names the statement (metrics.Label: the bound, the
	// route attaining it, CONJECTURE when it rests on one).
	EpsilonLabel  string  `json:"epsilon_label,omitempty"`
	Delta         float64 `json:"delta"`
	TargetEpsilon float64 `json:"target_epsilon"`
	// LedgerRounds are the rounds that epsilon accounts for.
	LedgerRounds int64 `json:"ledger_rounds"`
	// EvalSet is "validation" when the accuracies are of a held-out split.
	EvalSet string  `json:"eval_set,omitempty"`
	Rounds  []Round `json:"rounds"`
	Evals   []Eval  `json:"evals"`
	Errors  []Error `json:"errors"`
	// DummiesTotal and Connected are the shuffler's own (nil on a server's
	// page): the dummies of every round released by this process, and the
	// clients registered now.
	DummiesTotal *int64 `json:"dummies_total,omitempty"`
	Connected    *int   `json:"connected,omitempty"`
	// Status is "running" or how the run ended.
	Status  string    `json:"status"`
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
	Version uint64    `json:"version"`
}

// Config is a page's fixed part: the run's configuration.
type Config struct {
	// Fields are shown in order.
	Fields []Field
	// Planned is the run's planned rounds (0: unknown).
	Planned int
	// Delta and TargetEpsilon are the ledger's (TargetEpsilon 0: none).
	Delta, TargetEpsilon float64
}

// board is the state both pages share and its change notification.
type board struct {
	mu      sync.Mutex
	st      State
	changed chan struct{} // closed and replaced at every change
	closed  chan struct{} // closed by Close: streams send the last state and end
	once    sync.Once
	now     func() time.Time
}

func newBoard(role string, cfg Config) *board {
	b := &board{changed: make(chan struct{}), closed: make(chan struct{}), now: time.Now}
	t := b.now().UTC()
	b.st = State{Role: role, Config: append([]Field(nil), cfg.Fields...), Planned: cfg.Planned, Delta: cfg.Delta,
		TargetEpsilon: cfg.TargetEpsilon, Rounds: []Round{}, Evals: []Eval{}, Errors: []Error{}, Status: "running", Started: t, Updated: t}
	return b
}

// update applies f to the state under the lock and wakes the streams.
func (b *board) update(f func(*State)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(&b.st)
	b.st.Version++
	b.st.Updated = b.now().UTC()
	close(b.changed)
	b.changed = make(chan struct{})
}

// snapshot returns the state as JSON and the channel closed at its next
// change.
func (b *board) snapshot() ([]byte, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, err := json.Marshal(&b.st)
	if err != nil { // every float is finite (finite below): cannot happen
		data = []byte(`{"status":"error"}`)
	}
	return data, b.changed
}

// State returns a copy of the page's state.
func (b *board) state() State {
	data, _ := b.snapshot()
	var s State
	json.Unmarshal(data, &s)
	return s
}

func (b *board) addError(msg string) {
	b.update(func(s *State) {
		t := b.now().UTC()
		if n := len(s.Errors); n > 0 && s.Errors[n-1].Message == msg {
			s.Errors[n-1].Count++
			s.Errors[n-1].Time = t
			return
		}
		s.Errors = append(s.Errors, Error{Time: t, Message: msg, Count: 1})
		if len(s.Errors) > MaxErrors {
			s.Errors = append(s.Errors[:0], s.Errors[len(s.Errors)-MaxErrors:]...)
		}
	})
}

func (b *board) setStatus(status string) {
	b.update(func(s *State) { s.Status = status })
}

// close marks the board closed: every open stream sends the last state and
// ends (the HTTP server can then shut down).
func (b *board) close() { b.once.Do(func() { close(b.closed) }) }

// thin keeps every other element of a series past MaxPoints (the last one
// always kept), so a long run's page stays bounded and still spans the run.
func thin[T any](xs []T) []T {
	if len(xs) <= MaxPoints {
		return xs
	}
	last := xs[len(xs)-1]
	out := xs[:0]
	for i := 0; i < len(xs)-1; i += 2 {
		out = append(out, xs[i])
	}
	return append(out, last)
}

// finite returns &x, or nil for NaN and ±Inf (which JSON cannot carry; the
// page shows them as unknown, never as a number).
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func finitePtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	return finite(*p)
}
