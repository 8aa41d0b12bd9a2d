package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRead: blank lines are skipped, fields and nulls come back as written,
// and a negative epsilon (a spent budget is never below zero) or a line
// that is not JSON is an error naming the line.
func TestRead(t *testing.T) {
	cases := []struct {
		name, body string
		rounds     []int
		err        string
	}{
		{"two records and a blank line", `{"round":0,"epoch":0,"test_accuracy":0.1,"epsilon":null}` + "\n\n" +
			`{"round":6,"epoch":1,"test_accuracy":0.5,"epsilon":0.25,"epsilon_neurips21":0.3}` + "\n", []int{0, 6}, ""},
		{"negative epsilon", `{"round":6,"epsilon":-0.1}` + "\n", nil, "line 1: epsilon -0.1 is negative"},
		{"negative paper epsilon", "\n" + `{"round":6,"epsilon":0.1,"epsilon_neurips21":-1}` + "\n", nil, "line 2: epsilon_neurips21 -1 is negative"},
		{"not JSON", "round 6\n", nil, "line 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.jsonl")
			if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			recs, err := Read(path)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != len(c.rounds) {
				t.Fatalf("%d records, want %d", len(recs), len(c.rounds))
			}
			for i, r := range recs {
				if r.Round != c.rounds[i] {
					t.Errorf("record %d: round %d, want %d", i, r.Round, c.rounds[i])
				}
			}
			if recs[0].Epsilon != nil || recs[1].Epsilon == nil || *recs[1].Epsilon != 0.25 || *recs[1].EpsilonNeurIPS21 != 0.3 {
				t.Errorf("epsilons %v, %v", recs[0].Epsilon, recs[1].Epsilon)
			}
		})
	}
}
