package training

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/shuffledp/shuffledp/client"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/shuffler"
)

// noiseSlot is the slot number, beyond any client's and below shuffleSlot,
// under which the per-round ChaCha8 key of a dense path's single noise
// vector is derived (see clientKey).
const noiseSlot = shuffleSlot - 1

// maxEmptyRounds bounds the consecutive check-in rounds in which no client
// checked in (each has probability at most 2^-64; see
// Config.validateParticipation) before a step gives up.
const maxEmptyRounds = 1000

// checkInRound is one round of shuffled check-in through the roles (the
// per-client path): the shuffler opens the round (it samples nobody) and the
// round goes to every client; each client decides with its own randomness
// (client.CheckIn: its seeded ChaCha8 stream in simulation, keyed by the
// round and its own index, or crypto/rand with CryptoNoise) whether to take
// part and, if it does, computes, clips, adds its N(0, C^2 sigma^2 I_d) and
// seals its report (the same stream continues into its noise) and submits
// it; the shuffler debits the check-in event and releases the permuted
// batch, of whatever size; the server averages over the reports it
// received (server.Receive divides by the batch size, which the check-in
// analysis covers: it is part of the shuffled output). A round in which
// nobody checked in is discarded, not debited, and run again (see
// Config.validateParticipation).
func (t *simulation) checkInRound(ctx context.Context, m protocol.Model) (Release, error) {
	n, rate := t.cfg.Clients, t.cfg.Rate
	for empty := 0; ; empty++ {
		round, err := t.shuf.Open(ctx, m)
		if err != nil {
			return Release{}, err
		}
		roundKey := t.sim.roundKey
		nShards := t.nShards
		if len(t.errs) < nShards {
			t.errs = make([]error, nShards)
		}
		loss := t.parallelShards(nShards, func(w *clientWorker, s int) float64 {
			lo, hi := shardRange(s, nShards, n)
			var l float64
			t.errs[s] = nil
			for c := lo; c < hi; c++ {
				w.noise.reset(t.cfg.Seed, roundKey, uint64(c))
				in, err := client.CheckIn(rate, &w.noise)
				if err != nil || !in {
					t.errs[s] = err
					if err != nil {
						return l
					}
					continue
				}
				cl, err := t.report(w, &round, c, &w.noise)
				l += cl
				if err != nil {
					t.errs[s] = fmt.Errorf("client %d: %w", c, err)
					return l
				}
			}
			return l
		})
		b, err := t.release(ctx)
		if cerr := errors.Join(t.errs...); cerr != nil {
			return Release{}, cerr
		}
		if errors.Is(err, shuffler.ErrBatchTooSmall) && empty < maxEmptyRounds {
			continue // nobody checked in: nothing released, nothing debited
		}
		if err != nil {
			return Release{}, err
		}
		return Release{Batch: b, Loss: loss}, nil
	}
}

// noisyRound is one round of a dense path, where the clipped gradients of
// the round's participants are summed over fixed shards and one Gaussian
// vector is added to the sum:
//
//   - central-gaussian: Poisson sampling at rate q by the server's
//     generator, clipped gradients summed in the clear, the server adds
//     N(0, C^2 sigma^2 I_d), the ledger is debited the sampled-gaussian
//     event, the server steps on the noisy sum / (q n)
//     (server.ApplyCentralGaussian);
//   - gaussian with NoiseSum: the participants (k of n sampled, or the
//     clients that check in, with the same coins as the per-client path)
//     clip; the simulation adds N(0, m C^2 sigma^2 I_d) for the m reports
//     (the summed-noise equivalence below), debits the round's event and
//     the server steps on the noisy sum / m (server.ApplyNoisySum).
//
// Equivalence of the summed noise (SIMULATION ONLY). With per-client
// noise, report i is z_i = g_i + e_i, e_i ~ N(0, C^2 sigma^2 I_d)
// independent; the shuffler releases the multiset {z_1..z_m} in a uniformly
// random order, and the server only ever uses its sum (the average is
// linear: sum/m, then post-processing). The sum of the multiset does not
// depend on the order: it is sum g_i + sum e_i, and a sum of m independent
// N(0, C^2 sigma^2 I_d) vectors is N(0, m C^2 sigma^2 I_d). So
// sum g_i + e, e ~ N(0, m C^2 sigma^2 I_d), has exactly the distribution of
// the sum the server computes, given the same participants and
// parameters, and the model trajectory has the same distribution. What it
// does NOT simulate: the individual reports (the per-report view that the
// shuffle analysis is about — the accounting is unchanged, it prices the
// per-report mechanism), the shuffler's collection and permutation, report
// sealing, and the per-client cost of drawing d normals (benchmarks must
// use the per-client path). It is not bit-identical to the per-client path
// (other noise draws), only equal in distribution.
func (t *simulation) noisyRound(ctx context.Context, pm protocol.Model) (Release, error) {
	if err := t.ledger.CheckNext(t.cfg.RoundEvent()); err != nil {
		return Release{}, err
	}
	if t.extra != nil {
		if ch, ok := t.extra.(shuffler.Checker); ok {
			if err := ch.Check(ctx, shuffler.Release{Run: t.run.Run, Round: t.nextRoundID(pm), Reports: t.cfg.Sample}); err != nil {
				return Release{}, err
			}
		}
	}
	for empty := 0; ; empty++ {
		members, roundKey, err := t.drawMembers()
		if err != nil {
			return Release{}, err
		}
		m := len(members)
		if m == 0 && t.cfg.checkIn() {
			if empty < maxEmptyRounds {
				continue // nobody checked in: nothing released, nothing debited
			}
			return Release{}, fmt.Errorf("no client checked in in %d consecutive rounds", empty+1)
		}
		loss, err := t.sumClipped(members, pm)
		if err != nil {
			return Release{}, err
		}
		var src randomizer.Source
		if t.cfg.CryptoNoise {
			src = randomizer.NewCryptoSource()
		} else {
			src = rand.NewChaCha8(clientKey(t.cfg.Seed, roundKey, noiseSlot)) // SIMULATION ONLY
		}
		id := t.nextRoundID(pm)
		// A central round whose Poisson sample came out empty is still a
		// release (the noise alone) and is debited; a ledger entry counts
		// at least one report, so it is recorded as 1 (only the event
		// prices it; at Fig. 1a's rate P(empty) = e^-60).
		debit := func(ctx context.Context, digest [32]byte) error {
			return t.debitDense(ctx, shuffler.Release{Run: t.run.Run, Round: id, Reports: max(m, 1), Digest: digest})
		}
		std := t.cfg.Clip * t.cfg.Sigma
		if t.cfg.Randomizer == RandomizerCentralGaussian {
			t.noise.src = src
			digest, err := t.curator.PrepareCentralGaussian(t.sum, std)
			if err != nil {
				return Release{}, err
			}
			if err := debit(ctx, digest); err != nil {
				return Release{}, err
			}
			return Release{Loss: loss, dense: &denseRelease{kind: centralSum, divisor: t.cfg.Rate * float64(t.cfg.Clients), reports: m}}, nil
		}
		server.AddGaussianNoise(t.sum, std*math.Sqrt(float64(m)), src)
		if err := debit(ctx, server.SumDigest(t.sum)); err != nil {
			return Release{}, err
		}
		return Release{Loss: loss, dense: &denseRelease{kind: noisySum, sum: t.sum, reports: m}}, nil
	}
}

// denseRelease is a dense path's release: a sum for the server to step on
// where no report exists.
type denseRelease struct {
	kind    denseKind
	sum     []float64 // clearSum, noisySum
	reports int       // the sum's reports (central: the realized batch size, for the statistics only)
	divisor float64   // centralSum: the expected batch size q n
}

// denseKind says how the server steps on a dense release.
type denseKind int

const (
	// clearSum: the non-private baseline's sum of clipped gradients
	// (server.ApplySum).
	clearSum denseKind = iota
	// noisySum: the summed-noise simulation's noisy sum of the Gaussian
	// reports (server.ApplyNoisySum).
	noisySum
	// centralSum: the central baseline's sum, to which the server (the
	// curator) has added the noise already (server.ApplyCentralGaussian).
	centralSum
)

// apply has srv step on the release.
func (d *denseRelease) apply(srv *server.Server) (server.Step, error) {
	switch d.kind {
	case clearSum:
		return srv.ApplySum(d.sum, d.reports)
	case noisySum:
		return srv.ApplyNoisySum(d.sum, d.reports)
	default:
		return srv.ApplyCentralGaussian(d.divisor, d.reports)
	}
}

// nextRoundID is the id a dense path's next release at the published
// model m is debited under: the server's step count (m's version) + 1 (a seeded replay after a restart recomputes the
// same release under the same id, which the ledger recognises), or, with
// CryptoNoise, after the ledger's last round as well (a replay is a fresh
// release and is charged).
func (t *simulation) nextRoundID(m protocol.Model) int64 {
	id := m.Version + 1
	if t.cfg.CryptoNoise {
		id = max(id, t.ledger.LastRound()+1)
	}
	return id
}

// debitDense debits a dense path's release: the extra budget (WithBudget)
// first, then the ledger; the error of either discards the round.
func (t *simulation) debitDense(ctx context.Context, r shuffler.Release) error {
	if t.extra != nil {
		if err := t.extra.Debit(ctx, r); err != nil {
			return fmt.Errorf("round %d: %w", r.Round, err)
		}
	}
	if err := t.ledger.Debit(ctx, r.Round, t.cfg.roundEvent(r.Reports), r.Reports, r.Digest); err != nil {
		return fmt.Errorf("round %d: %w", r.Round, err)
	}
	return nil
}

// drawMembers draws the round's participants of a dense path and the
// round's key: k of n sampled (the run's generator, as the shuffler's
// simulation randomness does), the clients that check in (each with its
// own stream, as on the per-client path), or Poisson sampling at Rate
// (central-gaussian: the server's choice, from the run's generator).
func (t *simulation) drawMembers() ([]int, uint64, error) {
	n := t.cfg.Clients
	switch {
	case t.cfg.Randomizer == RandomizerCentralGaussian:
		members := t.members[:0]
		thr := uint64(math.Ldexp(t.cfg.Rate, 64))
		for i := range n {
			if u := t.sim.rng.Uint64(); t.cfg.Rate == 1 || u < thr {
				members = append(members, i)
			}
		}
		t.members = members
		return members, t.sim.rng.Uint64(), nil
	case t.cfg.checkIn():
		if _, err := t.sim.Round(nil); err != nil {
			return nil, 0, err
		}
		roundKey := t.sim.roundKey
		nShards := t.nShards
		if len(t.shardMembers) < nShards {
			t.shardMembers = make([][]int, nShards)
		}
		t.parallelShards(nShards, func(w *clientWorker, s int) float64 {
			lo, hi := shardRange(s, nShards, n)
			in := t.shardMembers[s][:0]
			for c := lo; c < hi; c++ {
				w.noise.reset(t.cfg.Seed, roundKey, uint64(c))
				if ok, _ := client.CheckIn(t.cfg.Rate, &w.noise); ok {
					in = append(in, c)
				}
			}
			t.shardMembers[s] = in
			return 0
		})
		members := t.members[:0]
		for _, in := range t.shardMembers[:nShards] {
			members = append(members, in...)
		}
		t.members = members
		return members, roundKey, nil
	default:
		if cap(t.members) < t.cfg.Sample {
			t.members = make([]int, t.cfg.Sample)
		}
		members := t.members[:t.cfg.Sample]
		if _, err := t.sim.Round(members); err != nil {
			return nil, 0, err
		}
		return members, t.sim.roundKey, nil
	}
}

// sumClipped writes the sum of the members' clipped gradients into t.sum,
// over fixed shards of the member list added in shard order (bitwise the
// same for any number of workers), and returns the sum of their losses.
func (t *simulation) sumClipped(members []int, pm protocol.Model) (float64, error) {
	clear(t.sum)
	m := len(members)
	if m == 0 {
		return 0, nil
	}
	nShards := min(t.nShards, m)
	round := protocol.Round{ID: pm.Version + 1, Model: pm}
	loss := t.parallelShards(nShards, func(w *clientWorker, s int) float64 {
		lo, hi := shardRange(s, nShards, m)
		sum := t.shards[s]
		clear(sum)
		var l float64
		t.errs[s] = nil
		for _, c := range members[lo:hi] {
			g, cl, err := w.c.ClippedExamples(&round, t.clientExamples(w, c))
			if err != nil {
				t.errs[s] = fmt.Errorf("client %d: %w", c, err)
				return l
			}
			l += cl
			for i, v := range g {
				sum[i] += v
			}
		}
		return l
	})
	if err := errors.Join(t.errs[:nShards]...); err != nil {
		return 0, err
	}
	for _, sh := range t.shards[:nShards] {
		for i, v := range sh {
			t.sum[i] += v
		}
	}
	return loss, nil
}
