package node

import (
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
)

// TestShufflerAdjacencyPin: the trusted shuffler, not the untrusted
// server, decides the weakest neighbouring relation a Gaussian run is
// debited for. A replace-one shuffler refuses a zero-out run (its epsilon
// would be the smaller zero-out one); a zero-out shuffler accepts both; the
// eps0-LDP randomizers are unaffected.
func TestShufflerAdjacencyPin(t *testing.T) {
	for _, tc := range []struct {
		own, randomizer, run string
		refused              bool
	}{
		{event.AdjacencyReplaceOne, protocol.RandomizerGaussian, event.AdjacencyZeroOut, true},
		{event.AdjacencyReplaceOne, protocol.RandomizerGaussian, event.AdjacencyReplaceOne, false},
		{event.AdjacencyZeroOut, protocol.RandomizerGaussian, event.AdjacencyZeroOut, false},
		{event.AdjacencyZeroOut, protocol.RandomizerGaussian, event.AdjacencyReplaceOne, false},
		{event.AdjacencyReplaceOne, "rinf", "", false},
	} {
		own := tc.own
		sh, err := NewShuffler(ShufflerConfig{TLS: tlsStub(), ServerTLS: tlsStub(), Enroller: &pki.Enroller{},
			Store: ledger.NewMemoryStore(), Delta: 1e-5, Adjacency: own})
		if err != nil {
			t.Fatal(err)
		}
		sh.run = protocol.RunConfig{Run: "r", Randomizer: tc.randomizer, Adjacency: tc.run}
		_, err = sh.budgetParams(&pb.RunSpec{Delta: 1e-5})
		if tc.refused {
			if err == nil || !strings.HasPrefix(err.Error(), "adjacency:") {
				t.Errorf("shuffler %s, %s run %s: %v; want a refusal naming adjacency", own, tc.randomizer, tc.run, err)
			}
		} else if err != nil {
			t.Errorf("shuffler %s, %s run %q: %v; want accepted", own, tc.randomizer, tc.run, err)
		}
	}
	// The default (empty) is replace-one; an unknown relation is refused.
	sh, err := NewShuffler(ShufflerConfig{TLS: tlsStub(), ServerTLS: tlsStub(), Enroller: &pki.Enroller{},
		Store: ledger.NewMemoryStore(), Delta: 1e-5})
	if err != nil || sh.cfg.Adjacency != event.AdjacencyReplaceOne {
		t.Errorf("default adjacency %q, %v; want %s", sh.cfg.Adjacency, err, event.AdjacencyReplaceOne)
	}
	for _, bad := range []string{event.AdjacencyAddRemove, "replace"} {
		_, err := NewShuffler(ShufflerConfig{TLS: tlsStub(), ServerTLS: tlsStub(), Enroller: &pki.Enroller{},
			Store: ledger.NewMemoryStore(), Delta: 1e-5, Adjacency: bad})
		if err == nil || !strings.HasPrefix(err.Error(), "adjacency") {
			t.Errorf("NewShuffler(adjacency %q): %v; want an error naming adjacency", bad, err)
		}
	}
}
