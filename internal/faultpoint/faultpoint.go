// Package faultpoint lets crash tests kill a process at a named point of
// its work, so that "kill -9 between the debit and the release" is a test
// that runs every time rather than a race the test hopes to win.
//
// A point is armed by the environment variable SHUFFLEDP_FAULTPOINT, set to
// NAME@N: the N-th time (counting from 1) the process reaches Hit(NAME), it
// sends itself SIGKILL, which no handler can intercept, exactly as kill -9
// from outside would. Unset, Hit costs one atomic load. Production code
// calls Hit only at the boundaries the crash tests name (see the Points
// constants of the packages that call it).
//
// A test that kills from outside at an instant of its choosing watches the
// process's progress instead of a clock: SHUFFLEDP_FAULTPOINT_TRACE=FD (an
// inherited file descriptor, e.g. 3 for the first of exec.Cmd.ExtraFiles)
// makes every Hit write the point's name and a newline to FD before it
// acts, so the test can wait for the k-th round and kill inside the next,
// however fast or slow the machine.
package faultpoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// EnvVar arms a point: NAME@N.
const EnvVar = "SHUFFLEDP_FAULTPOINT"

// TraceEnvVar names the file descriptor every hit is written to.
const TraceEnvVar = "SHUFFLEDP_FAULTPOINT_TRACE"

var (
	once   sync.Once
	active atomic.Bool // armed or tracing
	name   string
	target int64
	hits   atomic.Int64
	traceM sync.Mutex
	trace  *os.File
)

func load() {
	if fd, err := strconv.Atoi(os.Getenv(TraceEnvVar)); err == nil && fd > 2 {
		trace = os.NewFile(uintptr(fd), "faultpoint-trace")
	}
	v := os.Getenv(EnvVar)
	n, at, ok := strings.Cut(v, "@")
	if k, err := strconv.ParseInt(at, 10, 64); ok && n != "" && err == nil && k >= 1 {
		name, target = n, k
	}
	active.Store(name != "" || trace != nil)
}

// Hit marks that the process reached point p: it is written to the trace
// when one is set, and if p is the armed point and this is its N-th hit,
// the process is killed with SIGKILL at once.
func Hit(p string) {
	once.Do(load)
	if !active.Load() {
		return
	}
	if trace != nil {
		traceM.Lock()
		trace.WriteString(p + "\n") // a reader gone is no reason to stop: errors ignored
		traceM.Unlock()
	}
	if name == "" || p != name {
		return
	}
	if hits.Add(1) == target {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never returns: the signal is on its way
	}
}
