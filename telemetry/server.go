package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ServerMetrics are the server role's metrics. The server sees released
// batches only, never identities; a nil *ServerMetrics ignores every call.
type ServerMetrics struct {
	rounds          prometheus.Counter
	batchesRejected *prometheus.CounterVec
	reportsOpened   prometheus.Counter
	reportsRejected *prometheus.CounterVec
	batchSize       prometheus.Histogram
	stepLatency     prometheus.Histogram
	accuracy        *prometheus.GaugeVec
	lastRound       prometheus.Gauge
	epsilonSpent    prometheus.Gauge
	targetEpsilon   prometheus.Gauge
	delta           prometheus.Gauge
}

// NewServerMetrics creates the server's metrics and registers them on reg.
func NewServerMetrics(reg prometheus.Registerer) (*ServerMetrics, error) {
	m := &ServerMetrics{
		rounds: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "server", Name: "rounds_total",
			Help: "Batches aggregated into a model step.",
		}),
		batchesRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "server", Name: "batches_rejected_total",
			Help: "Batches refused (repeated report id, mixed key ids, wrong round, ...), by reason.",
		}, []string{"reason"}),
		reportsOpened: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "server", Name: "reports_opened_total",
			Help: "Reports decrypted and decoded.",
		}),
		reportsRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "server", Name: "reports_rejected_total",
			Help: "Reports that did not open or decode, by reason.",
		}, []string{"reason"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "server", Name: "batch_size",
			Help:    "Reports per aggregated batch.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10),
		}),
		stepLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "server", Name: "round_seconds",
			Help:    "Seconds to open, aggregate and apply one batch.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
		}),
		accuracy: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "server", Name: "test_accuracy",
			Help: "Last evaluated test accuracy, of the raw and the averaged (EMA) parameters.",
		}, []string{"params"}),
		lastRound: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "server", Name: "last_round_timestamp_seconds",
			Help: "Unix time of the last batch applied (the process's start before any): a stalled run is one whose value stops moving.",
		}),
		epsilonSpent: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "server", Name: "epsilon_spent",
			Help: "Epsilon of the server's ledger of released batches at the last evaluation (an upper bound at delta).",
		}),
		targetEpsilon: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "server", Name: "target_epsilon",
			Help: "The run's target epsilon (0: none); epsilon_spent / target_epsilon is the share of the budget spent.",
		}),
		delta: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "server", Name: "delta",
			Help: "The delta at which epsilon_spent is stated.",
		}),
	}
	m.lastRound.SetToCurrentTime()
	for _, r := range ReportReasons {
		m.reportsRejected.WithLabelValues(string(r))
	}
	for _, r := range BatchReasons {
		m.batchesRejected.WithLabelValues(string(r))
	}
	for _, c := range []prometheus.Collector{m.rounds, m.batchesRejected, m.reportsOpened,
		m.reportsRejected, m.batchSize, m.stepLatency, m.accuracy, m.lastRound, m.epsilonSpent, m.targetEpsilon, m.delta} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// RoundAggregated records one batch turned into a model step.
func (m *ServerMetrics) RoundAggregated(batch int, latency time.Duration) {
	if m == nil {
		return
	}
	m.rounds.Inc()
	m.lastRound.SetToCurrentTime()
	m.reportsOpened.Add(float64(batch))
	m.batchSize.Observe(float64(batch))
	m.stepLatency.Observe(latency.Seconds())
}

// BatchRejected counts a whole batch refused under reason.
func (m *ServerMetrics) BatchRejected(reason Reason) {
	if m != nil {
		m.batchesRejected.WithLabelValues(string(checkReason(reason, BatchReasons))).Inc()
	}
}

// ReportRejected counts one report that did not open or decode.
func (m *ServerMetrics) ReportRejected(reason Reason) {
	if m != nil {
		m.reportsRejected.WithLabelValues(string(checkReason(reason, ReportReasons))).Inc()
	}
}

// Budget sets the run's target epsilon (0: none) and delta.
func (m *ServerMetrics) Budget(targetEpsilon, delta float64) {
	if m != nil {
		m.targetEpsilon.Set(targetEpsilon)
		m.delta.Set(delta)
	}
}

// Epsilon sets the epsilon of the last evaluation.
func (m *ServerMetrics) Epsilon(eps float64) {
	if m != nil {
		m.epsilonSpent.Set(eps)
	}
}

// Accuracy sets the last evaluated accuracy; params is "raw" or "ema".
func (m *ServerMetrics) Accuracy(params string, acc float64) {
	if m == nil {
		return
	}
	if params != "ema" {
		params = "raw"
	}
	m.accuracy.WithLabelValues(params).Set(acc)
}
