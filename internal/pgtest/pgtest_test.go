package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// Two databases of the shared server are separate, reachable over TCP and
// the unix socket, and served by a postgres that does not run as root.
func TestNewDatabase(t *testing.T) {
	ctx := context.Background()
	a := NewDatabase(t)
	s, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(s)
	b, err := s.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.URL(b) == a {
		t.Fatalf("two databases with one URL %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE t (x int)`); err != nil {
		t.Fatal(err)
	}
	var user string
	var superuser bool
	if err := conn.QueryRow(ctx, `SELECT current_user, usesuper FROM pg_user WHERE usename = current_user`).Scan(&user, &superuser); err != nil {
		t.Fatal(err)
	}
	if user != "postgres" || !superuser {
		t.Errorf("connected as %q (superuser %v), want the superuser postgres", user, superuser)
	}
	// The other database does not have the table; reach it by the socket.
	other, err := pgx.Connect(ctx, s.SocketURL(b))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	var n int
	if err := other.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 't'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("database %s sees the table of %s: %d, %v", b, a, n, err)
	}
	// postgres runs as a non-root user.
	st, err := os.Stat("/proc/" + strconv.Itoa(s.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; uid == 0 {
		t.Errorf("postgres runs as root")
	}
}

// Stop ends the server and removes its directory.
func TestStartStop(t *testing.T) {
	s, err := Start(Options{})
	if errors.Is(err, ErrNotInstalled) && !Required() {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	pid := s.cmd.Process.Pid
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("directory %s left behind: %v", s.dir, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("postgres %d still running after Stop", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBinDirEnv(t *testing.T) {
	t.Setenv(BinDirEnv, t.TempDir())
	if _, err := BinDir(); !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), BinDirEnv) {
		t.Errorf("BinDir with an empty %s: %v", BinDirEnv, err)
	}
}

// Schemas of one database are separate: the same table name in two.
func TestNewSchema(t *testing.T) {
	ctx := context.Background()
	var conns [2]*pgx.Conn
	for i := range conns {
		c, err := pgx.Connect(ctx, NewSchema(t))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, `CREATE TABLE t (x int)`); err != nil {
			t.Fatalf("schema %d: %v", i, err)
		}
		if _, err := c.Exec(ctx, `INSERT INTO t VALUES ($1)`, i); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for i, c := range conns {
		var x int
		if err := c.QueryRow(ctx, `SELECT x FROM t`).Scan(&x); err != nil || x != i {
			t.Errorf("schema %d reads %d, %v", i, x, err)
		}
	}
}

// helperEnv makes the test binary a process that starts a server, prints
// its pid and directory, and waits to be killed.
const helperEnv = "PGTEST_ORPHAN_HELPER"

func TestOrphanHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for TestServerDiesWithTests")
	}
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%d %s\n", s.cmd.Process.Pid, s.dir)
	select {}
}

// A test process killed without stopping its server takes the server
// with it (postgres gets SIGQUIT when its parent dies).
func TestServerDiesWithTests(t *testing.T) {
	if _, err := BinDir(); err != nil && !Required() {
		t.Skip(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrphanHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	var dir string
	if _, err := fmt.Fscan(out, &pid, &dir); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("reading the helper's server: %v", err)
	}
	defer os.RemoveAll(dir)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("postgres %d outlived its test process by 20 s", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
