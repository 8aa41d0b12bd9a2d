package main

// metricsListenUsage is the help of --metrics-listen.
const metricsListenUsage = "serve Prometheus metrics at http://`ADDR`/metrics (e.g. 127.0.0.1:9090; empty: off). Counts, sizes, latencies and the ledger's epsilon only: no client identity, no report"
