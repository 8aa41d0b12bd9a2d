// Package cpuprofile lets an operator profile every process of a
// deployment, including the children `shuffledp up` starts, without a flag
// on each command: with the environment variable SHUFFLEDP_CPUPROFILE set
// to a directory DIR, Start writes the process's CPU profile (runtime/pprof)
// to DIR/ROLE-PID.pprof and, when the process stops, its resource usage
// (user and system CPU seconds, maximum resident set size: getrusage) to
// DIR/ROLE-PID.txt. Unset, Start does nothing. The profile holds call stacks
// and sample counts only (no memory contents, no report, no key).
//
//	SHUFFLEDP_CPUPROFILE=/tmp/prof shuffledp up ... --state DIR
//	go tool pprof -top shuffledp /tmp/prof/server-1234.pprof
package cpuprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"
)

// EnvVar names the directory profiles are written to.
const EnvVar = "SHUFFLEDP_CPUPROFILE"

// Start starts the CPU profile of a process of the given role (a file name
// component: the subcommand) if EnvVar is set, and returns the function
// that stops it and writes the usage file; it must be called before the
// process exits. Unset, both are no-ops. A profile that cannot be started is
// an error naming the variable.
func Start(role string) (stop func() error, err error) {
	dir := os.Getenv(EnvVar)
	if dir == "" {
		return func() error { return nil }, nil
	}
	if role == "" {
		role = "shuffledp"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvVar, err)
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-%d", filepath.Base(role), os.Getpid()))
	f, err := os.Create(base + ".pprof")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvVar, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", EnvVar, err)
	}
	start := time.Now()
	return func() error {
		pprof.StopCPUProfile()
		err := f.Close()
		if werr := os.WriteFile(base+".txt", []byte(Usage(time.Since(start))), 0o644); err == nil {
			err = werr
		}
		return err
	}, nil
}

// Usage formats the process's resource usage so far: wall seconds (given),
// user and system CPU seconds and the maximum resident set size in MiB.
func Usage(wall time.Duration) string {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return fmt.Sprintf("wall_s %.3f user_s %.3f sys_s %.3f maxrss_mib %.1f\n", wall.Seconds(),
		time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds(), float64(ru.Maxrss)/1024)
}
