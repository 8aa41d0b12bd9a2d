package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/pki"
	"github.com/shuffledp/shuffledp/telemetry"
)

// ClientProcess configures RunClients: a pool of clients of a networked
// run as `shuffledp client` runs it.
type ClientProcess struct {
	// Clients is the range LO:HI of clients the process hosts,
	// Credentials their credentials file (pki enrol), PKI the client
	// bundle.
	Clients     string `flag:"clients" metavar:"LO:HI" usage:"the clients LO:HI this process hosts (each holds its examples of the run's partition: by default client i holds training example i)"`
	Credentials string `flag:"credentials" metavar:"FILE" usage:"the clients' credentials FILE (shuffledp pki enrol)"`
	PKI         string `flag:"pki" metavar:"DIR" usage:"the client bundle DIR (DIR/client of shuffledp pki init: ca.pem, client.pem, client.key)"`
	// MetricsListen serves the process's health only (Go runtime and
	// process metrics: how often a pool's clients are sampled is who was
	// sampled); "" for off.
	MetricsListen   string `flag:"metrics-listen" metavar:"ADDR" usage:"serve this process's health (Go runtime and process metrics only: no per-round figure, since how often a pool's clients are sampled is who was sampled) at http://ADDR/metrics (empty: off)"`
	MetricsAddrFile string `flag:"metrics-addr-file,hidden" metavar:"FILE" usage:"write the metrics address to this FILE"`
	// Pool is the pool's configuration; RunClients sets its range, TLS
	// and credentials.
	Pool node.ClientPoolConfig
	// Stderr hears the process's own lines (what the pool did).
	Stderr io.Writer
}

// RunClients checks p, loads the credentials and the bundle, and runs the
// pool until the run ends or ctx is cancelled; then it prints what the
// pool did. Errors name the flags.
func RunClients(ctx context.Context, p ClientProcess) error {
	switch {
	case p.Pool.Shuffler == "" || p.Pool.Server == "":
		return errors.New("shuffler and server are required: their ADDRs")
	case p.PKI == "":
		return errors.New("pki is required: the client bundle (DIR/client of `shuffledp pki init --dir DIR`)")
	case p.Credentials == "":
		return errors.New("credentials is required: the file shuffledp pki enrol wrote for these clients")
	}
	var err error
	if p.Pool.Lo, p.Pool.Hi, err = pki.ParseRange("clients", p.Clients); err != nil {
		return err
	}
	if p.Pool.Workers < 1 {
		return fmt.Errorf("workers must be >= 1, got %d", p.Pool.Workers)
	}
	if p.Pool.Credentials, err = pki.ReadCredentials(p.Credentials); err != nil {
		return err
	}
	if p.Pool.TLS, err = pki.ClientTLS(p.PKI, pki.RoleClient); err != nil {
		return err
	}
	pool, err := node.NewClientPool(p.Pool)
	if err != nil {
		return err
	}
	mctx, mstop := context.WithCancel(context.Background())
	waitMetrics, err := ServeMetrics(mctx, "client", p.MetricsListen, p.MetricsAddrFile, telemetry.NewRegistry(), p.Stderr)
	if err != nil {
		mstop()
		return err
	}
	defer func() { mstop(); waitMetrics() }()
	err = pool.Run(ctx)
	if p.Pool.Dropout > 0 {
		fmt.Fprintf(p.Stderr, "client: %d sampled clients ignored their round (--dropout simulation)\n", pool.Dropped())
	}
	fmt.Fprintf(p.Stderr, "client: %d reports accepted by the shuffler\n", pool.Reports())
	return err
}
