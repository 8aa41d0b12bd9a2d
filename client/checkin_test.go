package client

import (
	"math"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/randomizer"
)

// countingSource returns fixed words and counts them.
type countingSource struct {
	words []uint64
	n     int
}

func (c *countingSource) Uint64() uint64 { w := c.words[c.n%len(c.words)]; c.n++; return w }

// TestCheckIn: the decision compares one word with rate * 2^64 (exactly at
// the threshold's edge), rate 1 always checks in and still draws one word,
// and a rate outside (0, 1] is refused naming the flag.
func TestCheckIn(t *testing.T) {
	thr := uint64(math.Ldexp(0.1, 64))
	for _, tc := range []struct {
		word uint64
		want bool
	}{{0, true}, {thr - 1, true}, {thr, false}, {math.MaxUint64, false}} {
		src := &countingSource{words: []uint64{tc.word}}
		if got, err := CheckIn(0.1, src); err != nil || got != tc.want || src.n != 1 {
			t.Errorf("word %#x: %v, %v after %d draws; want %v after 1", tc.word, got, err, src.n, tc.want)
		}
	}
	src := &countingSource{words: []uint64{math.MaxUint64}}
	if got, err := CheckIn(1, src); err != nil || !got || src.n != 1 {
		t.Errorf("rate 1: %v, %v, %d draws", got, err, src.n)
	}
	for _, rate := range []float64{0, -0.1, 1.5, math.NaN()} {
		if _, err := CheckIn(rate, randomizer.NewSeededSource(1)); err == nil || !strings.HasPrefix(err.Error(), "rate") {
			t.Errorf("rate %g: %v, want an error naming rate", rate, err)
		}
	}
}
