package data

import (
	"testing"
)

func TestHoldOutPartitions(t *testing.T) {
	const n, dim = 1000, 3
	d := &Dataset{N: n, Dim: dim, Rows: dim, Cols: 1, Channels: 1, Classes: 10,
		X: make([]float64, n*dim), Y: make([]int, n)}
	for i := 0; i < n; i++ {
		d.X[i*dim] = float64(i) // the example's identity
		d.Y[i] = i % 10
	}
	tr, va, err := d.HoldOut(200, DefaultHoldOutSeed)
	if err != nil {
		t.Fatal(err)
	}
	if tr.N != 800 || va.N != 200 || len(tr.X) != 800*dim || len(va.Y) != 200 {
		t.Fatalf("sizes: train %d/%d, validation %d/%d", tr.N, len(tr.X), va.N, len(va.Y))
	}
	seen := make([]int, n)
	for _, part := range []*Dataset{tr, va} {
		last := -1
		for i := 0; i < part.N; i++ {
			id := int(part.Example(i)[0])
			if id <= last {
				t.Fatalf("order not kept: %d after %d", id, last)
			}
			last = id
			if part.Y[i] != id%10 {
				t.Fatalf("label of %d moved", id)
			}
			seen[id]++
		}
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("example %d appears %d times across the parts", id, c)
		}
	}
	// Not simply the tail: the held-out part spreads over the whole set.
	if first := int(va.Example(0)[0]); first > 100 {
		t.Errorf("held-out part starts at %d: not a random subset", first)
	}
	// Deterministic for the seed, different for another seed.
	_, va2, _ := d.HoldOut(200, DefaultHoldOutSeed)
	_, va3, _ := d.HoldOut(200, DefaultHoldOutSeed+1)
	same, other := true, true
	for i := range va.Y {
		same = same && va.X[i*dim] == va2.X[i*dim]
		other = other && va.X[i*dim] == va3.X[i*dim]
	}
	if !same || other {
		t.Errorf("split not a function of the seed (same %v, other seed identical %v)", same, other)
	}
}

func TestHoldOutRejectsSizes(t *testing.T) {
	d := &Dataset{N: 10, Dim: 1, Rows: 1, Cols: 1, Channels: 1, Classes: 1, X: make([]float64, 10), Y: make([]int, 10)}
	for _, h := range []int{-1, 0, 10, 11} {
		if _, _, err := d.HoldOut(h, 1); err == nil {
			t.Errorf("HoldOut(%d): no error", h)
		}
	}
}
