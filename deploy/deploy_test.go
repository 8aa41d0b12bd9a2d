package deploy

import (
	"context"
	"os"
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

// TestRunShufflerRefusesFirst: a shuffler process without its state
// directory, bundle or server, or whose operator-only pages would listen
// beyond loopback, is refused naming the flag before anything is bound or
// created; a server process with a negative batch timeout likewise.
func TestRunShufflerRefusesFirst(t *testing.T) {
	full := ShufflerProcess{State: filepath.Join(t.TempDir(), "s"), PKI: t.TempDir(), Node: node.ShufflerConfig{Server: "127.0.0.1:1"}}
	for _, tc := range []struct {
		edit func(*ShufflerProcess)
		want string
	}{
		{func(p *ShufflerProcess) { p.State = "" }, "state is required"},
		{func(p *ShufflerProcess) { p.PKI = "" }, "pki is required"},
		{func(p *ShufflerProcess) { p.Node.Server = "" }, "server is required"},
		{func(p *ShufflerProcess) { p.MetricsListen = "0.0.0.0:0" }, "--metrics-listen"},
		{func(p *ShufflerProcess) { p.HTTPListen = "0.0.0.0:0" }, "--http"},
	} {
		p := full
		tc.edit(&p)
		if err := RunShuffler(context.Background(), p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RunShuffler: %v, want an error containing %q", err, tc.want)
		}
		if _, err := os.Stat(full.State); !os.IsNotExist(err) {
			t.Errorf("the state directory was created: %v", err)
		}
	}
	if _, err := RunServer(context.Background(), ServerProcess{BatchTimeout: -1}); err == nil || !strings.Contains(err.Error(), "batch-timeout") {
		t.Errorf("RunServer with a negative batch timeout: %v", err)
	}
}
