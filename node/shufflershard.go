package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shard"
)

// errAlreadyDelivered: the server already holds this shard's batch of the
// round (another replica of the shard delivered it before it died). The
// round is debited and not released: counted, never released twice.
var errAlreadyDelivered = errors.New("the server already holds this shard's batch of the round")

// takeShard makes the shuffler the replica of its shard: the shard's part
// of the run, then the shard's lease, waiting while another replica holds
// it (a standby waits here, before it listens or opens the ledger).
func (s *Shuffler) takeShard(ctx context.Context) error {
	if s.run.Participation == protocol.ParticipationCheckIn {
		return errors.New("shards: a sharded run samples k of n (participation sample), not check-in")
	}
	p, err := shard.Split(s.run.Run, int64(s.run.Population), int64(s.run.PerRound), s.cfg.Shards, int64(s.run.MinBatch))
	if err != nil {
		return fmt.Errorf("shards: %w", err)
	}
	part := p.Parts[s.cfg.Shard]
	s.local, s.lo = shard.PartConfig(s.run, part), part.Lo
	s.logf("shard %d of %d (%s): clients %d..%d, %d of them per round; waiting for the shard's lease",
		s.cfg.Shard, s.cfg.Shards, part.Run, part.Lo, part.Hi-1, part.K)
	ttl := s.cfg.LeaseTTL
	if ttl == 0 {
		ttl = shard.DefaultLeaseTTL
	}
	lease, err := shard.AcquireTTL(ctx, s.cfg.LeaseURL, s.run.Run, s.cfg.Shard, s.cfg.Shards, ttl)
	if err != nil {
		return err
	}
	s.lease = lease
	s.logf("shard %d: lease held (waited %v)", s.cfg.Shard, lease.Waited.Round(time.Millisecond))
	return nil
}
