package route

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/shuffledp/shuffledp/event"
)

// memo keeps the last cap results of a pure function of its key (first
// in, first out). `shuffledp account` asks for the same composition
// several times (the best row, the pld row, the certified interval's
// upper end); the PLD and the Best evaluations behind them cost up to
// seconds, their results a few numbers.
type memo[T any] struct {
	mu   sync.Mutex
	cap  int
	keys []string
	vals map[string]T
}

func newMemo[T any](capacity int) *memo[T] {
	return &memo[T]{cap: capacity, vals: map[string]T{}}
}

func (m *memo[T]) get(k string) (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.vals[k]
	return r, ok
}

func (m *memo[T]) put(k string, r T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.vals[k]; ok {
		return
	}
	if len(m.keys) == m.cap {
		delete(m.vals, m.keys[0])
		m.keys = m.keys[1:]
	}
	m.keys = append(m.keys, k)
	m.vals[k] = r
}

// memoKey identifies a query on composed events: the events in order
// (their %v form round-trips every float), the bits of delta and the
// orders (nil and empty alike: the events' default grid).
func memoKey(events []event.Composed, delta float64, orders []float64) string {
	var b strings.Builder
	for _, c := range events {
		fmt.Fprintf(&b, "%v;", c)
	}
	b.WriteString(strconv.FormatUint(math.Float64bits(delta), 16))
	for _, o := range orders {
		b.WriteByte(',')
		b.WriteString(strconv.FormatUint(math.Float64bits(o), 16))
	}
	return b.String()
}
