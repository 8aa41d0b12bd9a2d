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

var (
	once   sync.Once
	armed  atomic.Bool
	name   string
	target int64
	hits   atomic.Int64
)

func load() {
	v := os.Getenv(EnvVar)
	n, at, ok := strings.Cut(v, "@")
	if !ok || n == "" {
		return
	}
	k, err := strconv.ParseInt(at, 10, 64)
	if err != nil || k < 1 {
		return
	}
	name, target = n, k
	armed.Store(true)
}

// Hit marks that the process reached point p; if p is the armed point and
// this is its N-th hit, the process is killed with SIGKILL at once.
func Hit(p string) {
	once.Do(load)
	if !armed.Load() || p != name {
		return
	}
	if hits.Add(1) == target {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never returns: the signal is on its way
	}
}
