package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/shuffledp/shuffledp/protocol"
)

// Errors of Collector.Offer.
var (
	// ErrAlreadyDelivered: the shard already delivered a batch for the
	// round. The second batch is refused, never added: a round is
	// released to the server at most once per shard.
	ErrAlreadyDelivered = errors.New("the shard already delivered a batch for this round")
	// ErrNotCurrent: the batch is for a round other than the one the
	// collector is gathering.
	ErrNotCurrent = errors.New("not the round being collected")
)

// Collector is the server's side of a sharded round: it hands every shard
// the round it owes a batch for (Next), takes exactly one batch per
// (shard, round) (Offer), and when every shard has delivered returns the
// round's batches in shard order (Take), which the server opens and sums
// as one round (the sum of the shards' sums, divided by the total number
// of reports). What the server learns is exactly the tuple of the shards'
// released batches: no client identity, no dummy count, nothing a shard's
// shuffler did not release.
type Collector struct {
	plan Plan
	last int64 // the last round of the run (0: no limit)

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	round   int64         // the round being collected
	got     []*protocol.Batch
	done    bool
}

// NewCollector returns the collector of plan's shards, gathering rounds
// 1..rounds (0: until Finish).
func NewCollector(plan Plan, rounds int64) *Collector {
	return &Collector{plan: plan, last: rounds, changed: make(chan struct{}), round: 1,
		got: make([]*protocol.Batch, len(plan.Parts))}
}

func (c *Collector) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Next returns the round shard i owes a batch for, waiting while it has
// delivered the current round's; done is true once the run is finished.
func (c *Collector) Next(ctx context.Context, i int) (round int64, done bool, err error) {
	if i < 0 || i >= len(c.got) {
		return 0, false, fmt.Errorf("shard %d of %d", i, len(c.got))
	}
	for {
		c.mu.Lock()
		r, d, have, ch := c.round, c.done, c.got[i] != nil, c.changed
		c.mu.Unlock()
		if d {
			return 0, true, nil
		}
		if !have {
			return r, false, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, false, ctx.Err()
		}
	}
}

// Offer takes shard i's batch of round, checked against the shard's part
// (run id, at least its minimum batch and at most k_s reports); a second
// batch of the same (shard, round) is refused with ErrAlreadyDelivered.
func (c *Collector) Offer(i int, round int64, b protocol.Batch) error {
	if i < 0 || i >= len(c.got) {
		return fmt.Errorf("shard %d of %d", i, len(c.got))
	}
	part := c.plan.Parts[i]
	if b.Run != part.Run {
		return fmt.Errorf("shard %d: batch of run %q, the shard's is %q", i, b.Run, part.Run)
	}
	if n := int64(len(b.Reports)); n < part.MinBatch || n > part.K {
		return fmt.Errorf("shard %d: batch of %d reports, the shard's batches have %d to %d", i, n, part.MinBatch, part.K)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.done:
		return fmt.Errorf("shard %d, round %d: the run is finished: %w", i, round, ErrNotCurrent)
	case round < c.round || (round == c.round && c.got[i] != nil):
		return fmt.Errorf("shard %d, round %d: %w", i, round, ErrAlreadyDelivered)
	case round != c.round:
		return fmt.Errorf("shard %d, round %d: collecting round %d: %w", i, round, c.round, ErrNotCurrent)
	}
	c.got[i] = &b
	c.signal()
	return nil
}

// Take waits until every shard delivered the current round and returns
// its batches in shard order, moving on to the next round (the run is
// finished after the last).
func (c *Collector) Take(ctx context.Context) (int64, []protocol.Batch, error) {
	for {
		c.mu.Lock()
		complete := !c.done
		for _, b := range c.got {
			complete = complete && b != nil
		}
		if complete {
			out := make([]protocol.Batch, len(c.got))
			for i, b := range c.got {
				out[i] = *b
				c.got[i] = nil
			}
			r := c.round
			c.round++
			if c.last > 0 && r >= c.last {
				c.done = true
			}
			c.signal()
			c.mu.Unlock()
			return r, out, nil
		}
		ch, done := c.changed, c.done
		c.mu.Unlock()
		if done {
			return 0, nil, errors.New("collector: the run is finished")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		}
	}
}

// Current returns the round being collected.
func (c *Collector) Current() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.round
}

// Finish ends the run: Next answers done.
func (c *Collector) Finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		c.done = true
		c.signal()
	}
}
