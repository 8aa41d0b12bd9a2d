package deploy

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/node"
	"github.com/shuffledp/shuffledp/training"
)

// TestCheckServerOptions: each option a networked server refuses is named
// by its flag; a complete set passes.
func TestCheckServerOptions(t *testing.T) {
	for _, tc := range []struct {
		state, pki string
		o          training.Options
		want       string
	}{
		{"", "p", training.Options{}, "state is required"},
		{"s", "", training.Options{}, "pki is required"},
		{"s", "p", training.Options{Validation: 10}, "validation"},
		{"s", "p", training.Options{CryptoNoise: true}, "crypto-noise"},
		{"s", "p", training.Options{}, ""},
	} {
		err := CheckServerOptions(tc.state, tc.pki, tc.o)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("CheckServerOptions(%q, %q, %+v) = %v, want %q", tc.state, tc.pki, tc.o, err, tc.want)
		}
	}
}

// TestOpenShufflerRefusalReleasesState: a shuffler whose bundle has no
// client-credential secret is refused after its state directory was
// locked; the lock is released, so the next start can take it.
func TestOpenShufflerRefusalReleasesState(t *testing.T) {
	state := filepath.Join(t.TempDir(), "shuffler")
	for range 2 {
		_, err := OpenShuffler(context.Background(), state, "", t.TempDir(), node.ShufflerConfig{})
		if err == nil || strings.Contains(err.Error(), "lock") {
			t.Fatalf("OpenShuffler with an empty bundle: %v, want a refusal that is not the lock", err)
		}
	}
}
