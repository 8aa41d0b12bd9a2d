// Package cluster runs a whole networked shuffledp deployment on one
// machine, each role a separate OS process of the same binary on loopback
// ports: what `shuffledp up` does.
//
// Layout of the state directory DIR:
//
//	DIR/ledger.db, run.json, lock   the shuffler's state (durable ledger,
//	                                report ids); `shuffledp ledger show
//	                                --state DIR` reads it
//	DIR/server/                     the server's state (checkpoint, receipts,
//	                                its record of released batches, HPKE key)
//	DIR/metrics.jsonl               the server's metrics, as train writes them
//	DIR/server.http-addr,           the dashboards' addresses (Config.Dashboard)
//	DIR/shuffler.http-addr
//	DIR/shuffler-I/                 with Config.Shards: shuffler I's state
//	                                (its ledger rows are in Config.Ledger)
//	DIR/shuffler-I-standby/         with Config.Standby: its standby's
//	DIR/pki/                        pki init's directory: operator/ (CA key,
//	                                client secret), server/, shuffler/ and
//	                                client/ bundles (each child is given its
//	                                own), the client pools' credentials in
//	                                client/
//
// A rerun with the same DIR resumes: the server from its checkpoint, the
// shuffler's round ids and budget from the ledger.
package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shuffledp/shuffledp/pki"
	"github.com/shuffledp/shuffledp/shard"
)

// Config configures Up.
type Config struct {
	// Exe is the shuffledp binary whose server, shuffler and client
	// commands are started (usually os.Executable()).
	Exe string
	// Launch, if not empty, is the command line that starts a role in
	// place of Exe: each child runs Launch[0] with Launch[1:], then the
	// role's name and flags (the Python API's launcher, whose roles are
	// package federated's: the same flags as the binary's commands).
	Launch []string
	// State is the run's state directory, created with its missing
	// parents.
	State string
	// TrainArgs are the train flags given to up, passed to the server
	// ("--name=value" each).
	TrainArgs []string
	// Clients is n; DataDir the clients' data set directory (mnist).
	Clients int
	DataDir string
	// ClientProcesses is the number of client processes (>= 1) sharing
	// the n clients; Workers the goroutines of each.
	ClientProcesses int `flag:"client-processes" default:"1" usage:"client processes sharing the clients (each hosts a contiguous range)"`
	Workers         int
	// RoundTimeout is passed to the shuffler (0: its default): every
	// round is released at this deadline, a dummy report in the place of
	// each sampled client that has not delivered.
	RoundTimeout time.Duration `flag:"round-timeout" usage:"the shuffler's round deadline: every round is released this long after it was relayed, dummies for the sampled clients that have not delivered (0: the shuffler's default, 2m)"`
	// ReleaseWhenComplete is the shuffler's --release-when-complete:
	// release a round as soon as every sampled client delivered (sound
	// only if dropout is independent of the data and exchangeable across
	// clients; docs/proofs/dummy-reports.md).
	ReleaseWhenComplete bool `flag:"release-when-complete" usage:"the shuffler releases a round as soon as every sampled client delivered (sound only if dropout is independent of the data and equally likely for every client; see shuffledp shuffler --help)"`
	// MinConnected is the shuffler's --min-connected (0: all clients).
	MinConnected int `flag:"min-connected" usage:"registered clients the shuffler waits for before the first round (0: all)"`
	// Dropout is the clients' --dropout: the probability that a sampled
	// client ignores a round (a simulation of unreliable devices; 0: none).
	Dropout float64 `flag:"dropout" usage:"SIMULATION: each sampled client ignores a round with this probability (unreliable devices); its slot gets a dummy at the deadline"`
	// Delta and TargetEpsilon are the shuffler's own accounting parameters
	// (its --delta and --target-epsilon; the train flags' values): the
	// shuffler refuses a server whose run disagrees.
	Delta, TargetEpsilon float64
	// Bound is passed to the shuffler as its --bound (the train flags'
	// bound; "": the shuffler's default, best).
	Bound string
	// Adjacency is passed to the shuffler as its --adjacency (the train
	// flags' relation, so the shuffler accepts the run it is started for;
	// "": the shuffler's default).
	Adjacency string
	// Metrics serves the server's and the shuffler's Prometheus metrics on
	// loopback ports (and each client process's health metrics, its
	// address in DIR/client-LO-HI.metrics-addr); their addresses are printed to Stderr and returned
	// by MetricsAddrs.
	Metrics bool `flag:"prometheus" usage:"serve the server's and the shuffler's Prometheus metrics on loopback ports (addresses printed; see --metrics-listen of server and shuffler)"`
	// MetricsAddrs, if not nil, is called with the server's and the
	// shuffler's metrics addresses once both listen.
	MetricsAddrs func(server, shuffler string)
	// Dashboard serves the server's and the shuffler's live pages (their
	// --http) on loopback ports; their addresses are printed to Stderr and
	// written to DIR/server.http-addr and DIR/shuffler.http-addr.
	Dashboard bool `flag:"dashboard" usage:"serve the server's and the shuffler's live pages on loopback ports (addresses printed and written to DIR/server.http-addr, DIR/shuffler.http-addr; see --http of server and shuffler)"`
	// Stderr receives every child's output, each line prefixed with its
	// role.
	Stderr io.Writer
	// Env is added to the children's environment.
	Env []string
	// Shards, if > 1, runs that many shuffler shards (docs/shards.md): the
	// server with --shards, shuffler I with --shard I --shards S, its
	// state in DIR/shuffler-I/ and its ledger rows in the PostgreSQL
	// database Ledger that the shards share, and the client processes of
	// each shard reporting to its shuffler (ClientProcesses per shard,
	// rounded down, at least one). Metrics, Dashboard and MinConnected
	// are not offered with shards.
	Shards int    `flag:"shards" default:"1" usage:"shuffler shards (docs/shards.md): S shufflers, each with its clients, sharing the PostgreSQL --ledger; S must divide --clients and --sample"`
	Ledger string `flag:"ledger" metavar:"URL" usage:"the shards' shared ledger URL (postgres://...), with --shards"`
	// Standby, with Shards, starts a standby shuffler for every shard
	// (state DIR/shuffler-I-standby/) on its shard's address: it waits for
	// the shard's lease, and when the active replica exits (a crash, a
	// kill) it takes the shard over, binds the address, and the shard's
	// client processes reconnect to it. The exit of one of a shard's two
	// replicas does not end the run while the other runs; standbys still
	// waiting when the run is over are stopped.
	Standby bool `flag:"standby" usage:"with --shards: a standby shuffler per shard on its address, which takes the shard over when the active one dies"`
}

// Check refuses the values of the deployment's own flags that its
// children would refuse (or silently replace by a default), naming the
// flag, so that Up refuses them before it creates anything: --dropout
// outside [0, 1] or NaN (the client's range), a negative --round-timeout
// (the shuffler's default would replace it), --min-connected outside [0,
// clients], a negative --shards.
func (c Config) Check() error {
	switch {
	case !(c.Dropout >= 0 && c.Dropout <= 1):
		return fmt.Errorf("dropout must be in [0, 1] (a probability), got %g", c.Dropout)
	case c.RoundTimeout < 0:
		return fmt.Errorf("round-timeout must be >= 0 (0: the shuffler's default), got %v", c.RoundTimeout)
	case c.MinConnected < 0 || c.MinConnected > c.Clients:
		return fmt.Errorf("min-connected must be in [0, clients=%d] (0: all), got %d", c.Clients, c.MinConnected)
	case c.Shards < 0:
		return fmt.Errorf("shards must be >= 1, got %d", c.Shards)
	}
	return nil
}

// ErrInterrupted is returned when ctx was cancelled: every child was
// stopped, the server after checkpointing.
var ErrInterrupted = errors.New("interrupted; state saved")

// startTimeout bounds the wait for a child to listen.
const startTimeout = 2 * time.Minute

// stopGrace is how long a child may take to stop after SIGTERM/SIGINT.
const stopGrace = 30 * time.Second

// finishGrace is how long the shuffler and the clients may take to finish
// by themselves once the server has finished the run (the shuffler hears it
// on its next model request and tells the clients); those still running
// then are stopped.
const finishGrace = 10 * time.Second

// Up runs the deployment until the server finishes the run (it returns
// nil), a child fails (its error), or ctx is cancelled (ErrInterrupted,
// after the server checkpointed). Children run in their own process group,
// so a terminal's Ctrl-C reaches Up alone, which stops them in order:
// clients, shuffler, then the server. No child outlives Up: on Linux each is
// started with a parent-death signal (SIGKILL when Up's process dies, even
// by SIGKILL), and Up stops every child it started before it returns. A
// server that finds its run already finished says so and exits at once;
// Up then returns nil without starting the others.
func Up(ctx context.Context, cfg Config) error {
	if err := cfg.Check(); err != nil {
		return err // before the state directory is created
	}
	if cfg.Clients < 1 || cfg.ClientProcesses < 1 || cfg.Workers < 1 {
		return fmt.Errorf("up: clients, client processes and workers must be >= 1 (got %d, %d, %d)", cfg.Clients, cfg.ClientProcesses, cfg.Workers)
	}
	if cfg.ClientProcesses > cfg.Clients {
		cfg.ClientProcesses = cfg.Clients
	}
	if cfg.Shards > 1 {
		switch {
		case !strings.HasPrefix(strings.ToLower(cfg.Ledger), "postgres"):
			return errors.New("up: --shards needs --ledger postgres://...: the shards share one PostgreSQL ledger")
		case cfg.Metrics || cfg.Dashboard || cfg.MinConnected > 0:
			return errors.New("up: --prometheus, --dashboard and --min-connected are not offered with --shards (start the roles by hand: docs/shards.md)")
		}
	} else if cfg.Standby {
		return errors.New("up: --standby needs --shards S (S >= 2): a standby waits for its shard's lease in the shared PostgreSQL ledger")
	}
	abs, err := filepath.Abs(cfg.State)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil { // runs/x with no runs/ yet: created
		return fmt.Errorf("--state: %w", err)
	}
	pkiDir := filepath.Join(abs, "pki")
	if err := pki.Init(pkiDir, nil); err != nil {
		return fmt.Errorf("up: %w (up's certificates are its own: remove %s and up makes new ones; the run resumes from the rest of --state)", err, pkiDir)
	}
	enr, err := pki.LoadEnroller(filepath.Join(pkiDir, pki.OperatorDir))
	if err != nil {
		return err
	}
	g := &group{stderr: cfg.Stderr, env: cfg.Env, exited: make(chan *child, 8)}
	defer g.killAll()

	serverAddrFile := filepath.Join(abs, "server.addr")
	shufAddrFile := filepath.Join(abs, "shuffler.addr")
	os.Remove(serverAddrFile)
	os.Remove(shufAddrFile)
	srvMetricsFile := filepath.Join(abs, "server.metrics-addr")
	shufMetricsFile := filepath.Join(abs, "shuffler.metrics-addr")
	os.Remove(srvMetricsFile)
	os.Remove(shufMetricsFile)
	srvHTTPFile := filepath.Join(abs, "server.http-addr")
	shufHTTPFile := filepath.Join(abs, "shuffler.http-addr")
	os.Remove(srvHTTPFile)
	os.Remove(shufHTTPFile)
	srvArgs := append([]string{"server", "--listen=127.0.0.1:0", "--addr-file=" + serverAddrFile,
		"--state=" + filepath.Join(abs, "server"), "--metrics=" + filepath.Join(abs, "metrics.jsonl"), "--pki=" + filepath.Join(pkiDir, pki.RoleServer)}, cfg.TrainArgs...)
	if cfg.Metrics {
		srvArgs = append(srvArgs, "--metrics-listen=127.0.0.1:0", "--metrics-addr-file="+srvMetricsFile)
	}
	if cfg.Dashboard {
		srvArgs = append(srvArgs, "--http=127.0.0.1:0", "--http-addr-file="+srvHTTPFile)
	}
	if cfg.Shards > 1 {
		srvArgs = append(srvArgs, fmt.Sprintf("--shards=%d", cfg.Shards))
	}
	srv, err := g.start(cfg.command(), "server", srvArgs)
	if err != nil {
		return err
	}
	srvAddr, err := g.waitAddr(ctx, serverAddrFile, srv)
	if errors.Is(err, errExitedOK) {
		// The server found the run already finished (it says so) and
		// exited without listening: nothing else to start.
		return nil
	}
	if err != nil {
		return g.fail(err)
	}
	shArgs := []string{"shuffler", "--listen=127.0.0.1:0", "--addr-file=" + shufAddrFile, "--server=" + srvAddr,
		"--state=" + abs, "--pki=" + filepath.Join(pkiDir, pki.RoleShuffler), "--delta=" + strconv.FormatFloat(cfg.Delta, 'g', -1, 64),
		"--target-epsilon=" + strconv.FormatFloat(cfg.TargetEpsilon, 'g', -1, 64)}
	if cfg.Adjacency != "" {
		shArgs = append(shArgs, "--adjacency="+cfg.Adjacency)
	}
	if cfg.Bound != "" {
		shArgs = append(shArgs, "--bound="+cfg.Bound)
	}
	if cfg.Metrics {
		shArgs = append(shArgs, "--metrics-listen=127.0.0.1:0", "--metrics-addr-file="+shufMetricsFile)
	}
	if cfg.Dashboard {
		shArgs = append(shArgs, "--http=127.0.0.1:0", "--http-addr-file="+shufHTTPFile)
	}
	if cfg.RoundTimeout > 0 {
		shArgs = append(shArgs, "--round-timeout="+cfg.RoundTimeout.String())
	}
	if cfg.ReleaseWhenComplete {
		shArgs = append(shArgs, "--release-when-complete")
	}
	if cfg.MinConnected > 0 {
		shArgs = append(shArgs, fmt.Sprintf("--min-connected=%d", cfg.MinConnected))
	}
	if cfg.Shards > 1 {
		return upShards(ctx, g, cfg, abs, pkiDir, enr, srv, srvAddr, shArgs)
	}
	shuf, err := g.start(cfg.command(), "shuffler", shArgs)
	if err != nil {
		return g.fail(err)
	}
	shufAddr, err := g.waitAddr(ctx, shufAddrFile, shuf)
	if err != nil {
		return g.fail(err)
	}
	if cfg.Metrics {
		sm, err := g.waitAddr(ctx, srvMetricsFile, srv)
		if err != nil {
			return g.fail(err)
		}
		hm, err := g.waitAddr(ctx, shufMetricsFile, shuf)
		if err != nil {
			return g.fail(err)
		}
		if cfg.Stderr != nil {
			g.outMu.Lock()
			fmt.Fprintf(cfg.Stderr, "up: Prometheus metrics: server http://%s/metrics, shuffler http://%s/metrics\n", sm, hm)
			g.outMu.Unlock()
		}
		if cfg.MetricsAddrs != nil {
			cfg.MetricsAddrs(sm, hm)
		}
	}
	if cfg.Dashboard {
		sd, err := g.waitAddr(ctx, srvHTTPFile, srv)
		if err != nil {
			return g.fail(err)
		}
		hd, err := g.waitAddr(ctx, shufHTTPFile, shuf)
		if err != nil {
			return g.fail(err)
		}
		if cfg.Stderr != nil {
			g.outMu.Lock()
			fmt.Fprintf(cfg.Stderr, "up: dashboards: server http://%s/, shuffler http://%s/ (the shuffler's page is for its operator only)\n", sd, hd)
			g.outMu.Unlock()
		}
	}
	var clients []*child
	for p := range cfg.ClientProcesses {
		lo, hi := int64(p*cfg.Clients/cfg.ClientProcesses), int64((p+1)*cfg.Clients/cfg.ClientProcesses)
		c, err := startClient(g, cfg, abs, pkiDir, enr, lo, hi, shufAddr, srvAddr)
		if err != nil {
			return g.fail(err)
		}
		clients = append(clients, c)
	}
	return runGroup(ctx, g, srv, clients, []*child{shuf}, nil)
}

// startClient enrols clients lo..hi-1 (once: their credentials file is
// kept in DIR/pki/client) and starts their client process, reporting to
// the shuffler at shufAddr.
func startClient(g *group, cfg Config, abs, pkiDir string, enr *pki.Enroller, lo, hi int64, shufAddr, srvAddr string) (*child, error) {
	credFile := filepath.Join(pkiDir, pki.RoleClient, fmt.Sprintf("clients-%d-%d.json", lo, hi))
	if _, err := os.Stat(credFile); errors.Is(err, os.ErrNotExist) {
		c, err := enr.Enrol(lo, hi)
		if err != nil {
			return nil, err
		}
		if err := pki.WriteCredentials(credFile, c); err != nil {
			return nil, err
		}
	}
	args := []string{"client", "--shuffler=" + shufAddr, "--server=" + srvAddr, fmt.Sprintf("--clients=%d:%d", lo, hi),
		"--pki=" + filepath.Join(pkiDir, pki.RoleClient), "--credentials=" + credFile, fmt.Sprintf("--workers=%d", cfg.Workers)}
	if cfg.DataDir != "" {
		args = append(args, "--data-dir="+cfg.DataDir)
	}
	if cfg.Dropout > 0 {
		args = append(args, "--dropout="+strconv.FormatFloat(cfg.Dropout, 'g', -1, 64))
	}
	if cfg.Metrics {
		args = append(args, "--metrics-listen=127.0.0.1:0", "--metrics-addr-file="+filepath.Join(abs, fmt.Sprintf("client-%d-%d.metrics-addr", lo, hi)))
	}
	return g.start(cfg.command(), fmt.Sprintf("client %d:%d", lo, hi), args)
}

// runGroup runs until the server exits (the run is over, or it failed), a
// child fails, or ctx is cancelled, and stops the others in order:
// clients, shufflers, server. With replicas (up --standby), a shuffler's
// exit is not a failure while another replica of its shard runs, and the
// standbys still waiting for their lease when the run is over are stopped
// at once.
func runGroup(ctx context.Context, g *group, srv *child, clients, shufs []*child, reps *replicas) error {
	for {
		select {
		case c := <-g.exited:
			if c == srv {
				if c.err != nil {
					g.stop(append(clients, shufs...)...)
					return fmt.Errorf("server: %w", c.err)
				}
				// The run is over: the shufflers and the clients finish by
				// themselves once told; give them a grace period. A standby
				// still waiting for its lease, or holding it only since its
				// active replica finished, would wait for ever.
				if reps != nil {
					g.stop(reps.waiting()...)
				}
				if g.waitOrStop(ctx, finishGrace, append(clients, shufs...)...) != nil {
					return ErrInterrupted
				}
				return nil
			}
			if c.err != nil && reps != nil && reps.survives(c) {
				g.logf("up: %s exited (%v); another replica of its shard goes on", c.name, c.err)
				continue
			}
			if c.err != nil {
				g.stop(clients...)
				g.stop(shufs...)
				g.stop(srv)
				return fmt.Errorf("%s: %w", c.name, c.err)
			}
		case <-ctx.Done():
			g.stop(clients...)
			g.stop(shufs...)
			g.stop(srv)
			return ErrInterrupted
		}
	}
}

// upShards starts the shufflers of a sharded run (one per shard, each its
// own state directory DIR/shuffler-I and the shared PostgreSQL ledger)
// and the client processes of each shard, then runs them with the server.
func upShards(ctx context.Context, g *group, cfg Config, abs, pkiDir string, enr *pki.Enroller, srv *child, srvAddr string, shArgs []string) error {
	var base []string
	for _, a := range shArgs {
		if !strings.HasPrefix(a, "--listen=") && !strings.HasPrefix(a, "--addr-file=") && !strings.HasPrefix(a, "--state=") {
			base = append(base, a)
		}
	}
	perShard := max(1, cfg.ClientProcesses/cfg.Shards)
	var shufs, clients []*child
	var reps *replicas
	if cfg.Standby {
		reps = &replicas{shard: map[*child]int{}, addrFile: map[*child]string{}}
	}
	// replica starts a shuffler of shard i, its state in DIR/dir, named
	// for the output's prefix.
	replica := func(i int, dir, name, listen string) (*child, string, error) {
		addrFile := filepath.Join(abs, dir+".addr")
		os.Remove(addrFile)
		args := append([]string{base[0], "--listen=" + listen, "--addr-file=" + addrFile, "--state=" + filepath.Join(abs, dir),
			"--ledger=" + cfg.Ledger, fmt.Sprintf("--shard=%d", i), fmt.Sprintf("--shards=%d", cfg.Shards)}, base[1:]...)
		sh, err := g.start(cfg.command(), name, args)
		if err != nil {
			return nil, "", err
		}
		shufs = append(shufs, sh)
		if reps != nil {
			reps.add(sh, i, addrFile)
		}
		return sh, addrFile, nil
	}
	for i := range cfg.Shards {
		sh, addrFile, err := replica(i, fmt.Sprintf("shuffler-%d", i), fmt.Sprintf("shuffler %d", i), "127.0.0.1:0")
		if err != nil {
			return g.fail(err)
		}
		addr, err := g.waitAddr(ctx, addrFile, sh)
		if err != nil {
			return g.fail(err)
		}
		g.logf("up: shuffler %d (pid %d) serves shard %d on %s", i, sh.cmd.Process.Pid, i, addr)
		if cfg.Standby {
			// The standby binds the same address once it holds the lease
			// (node.ShufflerConfig.Listen: after the shard's lease).
			sb, _, err := replica(i, fmt.Sprintf("shuffler-%d-standby", i), fmt.Sprintf("shuffler %d standby", i), addr)
			if err != nil {
				return g.fail(err)
			}
			g.logf("up: shuffler %d standby (pid %d) waits for shard %d's lease, to serve on %s", i, sb.cmd.Process.Pid, i, addr)
		}
		lo, hi := shard.ClientRange(int64(cfg.Clients), cfg.Shards, i)
		for p := range int64(perShard) {
			n := hi - lo
			c, err := startClient(g, cfg, abs, pkiDir, enr, lo+p*n/int64(perShard), lo+(p+1)*n/int64(perShard), addr, srvAddr)
			if err != nil {
				return g.fail(err)
			}
			clients = append(clients, c)
		}
	}
	return runGroup(ctx, g, srv, clients, shufs, reps)
}

// replicas are the shuffler replicas of a sharded run with standbys: each
// one's shard and address file (written once it holds the shard's lease
// and listens).
type replicas struct {
	shard    map[*child]int
	addrFile map[*child]string
}

func (r *replicas) add(c *child, shard int, addrFile string) {
	r.shard[c], r.addrFile[c] = shard, addrFile
}

// survives reports whether c, which exited, is a shuffler replica whose
// shard another running replica can serve (the standby takes the lease
// when the active replica's session ends).
func (r *replicas) survives(c *child) bool {
	i, ok := r.shard[c]
	if !ok {
		return false
	}
	for o, j := range r.shard {
		if o == c || j != i {
			continue
		}
		select {
		case <-o.done:
		default:
			return true
		}
	}
	return false
}

// waiting returns, once the run is over, the replicas still running that
// have nothing left to do: those that never held their lease (no address
// written), which would wait for ever, and those of a shard whose other
// replica finished the run cleanly (a standby that took the lease when
// its active replica exited at the end, and would wait for the server
// that is gone).
func (r *replicas) waiting() []*child {
	finished := map[int]bool{}
	for c, i := range r.shard {
		select {
		case <-c.done:
			if c.err == nil {
				finished[i] = true
			}
		default:
		}
	}
	var out []*child
	for c, f := range r.addrFile {
		select {
		case <-c.done:
			continue
		default:
		}
		if b, err := os.ReadFile(f); err != nil || !strings.HasSuffix(string(b), "\n") || finished[r.shard[c]] {
			out = append(out, c)
		}
	}
	return out
}

// child is one started process.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// group holds the started children.
type group struct {
	// stopGrace overrides stopGrace (tests; 0: stopGrace).
	stopGrace time.Duration
	stderr    io.Writer
	env       []string
	mu        sync.Mutex
	children  []*child
	exited    chan *child
	outMu     sync.Mutex
}

// command is the command line a role's name and flags follow: Launch, or
// Exe.
func (c Config) command() []string {
	if len(c.Launch) > 0 {
		return c.Launch
	}
	return []string{c.Exe}
}

func (g *group) start(command []string, name string, args []string) (*child, error) {
	cmd := exec.Command(command[0], append(append([]string(nil), command[1:]...), args...)...)
	cmd.SysProcAttr = childAttr()
	cmd.Env = append(os.Environ(), g.env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	g.mu.Lock()
	g.children = append(g.children, c)
	g.mu.Unlock()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if g.stderr != nil {
				g.outMu.Lock()
				fmt.Fprintf(g.stderr, "[%s] %s\n", name, sc.Text())
				g.outMu.Unlock()
			}
		}
		io.Copy(io.Discard, out)
	}()
	go func() {
		<-copied
		c.err = cmd.Wait()
		close(c.done)
		select {
		case g.exited <- c:
		default:
			go func() { g.exited <- c }()
		}
	}()
	return c, nil
}

// errExitedOK is waitAddr's error for a child that exited successfully
// without listening (a server whose run is already finished).
var errExitedOK = errors.New("exited successfully without listening")

// waitAddr waits for a child to write its listening address.
func (g *group) waitAddr(ctx context.Context, path string, c *child) (string, error) {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b)), nil
		}
		select {
		case <-c.done:
			if c.err == nil {
				return "", errExitedOK
			}
			return "", fmt.Errorf("%s exited before listening: %v", c.name, c.err)
		case <-ctx.Done():
			return "", ErrInterrupted
		case <-time.After(20 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("%s did not listen within %v", c.name, startTimeout)
}

// stop sends SIGINT to each child (which stops cleanly: the server
// checkpoints) and waits for it, killing it after the grace period.
func (g *group) stop(cs ...*child) {
	for _, c := range cs {
		select {
		case <-c.done:
			continue
		default:
		}
		c.cmd.Process.Signal(os.Interrupt)
	}
	killAfter(g.grace(), cs...)
}

// waitOrStop waits up to d for the children to exit by themselves; those
// still running then (or when ctx is cancelled first) are stopped (SIGINT,
// then SIGKILL after the grace period). It returns ctx.Err() if ctx was
// cancelled before they all exited.
func (g *group) waitOrStop(ctx context.Context, d time.Duration, cs ...*child) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for i, c := range cs {
		select {
		case <-c.done:
			continue
		case <-timer.C:
			g.stop(cs[i:]...)
			return nil
		case <-ctx.Done():
			g.stop(cs[i:]...)
			return ctx.Err()
		}
	}
	return nil
}

// killAfter waits up to d for the children to exit, then kills those
// still running; every child has exited when it returns.
func killAfter(d time.Duration, cs ...*child) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	expired := false
	for _, c := range cs {
		if !expired {
			select {
			case <-c.done:
				continue
			case <-timer.C:
				expired = true
			}
		}
		c.cmd.Process.Kill()
		<-c.done
	}
}

func (g *group) grace() time.Duration {
	if g.stopGrace > 0 {
		return g.stopGrace
	}
	return stopGrace
}

// logf writes one line of up's own to Stderr, between the children's.
func (g *group) logf(format string, args ...any) {
	if g.stderr == nil {
		return
	}
	g.outMu.Lock()
	defer g.outMu.Unlock()
	fmt.Fprintf(g.stderr, format+"\n", args...)
}

// fail stops every child and returns err.
func (g *group) fail(err error) error {
	g.killAll()
	return err
}

// killAll stops every child still running (SIGINT, then SIGKILL after the
// grace period).
func (g *group) killAll() {
	g.mu.Lock()
	cs := append([]*child(nil), g.children...)
	g.mu.Unlock()
	g.stop(cs...)
}
