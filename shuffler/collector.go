package shuffler

import (
	"fmt"
	"sync"
)

// Collector accumulates reports submitted concurrently by clients and
// releases them as one shuffled batch once enough have arrived. It stores
// only report bytes (copied on Submit), never who submitted them or when,
// and its release order is a fresh uniform permutation, independent of the
// arrival order.
type Collector struct {
	s       *Shuffler
	mu      sync.Mutex
	size    int // report length fixed by the first report; -1 before
	pending [][]byte
}

// NewCollector returns a Collector that releases batches through s.
func NewCollector(s *Shuffler) *Collector {
	return &Collector{s: s, size: -1}
}

// Submit stores a copy of report. All reports must have the same length.
func (c *Collector) Submit(report []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size >= 0 && len(report) != c.size {
		return fmt.Errorf("%w: report has %d bytes, batch reports have %d", ErrReportLength, len(report), c.size)
	}
	c.size = len(report)
	c.pending = append(c.pending, append([]byte(nil), report...))
	return nil
}

// Pending is the number of reports waiting for release.
func (c *Collector) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// Release shuffles and returns all pending reports and empties the
// collector, or returns ErrBatchTooSmall (keeping the reports) if fewer than
// the shuffler's minimum have arrived.
func (c *Collector) Release() ([][]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, err := c.s.Shuffle(c.pending)
	if err != nil {
		return nil, err
	}
	for i := range c.pending {
		clear(c.pending[i]) // leave no unshuffled copy behind
	}
	c.pending, c.size = nil, -1
	return out, nil
}
