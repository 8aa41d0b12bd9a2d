package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deafChildren starts n children that ignore SIGINT (as a wedged role
// would) and sleep; it returns once each has installed its trap (each
// creates a file after its trap command: an event, not a guess of how long
// a shell takes to start on a busy machine).
func deafChildren(t *testing.T, g *group, n int) []*child {
	t.Helper()
	var cs []*child
	dir := t.TempDir()
	for i := range n {
		ready := filepath.Join(dir, fmt.Sprint(i))
		c, err := g.start([]string{"/bin/sh"}, "deaf", []string{"-c", `trap "" INT; : > "$0"; exec sleep 60`, ready})
		if err != nil {
			t.Skip("no /bin/sh:", err)
		}
		cs = append(cs, c)
		t.Cleanup(func() { c.cmd.Process.Kill(); <-c.done })
		for {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			select {
			case <-c.done:
				t.Fatalf("deaf child %d exited before installing its trap: %v", i, c.err)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return cs
}

// TestWaitOrStopEnds checks that every wait for children ends: after the
// grace period each child still running is stopped, and killed if it
// ignores SIGINT (one shared timer used to fire for the first child only,
// so the wait for the second never ended), and a cancelled context ends
// the wait at once.
func TestWaitOrStopEnds(t *testing.T) {
	cases := []struct {
		name   string
		d      time.Duration
		cancel time.Duration // 0: never
		err    bool
	}{
		{"grace expires", 100 * time.Millisecond, 0, false},
		{"cancelled", time.Hour, 100 * time.Millisecond, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &group{exited: make(chan *child, 8), stopGrace: 200 * time.Millisecond}
			cs := deafChildren(t, g, 3)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel > 0 {
				time.AfterFunc(c.cancel, cancel)
			}
			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- g.waitOrStop(ctx, c.d, cs...) }()
			select {
			case err := <-done:
				if (err != nil) != c.err {
					t.Fatalf("waitOrStop: %v", err)
				}
			case <-time.After(30 * time.Second): // the children sleep 60 s
				t.Fatal("waitOrStop did not return within 30s")
			}
			for i, ch := range cs {
				select {
				case <-ch.done:
				default:
					t.Fatalf("child %d still running after waitOrStop returned (%v)", i, time.Since(start))
				}
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Fatalf("waitOrStop took %v", took)
			}
		})
	}
}

// TestUpRefusesAnOldPKI: a state directory whose pki/ has the older
// single-directory layout (certificates without roles) is refused before
// any child starts, saying to remove it.
func TestUpRefusesAnOldPKI(t *testing.T) {
	state := filepath.Join(t.TempDir(), "run")
	old := filepath.Join(state, "pki")
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.pem", "ca.key", "server.pem", "server.key", "shuffler.pem", "shuffler.key", "clients.key"} {
		os.WriteFile(filepath.Join(old, f), []byte("x"), 0o600)
	}
	err := Up(context.Background(), Config{Exe: "/nonexistent", State: state, Clients: 2, ClientProcesses: 1, Workers: 1})
	if err == nil || !strings.Contains(err.Error(), "older single-directory layout") || !strings.Contains(err.Error(), "remove "+old) {
		t.Fatalf("Up over an old pki: %v", err)
	}
}

// TestReplicas: a shard's replica that exits leaves the run going only
// while another replica of the same shard runs; the replicas still
// running without an address written (standbys waiting for their lease),
// or whose shard's other replica finished cleanly, are the ones stopped
// when the run is over.
func TestReplicas(t *testing.T) {
	dir := t.TempDir()
	mk := func(done bool) *child {
		c := &child{done: make(chan struct{})}
		if done {
			close(c.done)
		}
		return c
	}
	a0, s0 := mk(true), mk(false)  // shard 0: the active died, the standby runs
	a1, s1 := mk(false), mk(false) // shard 1: both run, the active listens
	a2, s2 := mk(true), mk(true)   // shard 2: both exited
	a2.err = errors.New("killed")
	a3, s3 := mk(true), mk(false) // shard 3: the active finished cleanly, the standby took the lease
	r := &replicas{shard: map[*child]int{}, addrFile: map[*child]string{}}
	a0.err = errors.New("killed")
	for i, c := range []*child{a0, s0, a1, s1, a2, s2, a3, s3} {
		f := filepath.Join(dir, strings.Repeat("x", i+1))
		r.add(c, i/2, f)
		if c == a1 || c == s3 {
			if err := os.WriteFile(f, []byte("127.0.0.1:1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		c    *child
		want bool
	}{{a0, true}, {s1, true}, {a1, true}, {a2, false}, {s2, false}, {mk(true), false}} {
		if got := r.survives(c.c); got != c.want {
			t.Errorf("survives(shard %d) = %v, want %v", r.shard[c.c], got, c.want)
		}
	}
	w := map[*child]bool{}
	for _, c := range r.waiting() {
		w[c] = true
	}
	if len(w) != 3 || !w[s0] || !w[s1] || !w[s3] {
		t.Errorf("waiting: %d replicas, want the standbys of shards 0 and 1 (no lease) and 3 (its active finished)", len(w))
	}
}

// TestLaunchReplacesExe: with Launch, a role is started as Launch's
// command line followed by the role's name and flags, not as Exe.
func TestLaunchReplacesExe(t *testing.T) {
	if got := (Config{Exe: "/bin/shuffledp"}).command(); len(got) != 1 || got[0] != "/bin/shuffledp" {
		t.Fatalf("without Launch: %q", got)
	}
	out := filepath.Join(t.TempDir(), "argv")
	cfg := Config{Exe: "/nonexistent", Launch: []string{"/bin/sh", "-c", `printf '%s\n' "$@" > "$0"`, out}}
	g := &group{exited: make(chan *child, 8)}
	c, err := g.start(cfg.command(), "server", []string{"server", "--listen=127.0.0.1:0"})
	if err != nil {
		t.Skip("no /bin/sh:", err)
	}
	<-c.done
	if c.err != nil {
		t.Fatal(c.err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != "server\n--listen=127.0.0.1:0\n" {
		t.Fatalf("the launched command got arguments %q", got)
	}
}

// TestUpRefusesBadValuesFirst: Up refuses the deployment's bad flag values
// (dropout outside [0, 1] or NaN, a negative round timeout, min-connected
// outside [0, clients], negative shards), naming the flag, before it
// creates the state directory or starts anything.
func TestUpRefusesBadValuesFirst(t *testing.T) {
	base := Config{Exe: "/nonexistent", Clients: 4, ClientProcesses: 1, Workers: 1}
	cases := []struct {
		flag   string
		mutate func(*Config)
	}{
		{"dropout", func(c *Config) { c.Dropout = 1.5 }},
		{"dropout", func(c *Config) { c.Dropout = -0.1 }},
		{"dropout", func(c *Config) { c.Dropout = math.NaN() }},
		{"round-timeout", func(c *Config) { c.RoundTimeout = -time.Second }},
		{"min-connected", func(c *Config) { c.MinConnected = -1 }},
		{"min-connected", func(c *Config) { c.MinConnected = 5 }},
		{"shards", func(c *Config) { c.Shards = -2 }},
	}
	for i, tc := range cases {
		c := base
		c.State = filepath.Join(t.TempDir(), "runs", strconv.Itoa(i))
		tc.mutate(&c)
		err := Up(context.Background(), c)
		if err == nil || !strings.HasPrefix(err.Error(), tc.flag) {
			t.Errorf("case %d: %v; want an error naming %s", i, err, tc.flag)
		}
		if _, err := os.Stat(filepath.Dir(c.State)); !os.IsNotExist(err) {
			t.Errorf("case %d: the refused Up created %s", i, filepath.Dir(c.State))
		}
	}
	for _, ok := range []float64{0, 0.5, 1} {
		c := base
		c.Dropout = ok
		if err := c.Check(); err != nil {
			t.Errorf("dropout %g refused: %v", ok, err)
		}
	}
}
