// Package telemetry exposes the shuffler's and the server's operational
// figures as Prometheus metrics (github.com/prometheus/client_golang):
// rounds, reports accepted and rejected by reason, batch sizes, the epsilon
// spent and round latency.
//
// Nothing here is privacy-relevant by construction. The shuffler's metrics
// are counts and sizes it already knows and that the server also sees (every
// released batch's size); they carry no client identity, no report content
// and no per-client label. The epsilon gauge mirrors the ledger, which is
// public to the analyst. Rejection reasons are a closed set of labels, so a
// client cannot inflate the metric's cardinality.
package telemetry
