package training

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"testing"

	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/shuffler"
)

// recordingBudget is a shuffler.Budget that records every release and can
// refuse from a given round on; it knows the last round debited, as a
// durable ledger does.
type recordingBudget struct {
	releases []shuffler.Release
	refuseAt int64
}

func (b *recordingBudget) LastRound(context.Context, string) (int64, error) {
	if len(b.releases) == 0 {
		return 0, nil
	}
	return b.releases[len(b.releases)-1].Round, nil
}

var errRefused = errors.New("refused by the test budget")

func (b *recordingBudget) Debit(_ context.Context, r shuffler.Release) error {
	if b.refuseAt > 0 && r.Round >= b.refuseAt {
		return errRefused
	}
	b.releases = append(b.releases, r)
	return nil
}

// TestRolesWiring: every round's batch is debited once, with the digest
// of exactly the batch the server received, before the server receives
// it; an external budget (WithBudget) is debited before the ledger, and a
// refusal reaches neither; results are those of the default budget.
func TestRolesWiring(t *testing.T) {
	cfg := privateConfig(t)
	budget := &recordingBudget{}
	receipts := &server.MemoryReceipts{}
	tr, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), nil, WithBudget(budget), WithReceipts(receipts))
	if err != nil {
		t.Fatal(err)
	}
	steps(t, tr, 6)
	rc := receipts.Receipts()
	if len(budget.releases) != 6 || len(rc) != 6 || tr.Ledger().Rounds() != 6 {
		t.Fatalf("%d debits, %d receipts, ledger %d rounds; want 6 each", len(budget.releases), len(rc), tr.Ledger().Rounds())
	}
	for i, r := range budget.releases {
		if r.Round != int64(i+1) || r.Reports != cfg.Sample || r.Run != DefaultRunID ||
			rc[i].Round != r.Round || rc[i].Digest != r.Digest || rc[i].Reports != r.Reports {
			t.Fatalf("round %d: debit %+v, receipt %+v", i+1, r, rc[i])
		}
	}
	if !bitwiseEqual(tr.Model().Params(), runRounds(t, cfg, 6).Model().Params()) {
		t.Fatal("an external budget changed the results")
	}

	// A refused debit: the round is discarded, the server receives nothing
	// and the model does not move.
	budget.refuseAt = 7
	before := append([]float64(nil), tr.Model().Params()...)
	if _, err := tr.Step(); !errors.Is(err, errRefused) || !errors.Is(err, shuffler.ErrNotDebited) {
		t.Fatalf("Step with a refusing budget: %v", err)
	}
	if len(receipts.Receipts()) != 6 || tr.Round() != 6 || tr.Ledger().Rounds() != 6 || !bitwiseEqual(before, tr.Model().Params()) {
		t.Fatal("a refused round reached the server or the ledger")
	}

	// A restart from a checkpoint taken after round 2 (the budget holds 6
	// rounds): round ids continue after the budget's last, 6, not the
	// checkpoint's.
	budget.refuseAt = 0
	early := runRounds(t, cfg, 2)
	var ckpt bytes.Buffer
	if err := early.WriteCheckpoint(&ckpt); err != nil {
		t.Fatal(err)
	}
	restarted, err := New(cfg, newLogReg(t, 10, 4), blobs(cfg.Clients, 10, 4, 1, 1), nil, WithBudget(budget))
	if err != nil {
		t.Fatal(err)
	}
	if err := restarted.ReadCheckpoint(&ckpt); err != nil {
		t.Fatal(err)
	}
	steps(t, restarted, 1)
	if got := budget.releases[len(budget.releases)-1].Round; got != 7 {
		t.Fatalf("first round after the restart debited as round %d, want 7 (round 7 was refused, never debited)", got)
	}
}

// TestTargetEpsilonStopsBeforeSampling: with the in-memory ledger, a round
// that would exceed the target is refused before any client works, and
// Run reports StopTargetEpsilon.
func TestTargetEpsilonStopsBeforeSampling(t *testing.T) {
	cfg := privateConfig(t)
	cfg.TargetEpsilon = bestEpsilon(t, cfg.RoundEvent(), 3, cfg.Delta) // exactly 3 rounds fit, by best (PLD included)
	tr := runRounds(t, cfg, 3)
	state, _ := tr.simulation().sim.master.MarshalBinary()
	if _, err := tr.Step(); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("fourth round: %v, want ErrBudgetExhausted", err)
	}
	after, _ := tr.simulation().sim.master.MarshalBinary()
	if !bytes.Equal(state, after) || tr.Round() != 3 || tr.simulation().shuf.LastRound() != 3 {
		t.Fatal("a refused round drew from the generator or used a round id")
	}
	reason, err := tr.Run(context.Background(), Hooks{})
	if err != nil || reason != StopTargetEpsilon {
		t.Fatalf("Run = %v, %v", reason, err)
	}
}

// TestCheckpointVersion1: a checkpoint of the single-struct trainer
// (version 1, flat fields) resumes bit for bit.
func TestCheckpointVersion1(t *testing.T) {
	const n, m = 9, 4
	for _, cfg := range determinismConfigs(t) {
		if cfg.gaussian() { // version-1 checkpoints predate the Gaussian runs
			continue
		}
		t.Run(cfg.Randomizer, func(t *testing.T) {
			first := runRounds(t, cfg, m)
			rng, err := first.simulation().sim.master.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			v1 := checkpointState{Version: 1, Model: first.model.Name(), NumParams: first.model.NumParams(),
				Clients: cfg.Clients, Sample: cfg.Sample, Randomizer: cfg.Randomizer, ClipNorm: first.cfg.ClipNorm,
				Clip: cfg.Clip, Eps0: cfg.Eps0, Seed: cfg.Seed, Project: cfg.ProjectRadius,
				Round: m, LedgerRounds: m, RNG: rng, Params: first.Model().Params()}
			var body bytes.Buffer
			if err := gob.NewEncoder(&body).Encode(&v1); err != nil {
				t.Fatal(err)
			}
			var file bytes.Buffer
			file.WriteString(checkpointMagic)
			file.Write(body.Bytes())
			sum := sha256Sum(body.Bytes())
			file.Write(sum[:])
			resumed := runRounds(t, cfg, 0)
			if err := resumed.ReadCheckpoint(&file); err != nil {
				t.Fatal(err)
			}
			steps(t, resumed, n-m)
			if !bitwiseEqual(runRounds(t, cfg, n).Model().Params(), resumed.Model().Params()) {
				t.Fatal("resumed from version 1 differs from the straight run")
			}
			if resumed.simulation().shuf != nil && resumed.simulation().shuf.LastRound() != n {
				t.Fatalf("last round id %d after resuming, want %d", resumed.simulation().shuf.LastRound(), n)
			}
		})
	}
}
