package deploy

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/telemetry"
)

// ServeMetrics serves reg's Prometheus metrics at http://ADDR/metrics until
// ctx is done, when addr is set (--metrics-listen), writing the address to
// addrFile (if set) and a line naming role to w. It returns a function
// waiting for the HTTP server to stop.
func ServeMetrics(ctx context.Context, role, addr, addrFile string, reg *prometheus.Registry, w io.Writer) (func(), error) {
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
