// Package cpuprofile lets an operator profile every process of a
// deployment, including the children `shuffledp up` starts, without a flag
// on each command: with the environment variable SHUFFLEDP_CPUPROFILE set
// to a directory DIR, Start writes the process's CPU profile (runtime/pprof)
// to DIR/ROLE-PID.pprof and, when the process stops, its resource usage
// (user and system CPU seconds, maximum resident set size: getrusage) to
// DIR/ROLE-PID.txt. Unset, Start does nothing. The profile holds call stacks
// and sample counts only (no memory contents, no report, no key).
//
// While it runs, SIGUSR1 makes such a process collect its garbage and
// write its live heap: a line "heap_live_bytes N" (runtime.MemStats'
// HeapAlloc right after runtime.GC: every byte still referenced) appended
// to DIR/ROLE-PID.heap.txt, and the heap profile (allocation sites of the
// live heap) to DIR/ROLE-PID-heap-I.pprof for the I-th signal.
//
//	SHUFFLEDP_CPUPROFILE=/tmp/prof shuffledp up ... --state DIR
//	go tool pprof -top shuffledp /tmp/prof/server-1234.pprof
//	kill -USR1 PID; go tool pprof -sample_index=inuse_space -top shuffledp /tmp/prof/shuffler-PID-heap-1.pprof
package cpuprofile

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"
)

// EnvVar names the directory profiles are written to.
const EnvVar = "SHUFFLEDP_CPUPROFILE"

// Start starts the CPU profile of a process of the given role (a file name
// component: the subcommand) if EnvVar is set, and returns the function
// that stops it and writes the usage file; it must be called before the
// process exits (a second call does nothing). Unset, both are no-ops. A profile that cannot be started is
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
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	var heaps sync.WaitGroup
	heaps.Add(1)
	go func() {
		defer heaps.Done()
		for i := 1; ; i++ {
			if _, ok := <-sig; !ok {
				return
			}
			WriteHeap(base, i)
		}
	}()
	var once sync.Once
	return func() (err error) {
		once.Do(func() {
			// Ignored, not reset to its default (which ends the
			// process): a late signal must not kill a process that is
			// writing its state on the way out.
			signal.Ignore(syscall.SIGUSR1)
			close(sig)
			heaps.Wait()
			pprof.StopCPUProfile()
			err = f.Close()
			if werr := os.WriteFile(base+".txt", []byte(Usage(time.Since(start))), 0o644); err == nil {
				err = werr
			}
		})
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

// WriteHeap collects the garbage, appends the live heap in bytes to
// base.heap.txt ("heap_live_bytes N") and writes the heap profile to
// base-heap-I.pprof. Errors are ignored: it is a measurement aid.
func WriteHeap(base string, i int) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if f, err := os.OpenFile(base+".heap.txt", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintf(f, "heap_live_bytes %d\n", ms.HeapAlloc)
		f.Close()
	}
	if f, err := os.Create(fmt.Sprintf("%s-heap-%d.pprof", base, i)); err == nil {
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
}
