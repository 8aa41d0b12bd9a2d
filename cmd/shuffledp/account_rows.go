package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
)

// event returns the privacy event the flags describe. A parameter the
// mechanism does not use is set only when its flag was given, so that
// event.Validate names it; --k defaults to 1000 and --eps0 to 2. A
// Gaussian event always carries its adjacency (--adjacency, default
// event.DefaultAdjacency); an LDP event only when --adjacency is given.
func (req accountRequest) event() event.Event {
	if req.Mechanism == event.SampledGaussian {
		e := req.sampledGaussianEvent() // account_sampled_gaussian.go
		e.Adjacency = req.adjacency()
		return e
	}
	e := event.Event{Mechanism: req.Mechanism, N: req.N, Sigma: req.Sigma, Rate: req.Rate}
	if isGaussianMechanism(req.Mechanism) || req.Adjacency != "" {
		e.Adjacency = req.adjacency()
	}
	switch {
	case req.Mechanism == event.SubsampledShuffle || req.Mechanism == event.SubsampledShuffleGaussian || req.Given("k"):
		e.K = req.K
	}
	if req.Mechanism == event.Shuffle || req.Mechanism == event.SubsampledShuffle || req.Given("eps0") {
		e.Eps0 = req.Eps0
	}
	return e
}

// adjacency is --adjacency, or the mechanism's default.
func (req accountRequest) adjacency() string {
	if req.Adjacency != "" {
		return req.Adjacency
	}
	return event.DefaultAdjacency(req.Mechanism)
}

// isLDPMechanism reports whether the mechanism takes eps0-LDP reports (and
// so has the approximate-DP baselines).
func isLDPMechanism(name string) bool {
	return name == event.Shuffle || name == event.SubsampledShuffle
}

// accountBoundNames lists every --bound value for the event's mechanism:
// its RDP bounds, the approximate-DP baselines that apply to it, and "all".
func accountBoundNames(e event.Event) []string {
	var names []string
	for _, b := range e.Bounds() {
		names = append(names, b.Name)
	}
	for _, b := range sortedKeys(accountExtraBounds) {
		if slices.Contains(baselineMechanisms[b], e.Mechanism) {
			names = append(names, b)
		}
	}
	return append(names, "all")
}

// accountRows answers `account`: one row for req.Bound, or with "all" one
// per applicable bound. A bound of "all" that cannot be evaluated at these
// parameters (an RDP bound unsupported at every order of the grid, an
// approximate-DP baseline outside its parameter range) is skipped and
// explained in skipped, so that the table keeps its usable rows.
func accountRows(req accountRequest) (rows []accountRow, skipped []string, err error) {
	if err := req.checkClientSigma(); err != nil { // account_sampled_gaussian.go
		return nil, nil, err
	}
	e := req.event()
	if err := e.Validate(); err != nil {
		return nil, nil, err
	}
	if req.Bound != "all" {
		if h, ok := accountExtraBounds[req.Bound]; ok && isLDPMechanism(e.Mechanism) {
			r, err := h(req)
			if err != nil {
				return nil, nil, err
			}
			return []accountRow{r}, nil, nil
		}
		r, err := eventRow(req, e, req.Bound)
		var unknown *event.UnknownBoundError
		if errors.As(err, &unknown) {
			return nil, nil, fmt.Errorf("--bound %q does not apply to --mechanism %s; use one of %s",
				req.Bound, e.Mechanism, strings.Join(accountBoundNames(e), ", "))
		}
		if errors.Is(err, accounting.ErrOrderUnsupported) {
			return nil, nil, fmt.Errorf("%w (for %s: try other --orders or another --bound)", err, e)
		}
		if err != nil {
			return nil, nil, err
		}
		return []accountRow{r}, nil, nil
	}
	for _, b := range e.Bounds() {
		r, err := eventRow(req, e, b.Name)
		if errors.Is(err, accounting.ErrOrderUnsupported) {
			skipped = append(skipped, fmt.Sprintf("%s skipped for %s: %v", b.Name, e, err))
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		rows = append(rows, r)
	}
	if isLDPMechanism(e.Mechanism) {
		for _, b := range sortedKeys(accountExtraBounds) {
			r, err := accountExtraBounds[b](req)
			if errors.Is(err, errNotApplicable) {
				continue
			}
			if err != nil { // outside the baseline's parameter range
				skipped = append(skipped, fmt.Sprintf("%s skipped for %s: %v", b, e, err))
				continue
			}
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("no bound applies at these parameters: %s", strings.Join(skipped, "; "))
	}
	return rows, skipped, nil
}

// eventRow composes e over req.Steps rounds under one bound (package event)
// and formats the statement as a row.
func eventRow(req accountRequest, e event.Event, bound string) (accountRow, error) {
	var orders []float64
	if req.Given("orders") {
		orders = req.Orders
	}
	res, err := event.Account([]event.Composed{{Event: e, Count: req.Steps}}, bound, req.Delta, orders)
	if err != nil {
		return accountRow{}, err
	}
	row := accountRow{Bound: bound, Winner: res.Winner, Epsilon: res.Epsilon, Delta: res.Delta, Order: res.Order,
		Lower: res.Lower, AtGridEdge: res.AtGridEdge, Conversion: res.Conversion}
	switch {
	case res.Rounds == 0:
		row.Note = "no rounds: nothing spent"
	case res.Lower:
		row.Note = accounting.RDPLowerNote
	case res.Assumption != "":
		row.Note = "(assumes " + res.Assumption + ")"
	}
	return row, nil
}

// accountMechanismNames lists the --mechanism values.
func accountMechanismNames() []string { return slices.Clone(event.Mechanisms()) }
