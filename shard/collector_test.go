package shard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/protocol"
)

func batchOf(run string, round int64, reports int) protocol.Batch {
	b := protocol.Batch{Run: run, Round: round}
	for i := range reports {
		b.Reports = append(b.Reports, []byte{byte(i)})
	}
	return b
}

func TestCollector(t *testing.T) {
	p, err := Split("c", 6, 3, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCollector(p, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range p.Parts {
		if r, done, err := c.Next(ctx, i); r != 1 || done || err != nil {
			t.Fatalf("shard %d: Next = %d %v %v, want round 1", i, r, done, err)
		}
	}
	// Checks against the shard's part: run id and size in [min batch, k_s].
	for _, b := range []protocol.Batch{batchOf("c", 1, 2), batchOf(p.Parts[0].Run, 1, 3), batchOf(p.Parts[0].Run, 1, 0)} {
		if err := c.Offer(0, 1, b); err == nil {
			t.Errorf("batch of run %q with %d reports accepted for shard 0 (%q, k_s %d, min %d)", b.Run, len(b.Reports), p.Parts[0].Run, p.Parts[0].K, p.Parts[0].MinBatch)
		}
	}
	if err := c.Offer(0, 2, batchOf(p.Parts[0].Run, 7, 2)); !errors.Is(err, ErrNotCurrent) {
		t.Errorf("a batch of a future round: %v, want ErrNotCurrent", err)
	}
	if err := c.Offer(0, 1, batchOf(p.Parts[0].Run, 7, 2)); err != nil {
		t.Fatal(err)
	}
	if err := c.Offer(0, 1, batchOf(p.Parts[0].Run, 8, 2)); !errors.Is(err, ErrAlreadyDelivered) {
		t.Errorf("a second batch of (shard 0, round 1): %v, want ErrAlreadyDelivered", err)
	}
	// Shard 0 owes nothing until round 1 is complete.
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	if _, _, err := c.Next(short, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("shard 0 was handed a round while it owed none: %v", err)
	}
	cancelShort()
	if err := c.Offer(1, 1, batchOf(p.Parts[1].Run, 3, 1)); err != nil {
		t.Fatal(err)
	}
	r, bs, err := c.Take(ctx)
	if err != nil || r != 1 || len(bs) != 2 || bs[0].Round != 7 || bs[1].Round != 3 {
		t.Fatalf("Take = %d %v %v", r, bs, err)
	}
	if err := c.Offer(1, 1, batchOf(p.Parts[1].Run, 4, 1)); !errors.Is(err, ErrAlreadyDelivered) {
		t.Errorf("a late batch of a taken round: %v, want ErrAlreadyDelivered", err)
	}
	if r, _, _ := c.Next(ctx, 0); r != 2 {
		t.Fatalf("after round 1 shard 0 owes round %d, want 2", r)
	}
	for i := range p.Parts {
		if err := c.Offer(i, 2, batchOf(p.Parts[i].Run, 9, int(p.Parts[i].K))); err != nil {
			t.Fatal(err)
		}
	}
	if r, _, err := c.Take(ctx); r != 2 || err != nil {
		t.Fatalf("Take = %d %v", r, err)
	}
	if _, done, err := c.Next(ctx, 1); !done || err != nil {
		t.Errorf("after the last round Next = done %v, %v", done, err)
	}
}
