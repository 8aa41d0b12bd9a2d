package shuffler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/shuffledp/shuffledp/internal/faultpoint"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// Errors of the shuffler role (wrapped; test with errors.Is).
var (
	// ErrNoRound: no round is open (none yet, or it was released).
	ErrNoRound = errors.New("no round is open")
	// ErrRoundOpen: Open while a round is open.
	ErrRoundOpen = errors.New("a round is already open")
	// ErrWrongRound: a report for a round other than the open one.
	ErrWrongRound = errors.New("report for another round")
	// ErrNotSampled: a report from a client not sampled in the round.
	ErrNotSampled = errors.New("client not sampled in this round")
	// ErrDuplicate: a second report from the same client in one round.
	ErrDuplicate = errors.New("client already reported in this round")
	// ErrIncomplete: a sampled client did not deliver and the service
	// releases complete rounds only.
	ErrIncomplete = errors.New("round incomplete: a sampled client did not deliver")
	// ErrNotDebited: the budget refused the release (wraps its error).
	ErrNotDebited = errors.New("budget not debited: batch discarded")
)

// ServiceConfig configures a Service.
type ServiceConfig struct {
	// Run is the run's public configuration (n, k, minimum batch, report
	// length).
	Run protocol.RunConfig
	// Budget is debited for every batch before it is forwarded.
	Budget Budget
	// Randomness samples clients and permutes batches; nil means
	// NewCryptoRandomness (the only choice for a deployment).
	Randomness Randomness
	// LastRound is the last round id this run debited before the service
	// started (0 for a fresh run): round ids continue after it, so a
	// (run, round) key is never reused for a different batch.
	LastRound int64
	// Dummies, if not nil, fills the slot of every sampled client that did
	// not deliver with a dummy report (DummyReports: the run's randomizer
	// applied to the public input x0 = 0, sealed like a client's report),
	// so a released batch is always exactly k reports and is debited as a
	// complete round. This is the deployment's policy; see Service.
	Dummies Dummies
	// ReleasePartial (without Dummies) releases a round in which some
	// sampled clients did not deliver, as long as at least Run.MinBatch
	// did, debiting it with the realized batch size k'. Opt-in, sound
	// only if dropout is independent of the data and of the sample and
	// exchangeable across clients (e.g. each client independently with
	// one probability): then the delivered reports are those of a uniform
	// k'-subset and k' is independent of the data. With per-client rates
	// it is not (docs/proofs/dummy-reports.md, negative control
	// release-partial). Neither set: a round with a missing report is
	// discarded (ErrIncomplete) — only for simulations in which every
	// sampled client always delivers, since the discard is visible to the
	// server and not debited.
	ReleasePartial bool
	// SelectCheckIn (check-in runs only; the networked deployment's
	// policy) has the service flip every enrolled client's check-in coin
	// itself, with probability Run.Rate from Randomness (which must
	// implement CheckInSelector; crypto/rand by default), and treat the
	// selected clients like a sample: Sampled lists them, Submit accepts
	// reports from them only, and at Release, with Dummies, every selected
	// client that did not deliver is replaced by a dummy report. The batch
	// then has exactly as many reports as clients were selected, a Bin(n,
	// rate) number that does not depend on the data or on who dropped
	// out: the released view of the ideal check-in mechanism that the
	// check-in event prices (docs/proofs/dummy-reports.md, "Check-in
	// rounds"). A draw that selects fewer than Run.MinBatch is drawn
	// again (never relayed); the run must then have (1-rate)^n <= 2^-64,
	// so the conditioning this adds stays below that (NewService refuses
	// others). Without it (the simulation's check-in) the clients decide
	// with their own coins and Release takes whatever arrived.
	SelectCheckIn bool
	// ReuseBatch declares that Release's forward keeps nothing of the
	// batch once it returns (the networked shuffler: it sends the batch
	// and forgets it): each round's batch is then copied into the memory
	// of the round before (grown when it holds too little), instead of a
	// fresh allocation each round. The batch is still a copy in batch
	// order, whose memory depends on nothing of where or when a client's
	// report arrived. Unset (the simulation, whose server keeps the
	// batch), every batch is fresh memory.
	ReuseBatch bool
}

// maxLogEmptyCheckIn is log(2^-64): with SelectCheckIn, a run in which no
// client is selected with probability (1-rate)^n above it is refused
// (empty draws are drawn again and not debited).
var maxLogEmptyCheckIn = -64 * math.Ln2

// maxCheckInDraws bounds the draws of one round's check-in selection
// (each empty one has probability at most 2^-64).
const maxCheckInDraws = 1000

// Service is the shuffler role of the shuffle model, the party trusted for
// anonymity (it sees who reports, never what: it only ever holds sealed
// report bytes). For each round it
//
//  1. samples k of the n clients (Randomness; crypto/rand in deployment),
//     after asking the budget (Checker) whether the round could be
//     released at all, and assigns the round id;
//  2. relays the server's Model to the sampled clients (Sampled lists them
//     for the transport), so the server never learns who fetched it;
//  3. collects exactly one report per sampled client (Submit refuses
//     unsampled clients, duplicates, other rounds, other lengths);
//  4. on Release: puts a dummy report (Dummies) in the slot of every
//     sampled client that did not deliver, permutes the k reports
//     (Fisher–Yates), computes the batch's SHA-256, debits the budget —
//     and only if that succeeded forwards the batch: report bytes, run and
//     round id only.
//
// Incomplete rounds. With Dummies (the deployment's policy) a round is
// always exactly k reports of a uniform k-of-n sample, each a fresh report
// of the run's randomizer of a client's input or of x0, which is the
// mechanism NeurIPS'21 Theorem 1 analyses with some inputs replaced by x0:
// the ledger debits the event of a complete round. The argument and its
// assumptions (dummies fresh R(x0); dropout independent of the other
// clients' data and of the sample; the server observes nothing that
// depends on dropout: no dummy count, no early release) are in
// docs/proofs/dummy-reports.md, checked there by exact brute force. The
// Release's Dummies count is the shuffler's own and must never reach the
// server. Without Dummies a round with a missing report is discarded, or
// with ReleasePartial released with k' < k reports and debited with k'
// (see ServiceConfig for the assumption each needs).
//
// Shuffled check-in (Run.Participation protocol.ParticipationCheckIn;
// Liew et al. 2022, ICLR'23 submission Sec. 4.2). With SelectCheckIn (the
// networked shuffler) the service flips every client's coin and the
// selected clients are treated like a sample, padded with Dummies: the
// batch has exactly as many reports as clients were selected. Without it
// (the simulation, where nobody drops out) the service samples
// nobody: the round is relayed to every client (Sampled is empty), each
// client decides with its own randomness whether to take part, and Submit
// accepts one report from any client of the run. Release permutes the
// reports that arrived, however many (at least Run.MinBatch), and debits
// the budget with their number; the batch size is random and part of what
// the check-in analysis (eq. (11)) covers. No report is "missing", so
// ErrIncomplete does not apply.
//
// A Service is safe for concurrent use; one round is open at a time.
type Service struct {
	cfg     ServiceConfig
	rnd     Randomness
	mu      sync.Mutex
	last    int64 // last round id assigned
	synced  bool  // last was reconciled with the budget's (LastRounder)
	open    bool
	round   protocol.Round
	perm    randomizer.Source
	sample  []int    // slot -> client, in sample order
	slotOf  []int32  // client -> slot in the open round, -1 if not sampled
	reports [][]byte // slot -> sealed report (nil until delivered); check-in: client -> report
	got     int
	checkIn bool
	// SelectCheckIn: the coins' source, and slot storage for up to n
	// selected clients (reports is a prefix of it).
	selector CheckInSelector
	slots    [][]byte
	// batch is the last released batch's memory, with ReuseBatch.
	batch *batchMemory
}

// batchMemory is a batch's memory: its reports' bytes and their slices.
type batchMemory struct {
	backing []byte
	out     [][]byte
}

// take returns memory for n reports of size bytes each: m's own where it
// holds enough (m not nil), else fresh memory (kept in m if not nil).
func (m *batchMemory) take(n, size int) ([]byte, [][]byte) {
	if m != nil && len(m.backing) >= n*size && cap(m.out) >= n {
		return m.backing[:n*size], m.out[:n]
	}
	backing, out := make([]byte, n*size), make([][]byte, n)
	if m != nil {
		m.backing, m.out = backing, out
	}
	return backing, out
}

// NewService returns the shuffler role for cfg.
func NewService(cfg ServiceConfig) (*Service, error) {
	if err := cfg.Run.Validate(); err != nil {
		return nil, err
	}
	if cfg.Run.Randomizer == protocol.RandomizerNone {
		return nil, errors.New("shuffler: randomizer none sends no reports to shuffle")
	}
	if cfg.Budget == nil {
		return nil, errors.New("shuffler: a budget is required")
	}
	if cfg.LastRound < 0 {
		return nil, fmt.Errorf("shuffler: last round must be >= 0, got %d", cfg.LastRound)
	}
	s := &Service{cfg: cfg, rnd: cfg.Randomness, last: cfg.LastRound,
		sample:  make([]int, cfg.Run.PerRound),
		slotOf:  make([]int32, cfg.Run.Population),
		reports: make([][]byte, cfg.Run.PerRound)}
	checkIn := cfg.Run.Participation == protocol.ParticipationCheckIn
	switch {
	case cfg.SelectCheckIn && !checkIn:
		return nil, fmt.Errorf("shuffler: check-in selection for a run of participation %q", cfg.Run.Participation)
	case cfg.SelectCheckIn && float64(cfg.Run.Population)*math.Log1p(-cfg.Run.Rate) > maxLogEmptyCheckIn:
		return nil, fmt.Errorf("shuffler: rate: the probability that no client is selected, (1-rate)^clients = %.3g, must be <= 2^-64 (raise the rate or the clients); an empty draw is drawn again and not debited",
			math.Pow(1-cfg.Run.Rate, float64(cfg.Run.Population)))
	case cfg.SelectCheckIn:
		s.sample, s.slots = make([]int, 0, cfg.Run.Population), make([][]byte, cfg.Run.Population)
		s.reports = s.slots[:0]
	case checkIn:
		s.checkIn, s.sample, s.reports = true, nil, make([][]byte, cfg.Run.Population)
	}
	if s.rnd == nil {
		var err error
		if s.rnd, err = NewCryptoRandomness(cfg.Run.Population, cfg.Run.PerRound); err != nil {
			return nil, err
		}
	}
	if cfg.SelectCheckIn {
		var ok bool
		if s.selector, ok = s.rnd.(CheckInSelector); !ok {
			return nil, errors.New("shuffler: check-in selection needs a Randomness that implements CheckInSelector")
		}
	}
	for i := range s.slotOf {
		s.slotOf[i] = -1
	}
	return s, nil
}

// LastRound returns the last round id assigned (0 if none; before the
// first Open, the configured one, not yet reconciled with a LastRounder
// budget).
func (s *Service) LastRound() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Open starts a round for the server's model m: it checks the budget (if
// it implements Checker), samples the round's clients and assigns the next
// round id (on the first call, after the budget's last round if it
// implements LastRounder). It returns the message to relay to every sampled client.
func (s *Service) Open(ctx context.Context, m protocol.Model) (protocol.Round, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open {
		return protocol.Round{}, fmt.Errorf("shuffler: round %d: %w", s.round.ID, ErrRoundOpen)
	}
	if m.Run != s.cfg.Run.Run {
		return protocol.Round{}, fmt.Errorf("shuffler: model of run %q, shuffler of run %q", m.Run, s.cfg.Run.Run)
	}
	if lr, ok := s.cfg.Budget.(LastRounder); ok && !s.synced {
		last, err := lr.LastRound(ctx, s.cfg.Run.Run)
		if err != nil {
			return protocol.Round{}, fmt.Errorf("shuffler: last round debited: %w", err)
		}
		s.last, s.synced = max(s.last, last), true
	}
	id := s.last + 1
	if c, ok := s.cfg.Budget.(Checker); ok {
		if err := c.Check(ctx, Release{Run: s.cfg.Run.Run, Round: id, Reports: s.cfg.Run.PerRound}); err != nil {
			return protocol.Round{}, fmt.Errorf("shuffler: round %d: %w", id, err)
		}
	}
	perm, err := s.draw()
	if err != nil {
		return protocol.Round{}, fmt.Errorf("shuffler: sampling round %d: %w", id, err)
	}
	for slot, c := range s.sample {
		s.slotOf[c] = int32(slot)
	}
	s.last, s.perm, s.got, s.open = id, perm, 0, true
	s.round = protocol.Round{ID: id, Model: m}
	return s.round, nil
}

// draw samples the round's clients (with SelectCheckIn: flips every
// client's coin, again while fewer than the minimum batch are selected)
// and returns the source of its permutation.
func (s *Service) draw() (randomizer.Source, error) {
	if s.selector == nil {
		return s.rnd.Round(s.sample)
	}
	for range maxCheckInDraws {
		sel, perm, err := s.selector.CheckIn(s.cfg.Run.Population, s.cfg.Run.Rate, s.sample)
		if err != nil {
			return nil, err
		}
		if s.sample = sel; len(sel) >= s.cfg.Run.MinBatch {
			s.reports = s.slots[:len(sel)]
			return perm, nil
		}
	}
	return nil, fmt.Errorf("fewer than the minimum batch %d selected in %d check-in draws at rate %g", s.cfg.Run.MinBatch, maxCheckInDraws, s.cfg.Run.Rate)
}

// Sampled returns the clients sampled in the open round, in sample order
// (a client's position is its slot), for the transport that relays the
// round message to them. The slice is the service's; do not modify it.
// It is nil when no round is open; with SelectCheckIn it lists the
// clients selected by their coins, and under check-in without it it is
// empty (the round goes to every client, each deciding for itself).
func (s *Service) Sampled() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return nil
	}
	return s.sample
}

// Slot returns client's slot in the open round (its position in Sampled),
// or -1 if no round is open, the client is not sampled, or the round is a
// check-in round.
func (s *Service) Slot(client int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open || s.checkIn || client < 0 || client >= len(s.slotOf) {
		return -1
	}
	return int(s.slotOf[client])
}

// Submit accepts the sealed report of client for round. The service keeps
// sealed itself (no copy: the caller hands it over and must not modify it
// afterwards). It refuses a report when no round is open, for another
// round, from a client not sampled in this round or that already
// reported, or of a length other than the run's.
func (s *Service) Submit(client int, round int64, sealed []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.open:
		return fmt.Errorf("shuffler: report for round %d: %w", round, ErrNoRound)
	case round != s.round.ID:
		return fmt.Errorf("shuffler: report for round %d, round %d is open: %w", round, s.round.ID, ErrWrongRound)
	case client < 0 || client >= len(s.slotOf) || (!s.checkIn && s.slotOf[client] < 0):
		return fmt.Errorf("shuffler: round %d: %w", round, ErrNotSampled)
	case len(sealed) != s.cfg.Run.ReportBytes:
		return fmt.Errorf("shuffler: round %d: %w: %d bytes, the run's reports have %d", round, ErrReportLength, len(sealed), s.cfg.Run.ReportBytes)
	}
	if s.checkIn {
		if s.reports[client] != nil {
			return fmt.Errorf("shuffler: round %d: %w", round, ErrDuplicate)
		}
		s.reports[client] = sealed
		s.got++
		return nil
	}
	slot := s.slotOf[client]
	if s.reports[slot] != nil {
		return fmt.Errorf("shuffler: round %d: %w", round, ErrDuplicate)
	}
	s.reports[slot] = sealed
	s.got++
	return nil
}

// Release closes the open round. With Dummies every missing report is
// replaced by a dummy. Without, a round with a missing report (unless
// ReleasePartial) or below the minimum batch is discarded and nothing is
// debited. Otherwise the reports are permuted uniformly (Fisher–Yates),
// copied into fresh memory in that order, the batch's digest computed and
// the budget debited; if Debit fails the batch is discarded (ErrNotDebited
// wrapping the budget's error) and forward is not called. Only after a
// successful debit is forward called with the batch. It returns the
// release (also when forward fails: the round was debited). forward runs
// with the service locked and must not call it; the batch's memory is
// the receiver's.
func (s *Service) Release(ctx context.Context, forward func(context.Context, protocol.Batch) error) (Release, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return Release{}, fmt.Errorf("shuffler: release: %w", ErrNoRound)
	}
	defer s.close()
	id, k := s.round.ID, len(s.sample)
	if s.checkIn {
		k = s.got // whoever checked in: nothing is missing
	}
	dummies := 0
	if s.got < k && s.cfg.Dummies != nil && !s.checkIn {
		for slot, r := range s.reports {
			if r != nil {
				continue
			}
			d, err := s.cfg.Dummies.Dummy(s.round, slot)
			if err != nil {
				return Release{}, fmt.Errorf("shuffler: round %d: %w", id, err)
			}
			if len(d) != s.cfg.Run.ReportBytes {
				return Release{}, fmt.Errorf("shuffler: round %d: dummy report of %d bytes, the run's reports have %d", id, len(d), s.cfg.Run.ReportBytes)
			}
			s.reports[slot] = d
			dummies++
		}
		s.got = k
	}
	if s.got < k && !s.cfg.ReleasePartial {
		return Release{}, fmt.Errorf("shuffler: round %d: %w (%d of %d reports)", id, ErrIncomplete, s.got, k)
	}
	if s.got < s.cfg.Run.MinBatch {
		return Release{}, fmt.Errorf("shuffler: round %d: %w: %d reports, minimum %d", id, ErrBatchTooSmall, s.got, s.cfg.Run.MinBatch)
	}
	delivered := s.reports
	if s.got < len(s.reports) { // drop the missing ones (check-in: those who did not check in), keeping slot order
		delivered = delivered[:0]
		for _, r := range s.reports {
			if r != nil {
				delivered = append(delivered, r)
			}
		}
	}
	fisherYates(delivered, s.perm)
	if s.cfg.ReuseBatch && s.batch == nil {
		s.batch = new(batchMemory)
	}
	out, digest := copyAndDigest(s.cfg.Run.Run, id, delivered, s.cfg.Run.ReportBytes, s.batch)
	b := protocol.Batch{Run: s.cfg.Run.Run, Round: id, ModelVersion: s.round.Model.Version, Reports: out}
	rel := Release{Run: b.Run, Round: id, Reports: len(out), Digest: digest}
	if err := s.cfg.Budget.Debit(ctx, rel); err != nil {
		return Release{}, fmt.Errorf("shuffler: round %d: %w: %w", id, ErrNotDebited, err)
	}
	rel.Dummies = dummies // after the debit: the budget is priced on the batch alone
	faultpoint.Hit(PointDebitedNotForwarded)
	if err := forward(ctx, b); err != nil {
		return rel, fmt.Errorf("shuffler: round %d debited, forwarding failed: %w", id, err)
	}
	return rel, nil
}

// Above pipelineBytes of reports, copyAndDigest copies them on a second
// goroutine, chunkBytes at a time, while it hashes the copies behind it.
const (
	pipelineBytes = 1 << 20
	chunkBytes    = 256 << 10
)

// copyAndDigest copies the reports, in their (permuted) order, into one
// allocation of size bytes each (fresh, or mem's: batchMemory.take),
// and returns the copies and the
// digest of the batch of run and round that holds them
// (protocol.Batch.Digest, computed over the copies). The copies are the
// released batch: memory of its own in batch order, so that nothing of
// where or when a client's report was allocated reaches the server. For a
// batch of pipelineBytes or more the copy runs on a second goroutine
// ahead of the SHA-256, which hashes each chunk as soon as it is copied,
// so that the copy overlaps the hash (a Fig. 6 batch is 2,000 reports of
// 54 KB; the copy is small next to the hash, and the measured gain is
// inside the noise: BENCHMARKS). Either way the digest is the same.
func copyAndDigest(run string, round int64, reports [][]byte, size int, mem *batchMemory) ([][]byte, [32]byte) {
	backing, out := mem.take(len(reports), size)
	for i := range out {
		out[i] = backing[i*size : (i+1)*size : (i+1)*size]
	}
	d := protocol.NewBatchDigest(run, round, len(reports))
	if len(backing) < pipelineBytes {
		for i, r := range reports {
			copy(out[i], r)
			d.Add(out[i])
		}
		return out, d.Sum()
	}
	per := max(1, chunkBytes/size) // reports per chunk
	copied := make(chan int, (len(reports)+per-1)/per)
	go func() {
		for lo := 0; lo < len(reports); lo += per {
			hi := min(lo+per, len(reports))
			for i := lo; i < hi; i++ {
				copy(out[i], reports[i])
			}
			copied <- hi // out[:hi] is copied
		}
		close(copied)
	}()
	next := 0
	for hi := range copied {
		for ; next < hi; next++ {
			d.Add(out[next])
		}
	}
	return out, d.Sum()
}

// Abandon closes the open round without releasing anything (nothing is
// debited). A shuffler that stops mid-round abandons the round rather than
// releasing it before its deadline (an early release could reveal
// dropouts). It is a no-op when no round is open.
func (s *Service) Abandon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open {
		s.close()
	}
}

// close ends the open round and forgets its sample and reports.
func (s *Service) close() {
	for _, c := range s.sample {
		s.slotOf[c] = -1
	}
	clear(s.reports)
	s.open, s.got, s.perm = false, 0, nil
	s.round = protocol.Round{}
}
