package node

import (
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/protocol"
)

// TestFirstMessageWait: the shuffler's wait for a stream's first message
// grows with the population (a Work request names every client of its
// pool's range), a configured wait replaces it, and a small run keeps
// about DefaultFirstMessage.
func TestFirstMessageWait(t *testing.T) {
	cases := []struct {
		clients    int
		configured time.Duration
		want       time.Duration
	}{
		{0, 0, DefaultFirstMessage},
		{1_000, 0, DefaultFirstMessage + 40*time.Millisecond},
		{1_000_000, 0, DefaultFirstMessage + 40*time.Second},
		{1_000_000, 300 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, c := range cases {
		if got := firstMessageWait(protocol.RunConfig{Population: c.clients}, c.configured); got != c.want {
			t.Errorf("%d clients, configured %v: %v, want %v", c.clients, c.configured, got, c.want)
		}
	}
}
