package shard

import (
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		n, k     int64
		shards   int
		minBatch int64
		ns, ks   []int64
		mb       []int64
	}{
		{n: 10, k: 4, shards: 1, ns: []int64{10}, ks: []int64{4}, mb: []int64{1}},
		{n: 30, k: 9, shards: 3, ns: []int64{10, 10, 10}, ks: []int64{3, 3, 3}, mb: []int64{1, 1, 1}},
		{n: 11, k: 5, shards: 3, ns: []int64{4, 4, 3}, ks: []int64{2, 2, 1}, mb: []int64{1, 1, 1}},
		{n: 100, k: 10, shards: 4, minBatch: 8, ns: []int64{25, 25, 25, 25}, ks: []int64{3, 3, 2, 2}, mb: []int64{3, 3, 2, 2}},
		{n: 100, k: 10, shards: 2, minBatch: 3, ns: []int64{50, 50}, ks: []int64{5, 5}, mb: []int64{2, 2}},
	} {
		p, err := Split("r", c.n, c.k, c.shards, c.minBatch)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		var sumN, sumK int64
		for i, part := range p.Parts {
			if part.N() != c.ns[i] || part.K != c.ks[i] || part.MinBatch != c.mb[i] {
				t.Errorf("%+v: shard %d = n_s %d k_s %d min %d, want %d %d %d", c, i, part.N(), part.K, part.MinBatch, c.ns[i], c.ks[i], c.mb[i])
			}
			if part.Lo != sumN {
				t.Errorf("%+v: shard %d starts at %d, want %d (contiguous)", c, i, part.Lo, sumN)
			}
			sumN += part.N()
			sumK += part.K
			for _, client := range []int64{part.Lo, part.Hi - 1} {
				if p.Of(int(client)) != i {
					t.Errorf("%+v: client %d in shard %d, Of says %d", c, client, i, p.Of(int(client)))
				}
			}
			run, j, s, err := ParseRunID(part.Run)
			if err != nil || run != "r" || j != i || s != c.shards {
				t.Errorf("ParseRunID(%q) = %q %d %d %v", part.Run, run, j, s, err)
			}
		}
		if sumN != c.n || sumK != c.k {
			t.Errorf("%+v: shards cover %d clients and %d reports", c, sumN, sumK)
		}
		if p.Of(int(c.n)) != -1 || p.Of(-1) != -1 {
			t.Errorf("%+v: a client outside the run has a shard", c)
		}
	}
}

func TestSplitRefuses(t *testing.T) {
	for _, c := range []struct {
		n, k     int64
		shards   int
		minBatch int64
		want     string
	}{
		{10, 4, 0, 0, "shards"},
		{0, 0, 1, 0, "n (population)"},
		{10, 2, 3, 0, "at least the number of shards"},
		{10, 11, 1, 0, "at most n"},
		{10, 4, 2, 5, "min batch"},
		{5, 5, 2, 0, "too large"}, // 3 of 3 and 2 of 2 fit; k=5 of n=5 in 2: 3,2 of 3,2 fits
	} {
		_, err := Split("r", c.n, c.k, c.shards, c.minBatch)
		if c.want == "too large" {
			if err != nil {
				t.Errorf("%+v: %v", c, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", c, err, c.want)
		}
	}
	if _, err := Split("", 10, 2, 2); err == nil {
		t.Error("an empty run id was accepted")
	}
}

func TestParseRunID(t *testing.T) {
	for id, ok := range map[string]bool{
		"run":                    true,
		"run#shard-0-of-2":       true,
		"a#shard-1#shard-2-of-3": true,
		"run#shard-2-of-2":       false,
		"run#shard-1-of-1":       false,
		"run#shard-01-of-2":      false,
		"run#shard-x-of-2":       false,
		"run#shard-1":            false,
	} {
		run, i, s, err := ParseRunID(id)
		if (err == nil) != ok {
			t.Errorf("ParseRunID(%q): %v", id, err)
			continue
		}
		if ok && RunID(run, i, s) != id {
			t.Errorf("ParseRunID(%q) = %q %d %d, which RunID does not give back", id, run, i, s)
		}
	}
}
