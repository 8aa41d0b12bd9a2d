package shuffler

import (
	"context"
	"runtime"
	"testing"

	"github.com/shuffledp/shuffledp/protocol"
)

// maxServiceBytesPerClient bounds the heap a Service holds per client of
// its run's population (the client-to-slot index and the sampler's
// scratch; under check-in selection also a report slot and a sample entry
// per client). The shuffler node's own registration table is bounded in
// package node (TestShufflerMemoryPerClient) by 200 bytes less this, so
// that the shuffler process holds at most 200 bytes per enrolled client
// beyond its credentials store (which holds none: a token is an HMAC of
// the client's index).
const maxServiceBytesPerClient = 48

// serviceBytesPerClient returns the heap a Service of run holds per
// client of its population, once a round has been opened (whatever it
// allocates lazily included): runtime.MemStats.HeapAlloc after a garbage
// collection, against the heap before the Service was built.
func serviceBytesPerClient(t testing.TB, run protocol.RunConfig, selectCheckIn bool) float64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cfg := ServiceConfig{Run: run, Budget: &fakeBudget{log: new([]string)}, SelectCheckIn: selectCheckIn}
	if selectCheckIn {
		cfg.Dummies = &fakeDummies{}
	}
	svc, err := NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Open(context.Background(), protocol.Model{Run: run.Run}); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(svc)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(run.Population)
}

// TestServiceMemoryPerClient: a Service of 1,000,000 clients (a k-of-n
// run with k = 1,000, and a check-in run whose coins select the
// population's clients at rate 0.001) holds at most 16 bytes of heap per
// client in the sampled run (8 today) and maxServiceBytesPerClient under
// check-in (40 today).
func TestServiceMemoryPerClient(t *testing.T) {
	const n = 1_000_000
	checkIn := checkInRun(n)
	checkIn.Rate, checkIn.PerRound = 0.001, n/1000
	for _, c := range []struct {
		name          string
		run           protocol.RunConfig
		selectCheckIn bool
		most          float64
	}{
		{"sampled", runCfg(n, 1000, 1000, 3), false, 16}, // slotOf and the sampler's scratch: two int32
		{"check-in", checkIn, true, maxServiceBytesPerClient},
	} {
		t.Run(c.name, func(t *testing.T) {
			per := serviceBytesPerClient(t, c.run, c.selectCheckIn)
			t.Logf("%.1f bytes of heap per client of the population", per)
			if per > c.most {
				t.Fatalf("%.1f bytes per client, more than %g", per, c.most)
			}
		})
	}
}
