// Package pgtest runs a real, throwaway PostgreSQL server for tests: it
// finds the server's binaries (Debian's package postgresql installs them in
// /usr/lib/postgresql/VERSION/bin), runs initdb into a new temporary
// directory, starts postgres on a free port of 127.0.0.1 with its unix
// socket in that directory, gives each test an empty schema (or database),
// and stops the server and removes the directory afterwards. Nothing is
// mocked: the tests talk to the server over its wire protocol, as a
// deployment does.
//
// One server serves a whole test package: call Main from TestMain, and
// NewSchema (or NewDatabase) from each test that needs PostgreSQL. The
// server starts when the first test asks for one, so a package run that
// needs none (a -run filter, a helper process re-executing the test
// binary) starts nothing.
//
// PostgreSQL refuses to run as root; when the tests run as root, initdb and
// postgres run as the system user "postgres" (which the Debian package
// creates), with the directory chowned to it.
//
// When the binaries are not installed, NewSchema and NewDatabase skip the
// test with a message saying so, unless the environment variable
// RequireEnv is set (CI sets it), in which case the test fails: CI never
// skips PostgreSQL silently.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireEnv names the environment variable that makes a missing
// PostgreSQL installation a test failure instead of a skip.
const RequireEnv = "SHUFFLEDP_REQUIRE_POSTGRES"

// BinDirEnv names an environment variable that may give the directory of
// initdb and postgres, overriding the search.
const BinDirEnv = "SHUFFLEDP_POSTGRES_BINDIR"

// DurableEnv names an environment variable that, set to 1, keeps the
// server's fsync on (for benchmarks of commit latency). By default the
// test server runs with fsync=off and full_page_writes=off: a test never
// survives an operating-system crash, and the server's durability is not
// what the tests check (they kill clients, not the server).
const DurableEnv = "SHUFFLEDP_PGTEST_DURABLE"

// SharedBuffersEnv names an environment variable that may set the test
// server's shared_buffers (digits and a unit, e.g. 1GB; default 32MB), for
// benchmarks whose tables outgrow the default.
const SharedBuffersEnv = "SHUFFLEDP_PGTEST_SHARED_BUFFERS"

// ErrNotInstalled is wrapped by Start when PostgreSQL's server binaries
// cannot be found.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL server binaries not found (Debian: apt-get install postgresql)")

// Options configure Start.
type Options struct {
	// Durable keeps fsync and full_page_writes on.
	Durable bool
}

// Server is a running PostgreSQL server in a temporary directory.
type Server struct {
	dir     string // temporary directory: data/, the socket, the log
	binDir  string
	port    int
	cmd     *exec.Cmd
	exited  chan struct{} // closed when postgres has exited
	waitErr error

	mu      sync.Mutex
	admin   *pgx.Conn // to the database postgres
	created int       // databases and schemas created
}

// BinDir returns the directory holding initdb and postgres: BinDirEnv if
// set, else the newest /usr/lib/postgresql/*/bin (Debian), else the
// directory of initdb on PATH. The error wraps ErrNotInstalled.
func BinDir() (string, error) {
	if d := os.Getenv(BinDirEnv); d != "" {
		if !executable(filepath.Join(d, "initdb")) || !executable(filepath.Join(d, "postgres")) {
			return "", fmt.Errorf("%w: %s=%s has no initdb and postgres", ErrNotInstalled, BinDirEnv, d)
		}
		return d, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	for _, m := range matches {
		d := filepath.Dir(m)
		if executable(m) && executable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if executable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: looked in $%s, /usr/lib/postgresql/*/bin and PATH", ErrNotInstalled, BinDirEnv)
}

// version returns the major version in /usr/lib/postgresql/VERSION/bin/initdb.
func version(initdb string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(initdb))), 64)
	return v
}

func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Start runs initdb into a new temporary directory and starts postgres on
// it, returning when the server accepts connections. The caller must Stop
// it. If the test process dies without Stop, the kernel sends postgres
// SIGQUIT (its immediate shutdown), so no server outlives the tests; only
// the directory remains.
func Start(opts Options) (*Server, error) {
	binDir, err := BinDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, binDir: binDir}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	initdb := exec.Command(filepath.Join(binDir, "initdb"), "-D", s.dataDir(), "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	// A port found free can be taken before postgres binds it: retry.
	for attempt := 1; ; attempt++ {
		err = s.start(opts, cred)
		if err == nil {
			return s, nil
		}
		if attempt == 3 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// credential returns the credential to run PostgreSQL's programs under:
// nil when not root, the postgres user's when root.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses to run as root: %v (the Debian package creates the user postgres)", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("pgtest: user postgres: %v", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }
func (s *Server) logFile() string { return filepath.Join(s.dir, "postgres.log") }

// start starts postgres on a free port and waits until it accepts
// connections.
func (s *Server) start(opts Options, cred *syscall.Credential) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(s.logFile(), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"-D", s.dataDir(), "-p", strconv.Itoa(port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", "-c", "shared_buffers=" + sharedBuffers()}
	if !opts.Durable {
		args = append(args, "-c", "fsync=off", "-c", "full_page_writes=off")
	}
	cmd := exec.Command(filepath.Join(s.binDir, "postgres"), args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	s.cmd, s.port, s.exited = cmd, port, make(chan struct{})
	// The parent-death signal follows the thread that forked, so that
	// thread stays locked to this goroutine, waiting, while postgres runs.
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("pgtest: postgres exited (%v) before accepting connections; log:\n%s", s.waitErr, s.logTail())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("pgtest: postgres did not accept connections within a minute (%v); log:\n%s", err, s.logTail())
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logFile())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Port returns the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// SocketDir returns the directory of the server's unix socket.
func (s *Server) SocketDir() string { return s.dir }

// URL returns a postgres:// URL of database db over TCP on 127.0.0.1, as
// the superuser postgres (trust authentication), TLS off.
func (s *Server) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// SocketURL returns a postgres:// URL of database db over the server's
// unix socket.
func (s *Server) SocketURL(db string) string {
	q := url.Values{"host": {s.dir}, "port": {strconv.Itoa(s.port)}, "sslmode": {"disable"}}
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + db, RawQuery: q.Encode()}
	return u.String()
}

// admin returns the server's administrative connection (to the database
// postgres), opening it on first use; s.mu must be held.
func (s *Server) adminConn(ctx context.Context) (*pgx.Conn, error) {
	if s.admin == nil {
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err != nil {
			return nil, fmt.Errorf("pgtest: %w", err)
		}
		s.admin = conn
	}
	return s.admin, nil
}

// CreateDatabase creates a new, empty database and returns its name.
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, err := s.adminConn(ctx)
	if err != nil {
		return "", err
	}
	s.created++
	name := fmt.Sprintf("db%d", s.created)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("pgtest: creating database %s: %w", name, err)
	}
	return name, nil
}

// CreateSchema creates a new, empty schema in the database postgres and
// returns its name. A schema costs well under a millisecond, a database
// about 100 ms; SchemaURL connects to one.
func (s *Server) CreateSchema(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, err := s.adminConn(ctx)
	if err != nil {
		return "", err
	}
	s.created++
	name := fmt.Sprintf("test%d", s.created)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		return "", fmt.Errorf("pgtest: creating schema %s: %w", name, err)
	}
	return name, nil
}

// SchemaURL returns a URL of the database postgres (TCP, as URL) whose
// connections have search_path set to schema, so that the tables a
// program creates and reads through it are schema's.
func (s *Server) SchemaURL(schema string) string {
	return s.URL("postgres") + "&search_path=" + url.QueryEscape(schema)
}

// Stop shuts the server down (immediate shutdown: the data are thrown
// away) and removes its directory.
func (s *Server) Stop() error {
	s.mu.Lock()
	if s.admin != nil {
		s.admin.Close(context.Background())
		s.admin = nil
	}
	s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		select {
		case <-s.exited:
		default:
			s.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-s.exited:
			case <-time.After(10 * time.Second):
				syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
				<-s.exited
			}
		}
	}
	return os.RemoveAll(s.dir)
}

// The package's shared server (Main, NewSchema, NewDatabase).
var shared struct {
	mu       sync.Mutex
	started  bool
	server   *Server
	startErr error
}

// Main runs a test package's tests and then stops the shared server if a
// test started it; TestMain returns its result:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server != nil {
		if err := shared.server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
		shared.server = nil
	}
	return code
}

// Shared returns the package's shared server, starting it on first use
// (with fsync off unless DurableEnv is 1). Only a package whose TestMain
// calls Main may use it (Main stops it).
func Shared() (*Server, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.started {
		shared.started = true
		shared.server, shared.startErr = Start(Options{Durable: os.Getenv(DurableEnv) == "1"})
	}
	return shared.server, shared.startErr
}

// Required reports whether RequireEnv is set (to anything but "" or "0").
func Required() bool {
	v := os.Getenv(RequireEnv)
	return v != "" && v != "0"
}

// NewSchema returns the URL of a new, empty schema on the package's shared
// server (SchemaURL): each test gets its own tables. It skips t when
// PostgreSQL is not installed (failing it instead when RequireEnv is set),
// and fails t when the server does not start.
func NewSchema(t testing.TB) string {
	t.Helper()
	s := shared1(t)
	name, err := s.CreateSchema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.SchemaURL(name)
}

// NewDatabase returns the URL of a new, empty database on the package's
// shared server, skipping or failing t as NewSchema does.
func NewDatabase(t testing.TB) string {
	t.Helper()
	s := shared1(t)
	name, err := s.CreateDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.URL(name)
}

// shared1 returns the shared server for t, skipping or failing t.
func shared1(t testing.TB) *Server {
	t.Helper()
	s, err := Shared()
	if errors.Is(err, ErrNotInstalled) && !Required() {
		t.Skipf("PostgreSQL is not installed, so this test is skipped (%v); set %s=1 to make that a failure", err, RequireEnv)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// String describes the server.
func (s *Server) String() string {
	return fmt.Sprintf("PostgreSQL (%s) on 127.0.0.1:%d, socket in %s", strings.TrimSuffix(s.binDir, "/bin"), s.port, s.dir)
}

// sharedBuffers is SharedBuffersEnv's value if it is digits and a unit of
// PostgreSQL's (kB, MB, GB), else 32MB.
func sharedBuffers() string {
	v := os.Getenv(SharedBuffersEnv)
	digits := strings.TrimRight(v, "kMGB")
	unit := v[len(digits):]
	if digits == "" || strings.Trim(digits, "0123456789") != "" || (unit != "kB" && unit != "MB" && unit != "GB") {
		return "32MB"
	}
	return v
}
