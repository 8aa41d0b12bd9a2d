package training

import (
	"bytes"
	"testing"

	"github.com/shuffledp/shuffledp/server"
)

// TestReplayAfterCrash: a run checkpoints after m rounds, releases 3 more
// (debited in the shared ledger), and dies before its next checkpoint; a
// restart resumes from the checkpoint with the same ledger and runs to n.
//
//   - Seeded simulation: the replayed rounds recompute bit-identical
//     batches under the same round ids; the ledger recognises each (same
//     run, round, event, digest) and debits none twice: it ends with n
//     rounds, the model equals a straight run's, and every batch the server
//     ever received (6 + n-m receipts) is in the ledger.
//   - Crypto noise: the replayed rounds draw fresh noise, so they are new
//     releases and are charged under fresh round ids: the ledger ends with
//     n + 3 rounds, one for every batch the server received (the defect of
//     the checkpoint-owned ledger was to say n).
func TestReplayAfterCrash(t *testing.T) {
	const m, lost, n = 4, 3, 10
	for _, crypto := range []bool{false, true} {
		cfg := privateConfig(t)
		cfg.CryptoNoise = crypto
		l, err := OpenMemoryLedger(cfg, DefaultRunID)
		if err != nil {
			t.Fatal(err)
		}
		receipts := &server.MemoryReceipts{}
		first := runRounds(t, cfg, m, WithLedger(l), WithReceipts(receipts))
		var ckpt bytes.Buffer
		if err := first.WriteCheckpoint(&ckpt); err != nil {
			t.Fatal(err)
		}
		steps(t, first, lost) // released and debited, then the process dies

		resumed := runRounds(t, cfg, 0, WithLedger(l), WithReceipts(receipts))
		if err := resumed.ReadCheckpoint(&ckpt); err != nil {
			t.Fatal(err)
		}
		steps(t, resumed, n-m)

		wantRounds := int64(n)
		if crypto {
			wantRounds = n + lost
		}
		if got := l.Rounds(); got != wantRounds {
			t.Fatalf("crypto=%v: ledger holds %d rounds, want %d", crypto, got, wantRounds)
		}
		debited := map[[32]byte]bool{}
		for _, e := range l.Entries() {
			debited[e.Digest] = true
		}
		rc := receipts.Receipts()
		if len(rc) != m+lost+n-m {
			t.Fatalf("crypto=%v: %d receipts, want %d", crypto, len(rc), m+lost+n-m)
		}
		distinct := map[[32]byte]bool{}
		for _, r := range rc {
			if !debited[r.Digest] {
				t.Fatalf("crypto=%v: the server received round %d's batch, which the ledger never debited", crypto, r.Round)
			}
			distinct[r.Digest] = true
		}
		if int64(len(distinct)) != l.Rounds() {
			t.Fatalf("crypto=%v: %d distinct batches received, %d debited", crypto, len(distinct), l.Rounds())
		}
		if !crypto && !bitwiseEqual(resumed.Model().Params(), runRounds(t, cfg, n).Model().Params()) {
			t.Fatal("seeded replay differs from the straight run")
		}
	}
}
