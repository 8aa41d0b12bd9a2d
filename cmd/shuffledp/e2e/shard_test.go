package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/clitest"
	"github.com/shuffledp/shuffledp/internal/pgtest"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/route"
	"github.com/shuffledp/shuffledp/shard"
)

// shardRun is the sharded run of TestShardedShufflersKill9: 24 clients in
// 3 shards of 8, 6 a round (2 per shard), 5 epochs (20 rounds) of logistic
// regression on synthetic data, an evaluation every round.
var shardRun = []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "24", "--sample", "6",
	"--eps0", "1", "--epochs", "5", "--eval-every", "1", "--test-size", "50", "--no-progress"}

// TestShardedShufflersKill9 runs a sharded deployment with its real
// processes: a PostgreSQL server, the server role (--shards 3), three
// shuffler replicas (--shard I --shards 3, the shared PostgreSQL ledger)
// and a standby for shard 1 on the same address, and one client process
// per shard. Mid-run shard 1's active replica gets SIGKILL. The standby
// must take the shard over (its lease, then the address; the clients
// reconnect), the run must finish (its 20 rounds; or, when shard 1's
// replica died between a debit and the forward, short of them: shard 1's
// ledger then holds the 20 planned rounds, never more, and its shuffler
// stops the run), every shard must have a ledger row per round the server
// applied and at most the 20 planned, and every shard's epsilon, and the
// server's, must be the account of the shard's own (n_s, k_s) = (8, 2)
// over its rows.
func TestShardedShufflersKill9(t *testing.T) {
	pg, err := pgtest.Start(pgtest.Options{})
	if errors.Is(err, pgtest.ErrNotInstalled) && !pgtest.Required() {
		t.Skipf("PostgreSQL is not installed (%v); set %s=1 to make that a failure", err, pgtest.RequireEnv)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := pg.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	url := pg.URL(db)
	dir := t.TempDir()
	pkiDir, creds := filepath.Join(dir, "pki"), filepath.Join(dir, "creds.json")
	if out, err := runCmd(t, "pki", "init", "--dir", pkiDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runCmd(t, "pki", "enrol", "--dir", pkiDir, "--clients", "0:24", "--out", creds); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	srvAddrFile := filepath.Join(dir, "srv.addr")
	srv := startNetProc(t, "server", nil, append([]string{"server", "--listen", "127.0.0.1:0", "--addr-file", srvAddrFile,
		"--state", filepath.Join(dir, "server"), "--pki", filepath.Join(pkiDir, "server"), "--shards", "3"}, shardRun...)...)
	sa := waitNetAddr(t, srvAddrFile, srv)
	shuffler := func(i int, name, addr string) *netProc {
		return startNetProc(t, name, nil, "shuffler", "--listen", addr, "--addr-file", filepath.Join(dir, name+".addr"),
			"--server", sa, "--state", filepath.Join(dir, name), "--pki", filepath.Join(pkiDir, "shuffler"), "--ledger", url,
			"--shard", strconv.Itoa(i), "--shards", "3", "--release-when-complete", "--round-timeout", "20s")
	}
	addrs := make([]string, 3)
	active := make([]*netProc, 3)
	for i := range 3 {
		addrs[i] = clitest.FreeAddr(t)
		active[i] = shuffler(i, fmt.Sprintf("shuffler%d", i), addrs[i])
		if a := waitNetAddr(t, filepath.Join(dir, fmt.Sprintf("shuffler%d.addr", i)), active[i]); a != addrs[i] {
			t.Fatalf("shuffler %d listens on %q, want %s\n%s", i, a, addrs[i], active[i].out)
		}
	}
	// Misconfigurations are refused: a shuffler of another sharding (the
	// server names the shard run it does not know), and a client process
	// registering with another shard's shuffler.
	wrong := startNetProc(t, "wrong-shards", nil, "shuffler", "--listen", "127.0.0.1:0", "--server", sa, "--state", filepath.Join(dir, "wrong"),
		"--pki", filepath.Join(pkiDir, "shuffler"), "--ledger", url, "--shard", "0", "--shards", "2")
	strayClient := startNetProc(t, "stray-client", nil, "client", "--shuffler", addrs[1], "--server", sa, "--clients", "0:8",
		"--workers", "1", "--pki", filepath.Join(pkiDir, "client"), "--credentials", creds)
	for p, want := range map[*netProc]string{wrong: "is not a shard of the server's run", strayClient: "is not in this shuffler's shard"} {
		select {
		case <-p.done:
			if p.err == nil || !strings.Contains(p.out.String(), want) {
				t.Fatalf("%s: %v, want a refusal saying %q:\n%s", p.name, p.err, want, p.out)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s was not refused:\n%s", p.name, p.out)
		}
	}
	standby := shuffler(1, "standby1", addrs[1])
	var clients []*netProc
	for i := range 3 {
		clients = append(clients, startNetProc(t, fmt.Sprintf("client%d", i), nil, "client", "--shuffler", addrs[i], "--server", sa,
			"--clients", fmt.Sprintf("%d:%d", 8*i, 8*(i+1)), "--workers", "1", "--pki", filepath.Join(pkiDir, "client"), "--credentials", creds))
	}
	// Kill shard 1's active replica once the server applied round 3.
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(srv.out.String(), "server: round 3/") {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not reach round 3\nserver:\n%s\nshuffler 1:\n%s", srv.out, active[1].out)
		}
		select {
		case <-srv.done:
			t.Fatalf("the server exited before round 3: %v\n%s", srv.err, srv.out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if strings.Contains(standby.out.String(), "lease held") {
		t.Fatalf("the standby took the lease while the active replica held it:\n%s", standby.out)
	}
	killedAt := time.Now()
	active[1].cmd.Process.Kill()
	<-active[1].done
	if !killedBySIGKILL(active[1].err) {
		t.Fatalf("shard 1's replica: %v, want killed", active[1].err)
	}
	var leasedAt time.Time
	for leasedAt.IsZero() && time.Now().Before(deadline) {
		if strings.Contains(standby.out.String(), "lease held") {
			leasedAt = time.Now()
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-srv.done:
	case <-time.After(time.Until(deadline)):
		t.Fatalf("the run did not finish after the takeover\nserver:\n%s\nstandby:\n%s\nclient 1:\n%s", srv.out, standby.out, clients[1].out)
	}
	applied, ended := runEnded(srv.out.String(), 20)
	if srv.err != nil || !ended {
		t.Fatalf("server: %v\n%s\nstandby:\n%s", srv.err, srv.out, standby.out)
	}
	wall := time.Since(killedAt)
	for _, p := range append([]*netProc{active[0], active[2], standby}, clients...) {
		select {
		case <-p.done:
			if p.err != nil {
				t.Fatalf("%s: %v\n%s", p.name, p.err, p.out)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s did not finish\n%s", p.name, p.out)
		}
	}
	if !strings.Contains(standby.out.String(), " released: ") {
		t.Fatalf("the standby released no round:\n%s", standby.out)
	}
	// The shared ledger: every shard's rows, priced with its own n_s, k_s.
	store, err := ledger.OpenStore(ctx, url, ledger.StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run := serverRunID(t, srv.out.String())
	plan, err := shard.Split(run, 24, 6, 3)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := shard.Epsilons(ctx, store, plan, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	ev := event.Round{Randomizer: "rinf", N: 8, Reports: 2, Eps0: 1}.Event()
	for i, s := range rep.Shards {
		entries, err := store.Entries(ctx, plan.Parts[i].Run)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for _, e := range entries {
			if seen[e.Round] {
				t.Errorf("shard %d round %d debited twice", i, e.Round)
			}
			seen[e.Round] = true
			if e.Event != ev {
				t.Errorf("shard %d round %d debited as %v, want %v", i, e.Round, e.Event, ev)
			}
		}
		if n := len(entries); n > 20 || n < applied || (applied == 20 && n != 20) {
			t.Errorf("shard %d: %d ledger rows; want at most the 20 planned, at least the %d applied", i, n, applied)
		}
		want, err := route.Best([]event.Composed{{Event: ev, Count: int64(len(entries))}}, 1e-5, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Epsilon != want.Epsilon {
			t.Errorf("shard %d: ledger epsilon %v over %d rows, account of n=8 k=2 %v", i, s.Epsilon, len(entries), want.Epsilon)
		}
		t.Logf("shard %d: %d ledger rows, epsilon %.6g", i, len(entries), s.Epsilon)
	}
	// `ledger shards` reports the same, and the maximum.
	out, err := runCmd(t, "ledger", "shards", "--ledger", url, "--json")
	if err != nil {
		t.Fatalf("ledger shards: %v\n%s", err, out)
	}
	var shown shard.Report
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("ledger shards --json: %v\n%s", err, out)
	}
	if shown.Run != run || len(shown.Shards) != 3 || shown.Epsilon != rep.Epsilon || shown.Shards[1].Rounds != rep.Shards[1].Rounds {
		t.Errorf("ledger shards: %+v, want %+v", shown, rep)
	}
	if text, err := runCmd(t, "ledger", "shards", "--ledger", url); err != nil || !strings.Contains(text, "max over 3 shards") {
		t.Errorf("ledger shards: %v\n%s", err, text)
	}
	// The server's own ledger records every round as one shard's round.
	srvRounds, srvEps, _ := clitest.LedgerShow(t, filepath.Join(dir, "server"))
	wantSrv, err := route.Best([]event.Composed{{Event: ev, Count: int64(applied)}}, 1e-5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if srvRounds != int64(applied) || srvEps != wantSrv.Epsilon {
		t.Errorf("the server's ledger: %d rounds, epsilon %v; want the %d applied rounds of one shard's event, %v", srvRounds, srvEps, applied, wantSrv.Epsilon)
	}
	t.Logf("takeover: standby held the lease %v after the kill; run finished %v after the kill; run epsilon (max over shards) %.6g",
		leasedAt.Sub(killedAt).Round(time.Millisecond), wall.Round(time.Millisecond), rep.Epsilon)
}

// serverRunID reads the run id from the server's first line ("server: run
// ID in DIR, ...").
func serverRunID(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, "server: run ")
	if i < 0 {
		t.Fatalf("no run id in the server's output:\n%s", out)
	}
	f := strings.Fields(out[i+len("server: run "):])
	return f[0]
}

// TestUpShards: `up --shards 3 --standby --ledger URL` runs the sharded
// deployment (server, three shufflers and a standby of each on one
// PostgreSQL ledger, a client process per shard). After the server
// applied round 3 the test sends SIGKILL to shard 1's active shuffler
// (its pid from up's line): up must go on, shard 1's standby must take the
// lease and serve, the run must finish (its 20 rounds, or short of them
// when shard 1's ledger holds the 20 planned with one debited and never
// released) with up exiting 0, the standbys of shards 0 and 2 must not
// serve (a standby takes the lease when its active replica finished, and
// finds the run over), and `ledger shards` must report each shard's rows
// (at most the 20 planned, at least the rounds applied) at the account of
// its own (n_s, k_s) = (8, 2), the maximum being the run's.
func TestUpShards(t *testing.T) {
	pg, err := pgtest.Start(pgtest.Options{})
	if errors.Is(err, pgtest.ErrNotInstalled) && !pgtest.Required() {
		t.Skipf("PostgreSQL is not installed (%v); set %s=1 to make that a failure", err, pgtest.RequireEnv)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	db, err := pg.CreateDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	url, dir := pg.URL(db), t.TempDir()
	if _, err := runCmd(t, "up", append([]string{"--state", filepath.Join(dir, "refused"), "--shards", "3"}, shardRun...)...); err == nil || !strings.Contains(err.Error(), "--ledger postgres://") {
		t.Fatalf("up --shards without a PostgreSQL ledger: %v", err)
	}
	if _, err := runCmd(t, "up", append([]string{"--state", filepath.Join(dir, "refused2"), "--standby"}, shardRun...)...); err == nil || !strings.Contains(err.Error(), "--standby needs --shards") {
		t.Fatalf("up --standby without shards: %v", err)
	}
	up := startNetProc(t, "up", nil, append([]string{"up", "--state", filepath.Join(dir, "up"), "--shards", "3", "--standby", "--ledger", url,
		"--client-processes", "3", "--release-when-complete", "--round-timeout", "20s"}, shardRun...)...)
	deadline := time.Now().Add(90 * time.Second)
	waitFor := func(what string) {
		t.Helper()
		for !strings.Contains(up.out.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in up's output\n%s", what, up.out)
			}
			select {
			case <-up.done:
				t.Fatalf("up exited (%v) before %q\n%s", up.err, what, up.out)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	waitFor("server: round 3/")
	out := up.out.String()
	const line = "up: shuffler 1 (pid "
	j := strings.Index(out, line)
	if j < 0 {
		t.Fatalf("no pid of shuffler 1 in up's output\n%s", out)
	}
	pid, err := strconv.Atoi(strings.TrimSuffix(strings.Fields(out[j+len(line):])[0], ")"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "[shuffler 1 standby] shuffler: shard 1: lease held") {
		t.Fatalf("shard 1's standby held the lease while the active replica lived\n%s", out)
	}
	killedAt := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor("[shuffler 1 standby] shuffler: shard 1: lease held")
	leasedAt := time.Now()
	waitFor("[shuffler 1 standby] shuffler: round ")
	select {
	case <-up.done:
	case <-time.After(time.Until(deadline)):
		t.Fatalf("up did not finish\n%s", up.out)
	}
	out = up.out.String()
	applied, ended := runEnded(out, 20)
	if up.err != nil || !ended {
		t.Fatalf("up: %v\n%s", up.err, out)
	}
	if !strings.Contains(out, "up: shuffler 1 exited (signal: killed); another replica of its shard goes on") {
		t.Errorf("up did not report the active replica's death and go on\n%s", out)
	}
	// The standbys of shards 0 and 2 may take the lease only once their
	// active replica finished (a clean exit ends its session), and release
	// nothing.
	for _, i := range []int{0, 2} {
		held := strings.Index(out, fmt.Sprintf("[shuffler %d standby] shuffler: shard %d: lease held", i, i))
		fin := strings.Index(out, fmt.Sprintf("[shuffler %d] shuffler: the server finished the run", i))
		if held >= 0 && (fin < 0 || held < fin) || strings.Contains(out, fmt.Sprintf("[shuffler %d standby] shuffler: round ", i)) {
			t.Errorf("shard %d's standby served while its active replica lived\n%s", i, out)
		}
	}
	text, err := runCmd(t, "ledger", "shards", "--ledger", url, "--json")
	if err != nil {
		t.Fatalf("ledger shards: %v\n%s", err, text)
	}
	var r shard.Report
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Shards) != 3 {
		t.Fatalf("ledger shards: %+v, want 3 shards", r)
	}
	ev := event.Round{Randomizer: "rinf", N: 8, Reports: 2, Eps0: 1}.Event()
	most := 0.0
	for i, s := range r.Shards {
		want, err := route.Best([]event.Composed{{Event: ev, Count: s.Rounds}}, 1e-5, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Rounds > 20 || s.Rounds < int64(applied) || (applied == 20 && s.Rounds != 20) || s.Epsilon != want.Epsilon {
			t.Errorf("shard %d: %d rounds, epsilon %v; want at most the 20 planned, at least the %d applied, %v", i, s.Rounds, s.Epsilon, applied, want.Epsilon)
		}
		most = max(most, s.Epsilon)
	}
	if r.Epsilon != most {
		t.Errorf("run epsilon %v, want the maximum over the shards %v", r.Epsilon, most)
	}
	t.Logf("up --standby: shard 1's standby held the lease %v after the kill; up finished %v after it; shard rounds %d/%d/%d, run epsilon %.6g",
		leasedAt.Sub(killedAt).Round(time.Millisecond), time.Since(killedAt).Round(time.Millisecond), r.Shards[0].Rounds, r.Shards[1].Rounds, r.Shards[2].Rounds, r.Epsilon)
}
