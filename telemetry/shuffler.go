package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every metric name.
const Namespace = "shuffledp"

// ShufflerMetrics are the shuffler role's metrics. All methods are safe for
// concurrent use; a nil *ShufflerMetrics ignores every call, so a role can
// run without metrics.
type ShufflerMetrics struct {
	roundsReleased  prometheus.Counter
	roundsDiscarded *prometheus.CounterVec
	reportsAccepted prometheus.Counter
	reportsRejected *prometheus.CounterVec
	batchSize       prometheus.Histogram
	epsilonSpent    prometheus.Gauge
	roundsDebited   prometheus.Gauge
	roundLatency    prometheus.Histogram
	dummies         prometheus.Counter
	lastRelease     prometheus.Gauge
	roundTimeout    prometheus.Gauge
	targetEpsilon   prometheus.Gauge
	delta           prometheus.Gauge
}

// NewShufflerMetrics creates the shuffler's metrics and registers them on
// reg. The rejection and discard counters start at zero for every label.
func NewShufflerMetrics(reg prometheus.Registerer) (*ShufflerMetrics, error) {
	m := &ShufflerMetrics{
		roundsReleased: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "rounds_released_total",
			Help: "Rounds whose batch was debited on the ledger and forwarded to the server.",
		}),
		roundsDiscarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "rounds_discarded_total",
			Help: "Rounds discarded without release, by reason (nothing forwarded).",
		}, []string{"reason"}),
		reportsAccepted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "reports_accepted_total",
			Help: "Sealed reports accepted into a round.",
		}),
		reportsRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "reports_rejected_total",
			Help: "Reports refused, by reason.",
		}, []string{"reason"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "batch_size",
			Help:    "Reports per released batch.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10),
		}),
		epsilonSpent: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "epsilon_spent",
			Help: "Epsilon the ledger reports after the last debit (an upper bound at the run's delta).",
		}),
		roundsDebited: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "ledger_rounds",
			Help: "Rounds recorded on the ledger.",
		}),
		roundLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "round_seconds",
			Help:    "Seconds from opening a round to forwarding its batch.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
		}),
		dummies: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "dummy_reports_total",
			Help: "Dummy reports released in the place of sampled clients that did not deliver by the deadline (the shuffler's own count; never sent to the server).",
		}),
		lastRelease: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "last_release_timestamp_seconds",
			Help: "Unix time of the last released round (the process's start before any): a stalled run is one whose value stops moving.",
		}),
		roundTimeout: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "round_timeout_seconds",
			Help: "The round's deadline (--round-timeout): no round takes longer once its clients are connected.",
		}),
		targetEpsilon: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "target_epsilon",
			Help: "The target epsilon the ledger debits against (0: none); epsilon_spent / target_epsilon is the share of the budget spent.",
		}),
		delta: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "shuffler", Name: "delta",
			Help: "The delta at which epsilon_spent is stated.",
		}),
	}
	m.lastRelease.SetToCurrentTime()
	for _, r := range ReportReasons {
		m.reportsRejected.WithLabelValues(string(r))
	}
	for _, r := range RoundReasons {
		m.roundsDiscarded.WithLabelValues(string(r))
	}
	for _, c := range []prometheus.Collector{m.roundsReleased, m.roundsDiscarded, m.reportsAccepted,
		m.reportsRejected, m.batchSize, m.epsilonSpent, m.roundsDebited, m.roundLatency, m.dummies,
		m.lastRelease, m.roundTimeout, m.targetEpsilon, m.delta} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ReportAccepted counts one accepted report.
func (m *ShufflerMetrics) ReportAccepted() {
	if m != nil {
		m.reportsAccepted.Inc()
	}
}

// ReportRejected counts one refused report under reason.
func (m *ShufflerMetrics) ReportRejected(reason Reason) {
	if m != nil {
		m.reportsRejected.WithLabelValues(string(checkReason(reason, ReportReasons))).Inc()
	}
}

// ReportsRejected counts n refused reports under reason.
func (m *ShufflerMetrics) ReportsRejected(reason Reason, n int64) {
	if m != nil && n > 0 {
		m.reportsRejected.WithLabelValues(string(checkReason(reason, ReportReasons))).Add(float64(n))
	}
}

// RoundReleased records a forwarded batch: its size, the time since the
// round was opened, and the ledger's epsilon and round count after the debit.
func (m *ShufflerMetrics) RoundReleased(batch int, latency time.Duration, epsilon float64, ledgerRounds int) {
	if m == nil {
		return
	}
	m.roundsReleased.Inc()
	m.lastRelease.SetToCurrentTime()
	m.batchSize.Observe(float64(batch))
	m.roundLatency.Observe(latency.Seconds())
	m.Ledger(epsilon, ledgerRounds)
}

// Dummies counts n dummy reports released in one batch.
func (m *ShufflerMetrics) Dummies(n int) {
	if m != nil && n > 0 {
		m.dummies.Add(float64(n))
	}
}

// Budget sets the gauges of the run's accounting and deadline: the round
// timeout, the ledger's target epsilon (0: none) and its delta.
func (m *ShufflerMetrics) Budget(roundTimeout time.Duration, targetEpsilon, delta float64) {
	if m == nil {
		return
	}
	m.roundTimeout.Set(roundTimeout.Seconds())
	m.targetEpsilon.Set(targetEpsilon)
	m.delta.Set(delta)
}

// Ledger sets the epsilon and round gauges (e.g. on start-up from the
// durable ledger, before any round of this process).
func (m *ShufflerMetrics) Ledger(epsilon float64, ledgerRounds int) {
	if m == nil {
		return
	}
	m.epsilonSpent.Set(epsilon)
	m.roundsDebited.Set(float64(ledgerRounds))
}

// RoundDiscarded counts a round dropped without release under reason.
func (m *ShufflerMetrics) RoundDiscarded(reason Reason) {
	if m != nil {
		m.roundsDiscarded.WithLabelValues(string(checkReason(reason, RoundReasons))).Inc()
	}
}

// checkReason keeps the label set closed: an unknown reason is "other".
func checkReason(r Reason, allowed []Reason) Reason {
	for _, a := range allowed {
		if r == a {
			return r
		}
	}
	return ReasonOther
}
