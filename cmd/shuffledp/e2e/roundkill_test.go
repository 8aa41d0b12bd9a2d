package e2e

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
	"github.com/shuffledp/shuffledp/ledger"
)

// roundKill kills a child process at a random instant of a round chosen
// by watching its progress, not a clock, so that the kill lands inside the
// run on a fast machine and a busy one alike. The child traces its
// faultpoint hits to a pipe (faultpoint.TraceEnvVar); after its k-th
// ledger commit (k in 2..4: one a round, in the trainer, the server and
// the shuffler) the parent waits a random fraction of the round that just
// ended (the time between commits k-1 and k) and kills it, so the kill
// falls anywhere in the next round. Should the child outrun that (a
// descheduled parent), it kills itself at commit k+2: every child so
// armed dies of SIGKILL, and none advances its run by more than k+2
// rounds.
type roundKill struct {
	k    int
	frac float64
	env  []string
	r, w *os.File
	sent atomic.Bool // the parent's kill was sent (else the cap killed it)
}

func newRoundKill(t *testing.T, rng *rand.Rand) *roundKill {
	t.Helper()
	rk := &roundKill{k: 2 + rng.IntN(3), frac: rng.Float64()}
	rk.env = []string{
		fmt.Sprintf("%s=%s@%d", faultpoint.EnvVar, ledger.PointAppendCommitted, rk.k+2),
		faultpoint.TraceEnvVar + "=3",
	}
	var err error
	if rk.r, rk.w, err = os.Pipe(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rk.r.Close(); rk.w.Close() })
	return rk
}

// prepare arms cmd, not yet started: the cap and the trace on descriptor 3.
func (rk *roundKill) prepare(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if len(cmd.ExtraFiles) != 0 {
		t.Fatal("roundKill: the trace must be the child's descriptor 3")
	}
	cmd.Env = append(cmd.Env, rk.env...)
	cmd.ExtraFiles = []*os.File{rk.w}
}

// watch follows the started process p and kills it as described.
func (rk *roundKill) watch(p *os.Process) {
	rk.w.Close() // the child holds the write end now: EOF when it dies
	go func() {
		sc := bufio.NewScanner(rk.r)
		commits, last := 0, time.Now()
		for sc.Scan() {
			if sc.Text() != ledger.PointAppendCommitted {
				continue
			}
			commits++
			now := time.Now()
			if commits == rk.k {
				time.AfterFunc(time.Duration(rk.frac*float64(now.Sub(last))), func() {
					if p.Kill() == nil {
						rk.sent.Store(true)
					}
				})
			}
			last = now
		}
	}()
}

func (rk *roundKill) String() string {
	return fmt.Sprintf("kill at %.2f of the round after commit %d, else at commit %d", rk.frac, rk.k, rk.k+2)
}
