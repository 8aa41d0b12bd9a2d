package node

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/shuffledp/shuffledp/telemetry"
)

// Reason is why the shuffler rejected a report.
type Reason string

// The reasons a report is rejected, as counted in Stats.Rejected.
const (
	// RejectUnauthenticated: the credential is not the client's.
	RejectUnauthenticated Reason = "unauthenticated"
	// RejectWrongRound: no round is open, or another round is.
	RejectWrongRound Reason = "wrong_round"
	// RejectMalformed: not an envelope (too short, unknown version).
	RejectMalformed Reason = "malformed"
	// RejectUnknownKey: a key id the server does not publish.
	RejectUnknownKey Reason = "unknown_key"
	// RejectWrongKey: a published key other than the round's (reports of
	// one batch must all name one key, or the key id would partition them).
	RejectWrongKey Reason = "wrong_key"
	// RejectWrongLength: another length than the run's sealed reports.
	RejectWrongLength Reason = "wrong_length"
	// RejectReplay: a report id seen before in the run.
	RejectReplay Reason = "replay"
	// RejectNotSampled: the client is not sampled in the round.
	RejectNotSampled Reason = "not_sampled"
	// RejectDuplicate: the client already reported in the round.
	RejectDuplicate Reason = "duplicate"
)

// Reasons lists every rejection reason, in a fixed order.
var Reasons = []Reason{RejectUnauthenticated, RejectWrongRound, RejectMalformed, RejectUnknownKey,
	RejectWrongKey, RejectWrongLength, RejectReplay, RejectNotSampled, RejectDuplicate}

// Label is the reason's label in the Prometheus metrics (telemetry's closed
// set; a reason without one is telemetry.ReasonOther).
func (r Reason) Label() telemetry.Reason {
	switch r {
	case RejectUnauthenticated:
		return telemetry.ReasonUnauthenticated
	case RejectWrongRound:
		return telemetry.ReasonWrongRound
	case RejectMalformed:
		return telemetry.ReasonMalformed
	case RejectUnknownKey:
		return telemetry.ReasonUnknownKey
	case RejectWrongKey:
		return telemetry.ReasonWrongKey
	case RejectWrongLength:
		return telemetry.ReasonWrongLength
	case RejectReplay:
		return telemetry.ReasonReplay
	case RejectNotSampled:
		return telemetry.ReasonNotSampled
	case RejectDuplicate:
		return telemetry.ReasonDuplicate
	}
	return telemetry.ReasonOther
}

// Stats are the shuffler's counters, for logs and metrics. A snapshot.
type Stats struct {
	// RoundsOpened, Released and Discarded count rounds: opened (clients
	// sampled), released (debited and forwarded), discarded (incomplete,
	// below the minimum batch, or holding a replay; nothing debited).
	// Unused counts the released rounds the server refused as computed on
	// a model version it does not wait for (debited, never applied).
	RoundsOpened, Released, Discarded, Unused int64
	// Accepted counts reports accepted into a round; Forwarded those
	// forwarded in released batches (dummies included).
	Accepted, Forwarded int64
	// Dummies counts the dummy reports released in the place of sampled
	// clients that did not deliver by the deadline. The shuffler's own
	// figure: never sent to the server.
	Dummies int64
	// Rejected counts rejected reports by reason.
	Rejected map[Reason]int64
}

// String prints the rejections as "reason n, ...", sorted.
func formatRejects(m map[Reason]int64) string {
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", r, m[r]))
	}
	return strings.Join(parts, ", ")
}

// counters are the shuffler's live counters.
type counters struct {
	mu sync.Mutex
	s  Stats
}

func (c *counters) add(f func(*Stats)) {
	c.mu.Lock()
	if c.s.Rejected == nil {
		c.s.Rejected = map[Reason]int64{}
	}
	f(&c.s)
	c.mu.Unlock()
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.Rejected = maps.Clone(c.s.Rejected)
	if s.Rejected == nil {
		s.Rejected = map[Reason]int64{}
	}
	return s
}
