package telemetry

import (
	"errors"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shuffler"
)

// Reason is the label of a rejected report or a discarded round. The set is
// closed: Rejection maps every error to one of these constants, so the label
// cardinality is bounded whatever a client sends.
type Reason string

// Rejection reasons for reports.
const (
	ReasonNotSampled      Reason = "not_sampled"
	ReasonDuplicate       Reason = "duplicate"
	ReasonWrongRound      Reason = "wrong_round"
	ReasonWrongLength     Reason = "wrong_length"
	ReasonReplay          Reason = "replay"
	ReasonUnknownKey      Reason = "unknown_key"
	ReasonWrongKey        Reason = "wrong_key"
	ReasonMalformed       Reason = "malformed"
	ReasonUnauthenticated Reason = "unauthenticated"
	ReasonNoRound         Reason = "no_round"
	ReasonOpenFailed      Reason = "open_failed"
	ReasonOther           Reason = "other"
)

// ReasonConflict labels a batch the server refused because it contradicts
// its record of the rounds received (node.ErrConflictingBatch: a recorded
// round with other reports, or a round below the last recorded one: a
// second shuffler, or one whose ledger was lost).
const ReasonConflict Reason = "conflict"

// Reasons a round is discarded (nothing released, nothing debited, or the
// debit refused); ReasonReplay also labels a round discarded because it
// held a report id claimed under an earlier round.
const (
	ReasonIncomplete      Reason = "incomplete"
	ReasonBatchTooSmall   Reason = "batch_too_small"
	ReasonBudgetExhausted Reason = "budget_exhausted"
	ReasonNotDebited      Reason = "not_debited"
)

// ReportReasons lists every report-rejection label, in a fixed order; the
// metrics are pre-initialised with them so a scrape shows zeros, not gaps.
var ReportReasons = []Reason{
	ReasonNotSampled, ReasonDuplicate, ReasonWrongRound, ReasonWrongLength,
	ReasonReplay, ReasonUnknownKey, ReasonWrongKey, ReasonMalformed, ReasonUnauthenticated,
	ReasonNoRound, ReasonOpenFailed, ReasonOther,
}

// BatchReasons lists every label of a batch the server refuses: a report's
// reasons (CheckBatch's) and ReasonConflict.
var BatchReasons = append(append([]Reason{}, ReportReasons...), ReasonConflict)

// RoundReasons lists every round-discard label.
var RoundReasons = []Reason{
	ReasonIncomplete, ReasonBatchTooSmall, ReasonBudgetExhausted, ReasonNotDebited, ReasonReplay, ReasonOther,
}

// Rejection maps an error returned by shuffler.Service.Submit, Release or
// the server's Opener to its label. Unknown errors are ReasonOther.
func Rejection(err error) Reason {
	switch {
	case err == nil:
		return ReasonOther
	case errors.Is(err, shuffler.ErrNotSampled):
		return ReasonNotSampled
	case errors.Is(err, shuffler.ErrDuplicate):
		return ReasonDuplicate
	case errors.Is(err, shuffler.ErrWrongRound):
		return ReasonWrongRound
	case errors.Is(err, shuffler.ErrReportLength):
		return ReasonWrongLength
	case errors.Is(err, shuffler.ErrNoRound):
		return ReasonNoRound
	case errors.Is(err, protocol.ErrUnknownKey):
		return ReasonUnknownKey
	case errors.Is(err, protocol.ErrEnvelope):
		return ReasonMalformed
	case errors.Is(err, protocol.ErrOpen):
		return ReasonOpenFailed
	case errors.Is(err, shuffler.ErrIncomplete):
		return ReasonIncomplete
	case errors.Is(err, shuffler.ErrBatchTooSmall):
		return ReasonBatchTooSmall
	case errors.Is(err, ledger.ErrBudgetExhausted):
		return ReasonBudgetExhausted
	case errors.Is(err, shuffler.ErrNotDebited):
		return ReasonNotDebited
	}
	return ReasonOther
}
