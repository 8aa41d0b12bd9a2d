package ledger

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNeighbouringOf: a run that recorded --examples-per-client or
// --local-steps above 1 (train's manifest, or up's server's) is named
// client-level; one at the defaults (the flags absent or 1), another
// flag above 1, or no readable manifest is not.
func TestNeighbouringOf(t *testing.T) {
	for _, c := range []struct {
		where, manifest string
		want            string
	}{
		{"", `{"run":"r","flags":{"examples-per-client":"4"}}`, NeighbouringClient},
		{"server", `{"run":"r","flags":{"local-steps":"3"}}`, NeighbouringClient},
		{"", `{"run":"r","flags":{"examples-per-client":"1","local-steps":"1","clients":"60"}}`, ""},
		{"", `{"run":"r","flags":{"clients":"600"}}`, ""},
		{"", `not json`, ""},
		{"elsewhere", `{"run":"r","flags":{"examples-per-client":"4"}}`, ""},
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, c.where), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.where, manifestFile), []byte(c.manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := neighbouringOf(dir); got != c.want {
			t.Errorf("%s/%s: %q, want %q", c.where, c.manifest, got, c.want)
		}
	}
}
