package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/telemetry"
)

// serveMetrics serves reg's Prometheus metrics at http://ADDR/metrics until
// ctx is done, when addr is set (--metrics-listen), writing the address to
// addrFile (if set) and a line to w. It returns a function waiting for the
// HTTP server to stop.
func serveMetrics(ctx context.Context, role, addr, addrFile string, reg *prometheus.Registry, w io.Writer) (func(), error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics-listen: %w", err)
	}
	if err := node.WriteAddr(addrFile, ln.Addr().String()); err != nil {
		ln.Close()
		return nil, err
	}
	fmt.Fprintf(w, "%s: Prometheus metrics at http://%s/metrics\n", role, ln.Addr())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := telemetry.Serve(ctx, ln, reg); err != nil {
			fmt.Fprintf(w, "%s: metrics: %v\n", role, err)
		}
	}()
	return func() { <-done }, nil
}

// metricsListenUsage is the help of --metrics-listen.
const metricsListenUsage = "serve Prometheus metrics at http://`ADDR`/metrics (e.g. 127.0.0.1:9090; empty: off). Counts, sizes, latencies and the ledger's epsilon only: no client identity, no report"
