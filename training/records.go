package training

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// ReadRecords reads a JSONL metrics file written by a run (one Record per
// line; blank lines are skipped). A record with a negative epsilon is an
// error: a spent privacy budget is never below zero.
func ReadRecords(path string) ([]Record, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer fh.Close()
	var recs []Record
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("metrics: %s line %d: %w", path, n, err)
		}
		if r.Epsilon != nil && *r.Epsilon < 0 {
			return nil, fmt.Errorf("metrics: %s line %d: epsilon %g is negative (a spent privacy budget is >= 0)", path, n, *r.Epsilon)
		}
		if r.EpsilonNeurIPS21 != nil && *r.EpsilonNeurIPS21 < 0 {
			return nil, fmt.Errorf("metrics: %s line %d: epsilon_neurips21 %g is negative", path, n, *r.EpsilonNeurIPS21)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("metrics: %s: %w", path, err)
	}
	return recs, nil
}
