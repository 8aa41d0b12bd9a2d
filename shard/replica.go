package shard

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shuffler"
)

// Coordinator is the server's side of a sharded run as a replica sees it
// (a Collector, or a transport to one): which round a shard owes, and the
// delivery of its released batch.
type Coordinator interface {
	// Next returns the round shard i owes a batch for (waiting while it
	// owes none); done once the run is finished.
	Next(ctx context.Context, i int) (round int64, done bool, err error)
	// Deliver hands over shard i's released batch of round.
	Deliver(ctx context.Context, i int, round int64, b protocol.Batch) error
}

// ReportFunc returns the sealed report of client (a global client id) for
// a shard's round: the clients' side, which a deployment carries over the
// network and a test simulates.
type ReportFunc func(ctx context.Context, r protocol.Round, client int64) ([]byte, error)

// ReplicaConfig configures a replica of one shard.
type ReplicaConfig struct {
	Plan  Plan
	Shard int
	// Run is the run's public configuration (randomizer, eps0, report
	// length; its population and k are the whole run's, Plan's).
	Run protocol.RunConfig
	// Store is the ledger shared by every replica (PostgreSQL); LeaseURL
	// the same database's URL, for the lease's own session.
	Store    ledger.Backend
	LeaseURL string
	// LeaseTTL is the lease's TTL (AcquireTTL; 0: DefaultLeaseTTL): how
	// long a paused replica keeps the shard.
	LeaseTTL time.Duration
	// Delta and Target are the ledger's (Target 0: none).
	Delta, Target float64
	Coord         Coordinator
	Report        ReportFunc
	// Randomness samples and permutes (nil: crypto/rand).
	Randomness shuffler.Randomness
	// Leased, if not nil, is called once the lease is held, before the
	// first round.
	Leased func(l *Lease)
	Log    *log.Logger
}

// PartConfig returns the shard's own RunConfig: run's with the shard's run
// id, population n_s, k_s and minimum batch.
func PartConfig(run protocol.RunConfig, part Part) protocol.RunConfig {
	run.Run = part.Run
	run.Population = int(part.N())
	run.PerRound = int(part.K)
	run.MinBatch = int(part.MinBatch)
	return run
}

// RunReplica serves shard cfg.Shard for as long as it holds the shard's
// lease: it waits for the lease (a standby waits here until the active
// replica's session ends), opens the shard's ledger rows (continuing after
// the last round any replica debited), and for every round the
// coordinator asks of the shard samples k_s of its n_s clients, collects
// their reports, debits the shard's event (subsampled shuffle of n_s, k_s)
// — after checking that the lease is still held — and only then delivers
// the permuted batch. It returns nil when the run is finished.
//
// A round debited but not delivered (a crash between, or a delivery the
// coordinator refused) is counted and never released; the next replica
// continues with a fresh round id, so no ledger row is ever used for two
// batches.
func RunReplica(ctx context.Context, cfg ReplicaConfig) error {
	if cfg.Shard < 0 || cfg.Shard >= len(cfg.Plan.Parts) {
		return fmt.Errorf("shard must be in [0, %d), got %d", len(cfg.Plan.Parts), cfg.Shard)
	}
	part := cfg.Plan.Parts[cfg.Shard]
	run := PartConfig(cfg.Run, part)
	if err := run.Validate(); err != nil {
		return err
	}
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			cfg.Log.Printf(format, args...)
		}
	}
	logf("shard %d (%s): waiting for the lease", cfg.Shard, part.Run)
	ttl := cfg.LeaseTTL
	if ttl == 0 {
		ttl = DefaultLeaseTTL
	}
	lease, err := AcquireTTL(ctx, cfg.LeaseURL, cfg.Plan.Run, cfg.Shard, len(cfg.Plan.Parts), ttl)
	if err != nil {
		return err
	}
	defer lease.Release()
	if cfg.Leased != nil {
		cfg.Leased(lease)
	}
	l, err := ledger.Open(ctx, cfg.Store, part.Run, ledger.Options{Delta: cfg.Delta, Target: cfg.Target, Fence: lease.Fence()})
	if err != nil {
		return fmt.Errorf("shard %d: ledger: %w", cfg.Shard, err)
	}
	logf("shard %d: lease held after %v; ledger at round %d", cfg.Shard, lease.Waited.Round(time.Millisecond), max(l.LastRound(), 0))
	budget := &fencedBudget{lease: lease, LedgerBudget: shuffler.LedgerBudget{Ledger: l,
		Event: func(k int) event.Event { return run.Round(k).Event() }}}
	svc, err := shuffler.NewService(shuffler.ServiceConfig{Run: run, Budget: budget, Randomness: cfg.Randomness})
	if err != nil {
		return err
	}
	for {
		t, done, err := cfg.Coord.Next(ctx, cfg.Shard)
		if err != nil || done {
			return err
		}
		r, err := svc.Open(ctx, protocol.Model{Run: run.Run, Version: t})
		if err != nil {
			return fmt.Errorf("shard %d: %w", cfg.Shard, err)
		}
		for _, c := range svc.Sampled() {
			rep, err := cfg.Report(ctx, r, part.Lo+int64(c))
			if err != nil {
				svc.Abandon()
				return fmt.Errorf("shard %d: client %d: %w", cfg.Shard, part.Lo+int64(c), err)
			}
			if err := svc.Submit(c, r.ID, rep); err != nil {
				svc.Abandon()
				return fmt.Errorf("shard %d: client %d: %w", cfg.Shard, part.Lo+int64(c), err)
			}
		}
		_, err = svc.Release(ctx, func(ctx context.Context, b protocol.Batch) error {
			return cfg.Coord.Deliver(ctx, cfg.Shard, t, b)
		})
		switch {
		case err == nil:
			logf("shard %d: round %d (server round %d) debited and delivered", cfg.Shard, r.ID, t)
		case errors.Is(err, ErrAlreadyDelivered):
			// Debited, refused by the coordinator: counted, not released.
			logf("shard %d: round %d debited, not delivered (%v)", cfg.Shard, r.ID, err)
		default:
			return fmt.Errorf("shard %d: round %d: %w", cfg.Shard, r.ID, err)
		}
	}
}

// fencedBudget debits the shard's ledger only while the lease is held.
type fencedBudget struct {
	lease *Lease
	shuffler.LedgerBudget
}

// Debit implements shuffler.Budget: the lease is checked (an early stop),
// then the ledger debited under the lease's fence (ledger.ErrFenced once
// another replica took the shard, checked in the debit's transaction; the
// stale-view check refusing a debit on rows another replica has written
// since this one loaded them).
func (b *fencedBudget) Debit(ctx context.Context, r shuffler.Release) error {
	if err := b.lease.Check(ctx); err != nil {
		return err
	}
	return b.LedgerBudget.Debit(ctx, r)
}
