package data

import (
	"errors"
	"fmt"
	"os"
)

// Spec names the data of a training run as the train command's flags do.
type Spec struct {
	// Name is mnist (the IDX files in Dir, LoadMNIST) or synthetic (random
	// data of MNIST's shape, Synthetic: for throughput measurements).
	Name, Dir string
	// Clients is the number of clients and ExamplesPerClient (0 means 1)
	// the number of training examples each holds: the population is the
	// first Clients*ExamplesPerClient training examples (the synthetic
	// training set has that many).
	Clients, ExamplesPerClient int
	// Validation, when positive, holds that many training examples out
	// (HoldOut with DefaultHoldOutSeed) and returns them as the evaluation
	// set instead of the test set.
	Validation int
	// TestSize, when positive, keeps only the first TestSize examples of
	// the evaluation set.
	TestSize int
	// Seed generates the synthetic data (the training set from Seed, the
	// test set from Seed+1).
	Seed uint64
	// TestOnly asks for the evaluation set alone: Load returns a nil
	// training set and generates none (a networked server, whose clients
	// hold the training examples, needs only the test set; the synthetic
	// training set of a million clients would be 6.3 GB). It cannot be
	// combined with Validation, which holds examples out of the training
	// set.
	TestOnly bool
	// Transform, when not nil, maps the training set before the
	// validation hold-out and the test set after the test cut (each
	// example on its own: a fixed feature extractor, so where the split
	// and the cut happen does not change any example's features).
	Transform func(*Dataset) (*Dataset, error)
}

// Population is the number of training examples the clients hold:
// Clients * ExamplesPerClient (0 counted as 1).
func (s Spec) Population() int { return s.Clients * max(s.ExamplesPerClient, 1) }

// syntheticTestSize is the size of the synthetic evaluation set.
const syntheticTestSize = 2000

// Check refuses, reading no data and creating nothing, a spec Load would
// refuse for its names alone: an unknown dataset, mnist without a
// data-dir or with one that is not a directory, validation with a
// test-only load. Errors name the flag. A command calls it before it
// creates its outputs (a state directory), so that the corrected command
// finds nothing of the refused one.
func (s Spec) Check() error {
	if s.TestOnly && s.Validation > 0 {
		return errors.New("validation: the evaluation set is held out of the training set, which a test-only load does not have")
	}
	switch s.Name {
	case "mnist":
		if s.Dir == "" {
			return errors.New("data-dir is required for --dataset mnist (fetch it with `shuffledp data fetch mnist --dir DIR`)")
		}
		if st, err := os.Stat(s.Dir); err != nil || !st.IsDir() {
			return fmt.Errorf("data-dir %s: not a directory (fetch mnist with `shuffledp data fetch mnist --dir %s`)", s.Dir, s.Dir)
		}
	case "synthetic":
	default:
		return fmt.Errorf("dataset must be mnist or synthetic, got %q", s.Name)
	}
	return nil
}

// Load returns the training and evaluation sets of s. Errors name the flag
// (dataset, data-dir, clients).
func Load(s Spec) (train, test *Dataset, err error) {
	if err := s.Check(); err != nil {
		return nil, nil, err
	}
	switch s.Name {
	case "mnist":
		train, test, err = LoadMNIST(s.Dir)
	case "synthetic":
		// Example i of either set depends only on (seed, i), so a set
		// cut to its first examples is generated as that cut.
		testN := syntheticTestSize
		if s.TestSize > 0 && s.Validation == 0 {
			testN = min(testN, s.TestSize)
		}
		test = Synthetic(testN, s.Seed+1)
		if !s.TestOnly {
			train = Synthetic(max(s.Population(), 1)+max(s.Validation, 0), s.Seed)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	transform := func(d *Dataset) (*Dataset, error) {
		if s.Transform == nil {
			return d, nil
		}
		out, err := s.Transform(d)
		if err != nil {
			return nil, fmt.Errorf("features: %w", err)
		}
		return out, nil
	}
	if s.TestOnly {
		train = nil
	} else if train, err = transform(train); err != nil {
		return nil, nil, err
	}
	if s.Validation > 0 {
		if train, test, err = train.HoldOut(s.Validation, DefaultHoldOutSeed); err != nil {
			return nil, nil, err
		}
		if s.Population() > train.N {
			if s.ExamplesPerClient > 1 {
				return nil, nil, fmt.Errorf("clients * examples-per-client (%d * %d) exceeds the %d training examples left after --validation %d: lower --clients or --examples-per-client", s.Clients, s.ExamplesPerClient, train.N, s.Validation)
			}
			return nil, nil, fmt.Errorf("clients (%d) exceeds the %d training examples left after --validation %d: lower --clients", s.Clients, train.N, s.Validation)
		}
	}
	if s.TestSize > 0 && s.TestSize < test.N {
		t := *test
		t.N, t.X, t.Y = s.TestSize, t.X[:s.TestSize*t.Dim], t.Y[:s.TestSize]
		test = &t
	}
	if s.Validation == 0 { // a validation split was transformed with the training set
		if test, err = transform(test); err != nil {
			return nil, nil, err
		}
	}
	return train, test, nil
}
