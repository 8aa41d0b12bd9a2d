// Package shuffler implements the trusted shuffler of the shuffle model
// (Bittau et al., "Prochlo", SOSP 2017; Erlingsson et al., SODA 2019): it
// receives a batch of local-randomizer reports and releases them in a
// uniformly random order, so that the server cannot link a report to the
// client that sent it.
//
// The API takes report bytes only. No client identifier, timestamp,
// connection or arrival index ever passes through it, and its outputs are
// fresh copies, so not even slice identity links an output to an input.
// Every report in a batch must have the same length (the randomizer wire
// format is fixed-size; a report of unusual length would identify its
// sender), and a batch smaller than the configured minimum is refused: the
// privacy amplification of shuffling grows with the batch size, and the
// accountant assumes the batch it was told about.
//
// Permutations are drawn by the Fisher–Yates shuffle (Knuth, TAOCP vol. 2,
// Algorithm 3.4.2P) with unbiased index draws (Lemire's rejection method,
// randomizer.UniformIndex) from crypto/rand by default, so every one of the
// n! orders is equally likely up to the CSPRNG's quality.
package shuffler

import (
	"errors"
	"fmt"
	"sync"

	"github.com/shuffledp/shuffledp/randomizer"
)

// ErrBatchTooSmall is returned (wrapped) when a batch has fewer reports
// than the shuffler's minimum.
var ErrBatchTooSmall = errors.New("batch below the minimum size")

// ErrReportLength is returned (wrapped) when the reports of a batch do not
// all have the same length.
var ErrReportLength = errors.New("reports of unequal length")

// Shuffler permutes batches of reports. It is safe for concurrent use.
type Shuffler struct {
	minBatch int
	mu       sync.Mutex
	src      randomizer.Source
}

// Option configures a Shuffler.
type Option func(*Shuffler)

// WithSource makes the shuffler draw from src instead of crypto/rand. Use a
// seeded source (randomizer.NewSeededSource) only for reproducible
// simulation: a predictable permutation unshuffles the reports.
func WithSource(src randomizer.Source) Option {
	return func(s *Shuffler) { s.src = src }
}

// New returns a Shuffler that refuses batches of fewer than minBatch ≥ 1
// reports.
func New(minBatch int, opts ...Option) (*Shuffler, error) {
	if minBatch < 1 {
		return nil, fmt.Errorf("minimum batch size must be >= 1, got %d", minBatch)
	}
	s := &Shuffler{minBatch: minBatch, src: randomizer.NewCryptoSource()}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// MinBatch is the smallest batch the shuffler releases.
func (s *Shuffler) MinBatch() int { return s.minBatch }

func (s *Shuffler) check(reports [][]byte) error {
	if len(reports) < s.minBatch {
		return fmt.Errorf("%w: %d reports, minimum %d", ErrBatchTooSmall, len(reports), s.minBatch)
	}
	for i, r := range reports {
		if len(r) != len(reports[0]) {
			return fmt.Errorf("%w: report %d has %d bytes, report 0 has %d", ErrReportLength, i, len(r), len(reports[0]))
		}
	}
	return nil
}

// Shuffle returns copies of reports in a uniformly random order, or an
// error if the batch is below the minimum or its reports differ in length.
// The input is not modified.
func (s *Shuffler) Shuffle(reports [][]byte) ([][]byte, error) {
	if err := s.check(reports); err != nil {
		return nil, err
	}
	size := len(reports[0])
	backing := make([]byte, size*len(reports))
	out := make([][]byte, len(reports))
	for i, r := range reports {
		out[i] = backing[i*size : (i+1)*size : (i+1)*size]
		copy(out[i], r)
	}
	s.mu.Lock()
	fisherYates(out, s.src)
	s.mu.Unlock()
	return out, nil
}

// ShuffleBatches shuffles all reports together and cuts the result into
// floor(len/batchSize) consecutive batches whose sizes differ by at most
// one (the remainder is spread over them), so that every batch has at least
// batchSize reports. batchSize must be ≥ the minimum; fewer than batchSize
// reports are refused.
func (s *Shuffler) ShuffleBatches(reports [][]byte, batchSize int) ([][][]byte, error) {
	if batchSize < s.minBatch {
		return nil, fmt.Errorf("batch size must be >= the minimum batch size %d, got %d", s.minBatch, batchSize)
	}
	if len(reports) < batchSize {
		return nil, fmt.Errorf("%w: %d reports, batch size %d", ErrBatchTooSmall, len(reports), batchSize)
	}
	all, err := s.Shuffle(reports)
	if err != nil {
		return nil, err
	}
	nb := len(all) / batchSize
	batches := make([][][]byte, nb)
	start := 0
	for b := range nb {
		size := len(all) / nb
		if b < len(all)%nb {
			size++
		}
		batches[b] = all[start : start+size : start+size]
		start += size
	}
	return batches, nil
}

// fisherYates permutes xs uniformly at random in place: for i = n−1 down to
// 1 it swaps xs[i] with xs[j], j uniform on [0, i]. Each of the n! outcomes
// has probability exactly 1/n! when the index draws are exactly uniform.
func fisherYates[T any](xs []T, src randomizer.Source) {
	for i := len(xs) - 1; i > 0; i-- {
		j := randomizer.UniformIndex(src, uint64(i+1))
		xs[i], xs[j] = xs[j], xs[i]
	}
}
