// Package telemetry exposes the shuffler's and the server's operational
// figures as Prometheus metrics (github.com/prometheus/client_golang):
// rounds, reports accepted and rejected by reason, batch sizes, the epsilon
// spent and round latency.
//
// The metrics carry no client identity, no report content and no per-client
// label; the epsilon gauges mirror the ledgers, which are public to the
// analyst; rejection reasons are a closed set of labels, so a client cannot
// inflate the metrics' cardinality. One figure is not for everyone: the
// shuffler's dummy count (shuffledp_shuffler_dummy_reports_total) is for
// the shuffler's operator only, since a published dummy count breaks
// privacy (docs/proofs/dummy-reports.md); the shuffler command keeps its
// metrics on loopback unless told otherwise (dashboard.CheckOperatorAddr).
// The gauges of the target epsilon, delta, round deadline and last round's
// time serve the alert rules of deploy/rules.yml.
package telemetry
