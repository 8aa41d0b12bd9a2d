package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shuffler"
)

func TestRejection(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Reason
	}{
		{fmt.Errorf("shuffler: round 3: %w", shuffler.ErrNotSampled), ReasonNotSampled},
		{shuffler.ErrDuplicate, ReasonDuplicate},
		{fmt.Errorf("x: %w", shuffler.ErrWrongRound), ReasonWrongRound},
		{fmt.Errorf("x: %w", shuffler.ErrReportLength), ReasonWrongLength},
		{shuffler.ErrNoRound, ReasonNoRound},
		{fmt.Errorf("open: %w", protocol.ErrUnknownKey), ReasonUnknownKey},
		{protocol.ErrEnvelope, ReasonMalformed},
		{protocol.ErrOpen, ReasonOpenFailed},
		{shuffler.ErrIncomplete, ReasonIncomplete},
		{shuffler.ErrBatchTooSmall, ReasonBatchTooSmall},
		{fmt.Errorf("debit: %w", ledger.ErrBudgetExhausted), ReasonBudgetExhausted},
		{shuffler.ErrNotDebited, ReasonNotDebited},
		{errors.New("something else"), ReasonOther},
		{nil, ReasonOther},
	} {
		if got := Rejection(tc.err); got != tc.want {
			t.Errorf("Rejection(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestShufflerMetrics(t *testing.T) {
	reg := NewRegistry()
	m, err := NewShufflerMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		m.ReportAccepted()
	}
	m.ReportRejected(ReasonReplay)
	m.ReportRejected(ReasonReplay)
	m.ReportRejected("client-chosen-label") // must not create a new series
	m.ReportsRejected(ReasonWrongKey, 3)
	m.ReportsRejected(ReasonWrongKey, 0)
	m.RoundDiscarded(ReasonIncomplete)
	before := float64(time.Now().UnixNano()) / 1e9
	m.RoundReleased(5, 20*time.Millisecond, 0.25, 7)
	m.Budget(90*time.Second, 8, 1e-5)
	if got := testutil.ToFloat64(m.lastRelease); got < before-1e-3 || got > float64(time.Now().UnixNano())/1e9+1e-3 {
		t.Errorf("last release at %v, want the release's time (after %v)", got, before)
	}
	if testutil.ToFloat64(m.roundTimeout) != 90 || testutil.ToFloat64(m.targetEpsilon) != 8 || testutil.ToFloat64(m.delta) != 1e-5 {
		t.Errorf("budget gauges %v %v %v", testutil.ToFloat64(m.roundTimeout), testutil.ToFloat64(m.targetEpsilon), testutil.ToFloat64(m.delta))
	}

	if got := testutil.ToFloat64(m.reportsAccepted); got != 5 {
		t.Errorf("accepted = %g, want 5", got)
	}
	if got := testutil.ToFloat64(m.reportsRejected.WithLabelValues("replay")); got != 2 {
		t.Errorf("replay = %g, want 2", got)
	}
	if got := testutil.ToFloat64(m.reportsRejected.WithLabelValues("other")); got != 1 {
		t.Errorf("other = %g, want 1 (unknown label folded)", got)
	}
	if got := testutil.ToFloat64(m.reportsRejected.WithLabelValues("wrong_key")); got != 3 {
		t.Errorf("wrong_key = %g, want 3", got)
	}
	if n := testutil.CollectAndCount(m.reportsRejected); n != len(ReportReasons) {
		t.Errorf("rejection series = %d, want the closed set of %d", n, len(ReportReasons))
	}
	if got := testutil.ToFloat64(m.epsilonSpent); got != 0.25 {
		t.Errorf("epsilon = %g, want 0.25", got)
	}
	if got := testutil.ToFloat64(m.roundsDebited); got != 7 {
		t.Errorf("ledger rounds = %g, want 7", got)
	}
	if got := testutil.ToFloat64(m.roundsReleased); got != 1 {
		t.Errorf("released = %g, want 1", got)
	}
	if got := testutil.ToFloat64(m.roundsDiscarded.WithLabelValues("incomplete")); got != 1 {
		t.Errorf("discarded incomplete = %g, want 1", got)
	}
	// A second registration of the same metrics is an error, not a panic.
	if _, err := NewShufflerMetrics(reg); err == nil {
		t.Error("registering twice: no error")
	}
}

func TestServerMetrics(t *testing.T) {
	reg := NewRegistry()
	m, err := NewServerMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.RoundAggregated(100, time.Second)
	m.RoundAggregated(50, time.Second)
	m.BatchRejected(ReasonDuplicate)
	m.ReportRejected(ReasonOpenFailed)
	m.Accuracy("ema", 0.9)
	m.Accuracy("anything", 0.8)
	m.Budget(7.5, 1e-6)
	m.Epsilon(6.9)
	if testutil.ToFloat64(m.epsilonSpent) != 6.9 || testutil.ToFloat64(m.targetEpsilon) != 7.5 || testutil.ToFloat64(m.delta) != 1e-6 {
		t.Errorf("server budget gauges %v %v %v", testutil.ToFloat64(m.epsilonSpent), testutil.ToFloat64(m.targetEpsilon), testutil.ToFloat64(m.delta))
	}
	if testutil.ToFloat64(m.lastRound) <= 0 {
		t.Error("last round time not set")
	}
	if got := testutil.ToFloat64(m.reportsOpened); got != 150 {
		t.Errorf("opened = %g, want 150", got)
	}
	if got := testutil.ToFloat64(m.rounds); got != 2 {
		t.Errorf("rounds = %g, want 2", got)
	}
	if got := testutil.ToFloat64(m.accuracy.WithLabelValues("raw")); got != 0.8 {
		t.Errorf("raw accuracy = %g, want 0.8", got)
	}
	if got := testutil.ToFloat64(m.batchesRejected.WithLabelValues("duplicate")); got != 1 {
		t.Errorf("batches rejected = %g, want 1", got)
	}
}

func TestNilMetricsIgnoreCalls(t *testing.T) {
	var s *ShufflerMetrics
	s.ReportAccepted()
	s.ReportRejected(ReasonReplay)
	s.RoundReleased(1, time.Second, 1, 1)
	s.RoundDiscarded(ReasonIncomplete)
	var v *ServerMetrics
	v.RoundAggregated(1, time.Second)
	v.BatchRejected(ReasonDuplicate)
	v.ReportRejected(ReasonOpenFailed)
	v.Accuracy("raw", 1)
	v.Budget(1, 1)
	v.Epsilon(1)
	s.Budget(time.Second, 1, 1)
	s.Dummies(3)
	s.Ledger(1, 1)
}

func TestServeExposition(t *testing.T) {
	reg := NewRegistry()
	m, err := NewShufflerMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.ReportRejected(ReasonUnknownKey)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, reg) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`shuffledp_shuffler_reports_rejected_total{reason="unknown_key"} 1`,
		`shuffledp_shuffler_reports_rejected_total{reason="replay"} 0`,
		"shuffledp_shuffler_epsilon_spent 0",
		"go_goroutines",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
