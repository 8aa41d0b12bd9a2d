package route

import (
	"testing"

	"github.com/shuffledp/shuffledp/event"
)

// TestHasPLDRoute: every mechanism has a PLD route (a dominating pair in
// package pld).
func TestHasPLDRoute(t *testing.T) {
	for _, m := range event.Mechanisms() {
		if got, want := HasPLDRoute(m), m != ""; got != want {
			t.Errorf("HasPLDRoute(%s) = %v", m, got)
		}
	}
}
