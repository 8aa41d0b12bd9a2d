package deploy

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"

	"github.com/shuffledp/shuffledp/dashboard"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/shuffledp/shuffledp/training"
)

// ListenHTTP binds a page's address (--http; nil listener when addr is
// empty), so that a refused address stops the start before any state is
// created.
func ListenHTTP(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	return ln, nil
}

// ServeDashboard serves page on ln (nothing when ln is nil) until ctx is
// done, writing the address to addrFile (if set) and a line naming role to
// w. It returns a function waiting for the page's event streams to send
// their last state and the HTTP server to stop.
func ServeDashboard(ctx context.Context, role string, ln net.Listener, addrFile string, page dashboard.Page, w io.Writer) (func(), error) {
	if ln == nil {
		return func() {}, nil
	}
	if err := node.WriteAddr(addrFile, ln.Addr().String()); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%s: dashboard at http://%s/\n", role, ln.Addr())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := dashboard.Serve(ctx, ln, page); err != nil {
			fmt.Fprintf(w, "%s: dashboard: %v\n", role, err)
		}
	}()
	return func() { <-done }, nil
}

// serverBoardConfig is the server page's configuration: the run as it is
// published, its rounds, delta, target and optimizer.
func serverBoardConfig(tr *training.Trainer) dashboard.Config {
	cfg := tr.Config()
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	fields := append(dashboard.RunFields(tr.RunConfig()),
		dashboard.Field{Name: "rounds", Value: strconv.Itoa(cfg.TotalRounds())},
		dashboard.Field{Name: "delta", Value: g(cfg.Delta)},
		dashboard.Field{Name: "optimizer", Value: cfg.Optimizer.String()})
	if cfg.TargetEpsilon > 0 {
		fields = append(fields, dashboard.Field{Name: "target epsilon", Value: g(cfg.TargetEpsilon)})
	}
	if cfg.ExamplesPerClient > 1 || cfg.Partition.Kind != "" && cfg.Partition.Kind != data.PartitionIndex {
		fields = append(fields, dashboard.Field{Name: "examples per client", Value: strconv.Itoa(cfg.ExamplesPerClient) + " (partition " + cfg.Partition.String() + ")"})
	}
	if cfg.ExamplesPerClient > 1 && cfg.LocalSteps <= 1 { // RunFields names it with local steps
		fields = append(fields, dashboard.Field{Name: dashboard.NeighbouringField, Value: dashboard.NeighbouringClient})
	}
	return dashboard.Config{Fields: fields, Planned: cfg.TotalRounds(), Delta: cfg.Delta, TargetEpsilon: cfg.TargetEpsilon}
}

// configureBoard gives the server's page its configuration and the
// evaluations the session's metrics file already holds (a resumed run's
// page starts from its history).
func (s *Server) configureBoard(metricsPath string) {
	if s.Board == nil {
		return
	}
	s.Board.Configure(serverBoardConfig(s.Trainer))
	if metricsPath == "" {
		metricsPath = filepath.Join(s.Session.Dir(), statedir.MetricsFile)
	}
	if recs, err := metrics.Read(metricsPath); err == nil {
		for _, rec := range recs {
			if rec.Round <= s.Done {
				s.Board.Evaluated(rec)
			}
		}
	}
}
