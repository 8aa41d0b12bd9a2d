package account

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/directed"
	"github.com/shuffledp/shuffledp/route"
)

// BoundNames lists every Request.Bound value (the --bound flag) for the event's mechanism:
// its RDP bounds, the approximate-DP baselines that apply to it, pld where it
// has a dominating pair, best-conjecture, and "all".
func BoundNames(e event.Event) []string {
	var names []string
	for _, b := range route.Bounds(e) {
		names = append(names, b.Name)
	}
	for _, b := range Baselines() {
		if slices.Contains(baselineMechanisms[b], e.Mechanism) {
			names = append(names, b)
		}
	}
	if route.HasPLDRoute(e.Mechanism) {
		names = append(names, route.BoundPLD)
	}
	if event.IsLDP(e.Mechanism) {
		names = append(names, BoundCertified)
	}
	if !slices.Contains(names, route.BoundBestConjecture) {
		// Accepted for every mechanism (the same as best where no
		// conjecture applies), so that a run may opt in whatever it runs.
		names = append(names, route.BoundBestConjecture)
	}
	names = append(names, BoundRDPBest, BoundBestNoPLD)
	return append(names, BoundAll)
}

// Rows answers the request: one row for req.Bound, or with "all" one
// per applicable bound. A bound of "all" that cannot be evaluated at these
// parameters (an RDP bound unsupported at every order of the grid, an
// approximate-DP baseline outside its parameter range) is skipped and
// explained in skipped, so that the table keeps its usable rows.
func Rows(req Request) (rows []Row, skipped []string, err error) {
	if err := req.checkClientSigma(); err != nil { // sampled_gaussian.go
		return nil, nil, err
	}
	e, err := req.roundEvent()
	if err != nil {
		return nil, nil, err
	}
	if req.Bound == BoundCertified {
		r, err := certifiedRow(req, e)
		if err != nil {
			return nil, nil, err
		}
		return []Row{r}, nil, nil
	}
	if req.Bound == BoundRDPBest || req.Bound == BoundBestNoPLD {
		r, err := eventRow(req, e, req.Bound)
		if err != nil {
			return nil, nil, err
		}
		return []Row{r}, nil, nil
	}
	if req.Bound == route.BoundPLD {
		r, err := pldRow(req, e)
		if err != nil {
			return nil, nil, err
		}
		return []Row{r}, nil, nil
	}
	if req.Bound != BoundAll {
		if h, ok := extraBounds[req.Bound]; ok && event.IsLDP(e.Mechanism) {
			r, err := h(req)
			if err != nil {
				return nil, nil, err
			}
			return []Row{r}, nil, nil
		}
		r, err := eventRow(req, e, req.Bound)
		var unknown *route.UnknownBoundError
		if errors.As(err, &unknown) {
			return nil, nil, fmt.Errorf("--bound %q does not apply to --mechanism %s; use one of %s",
				req.Bound, e.Mechanism, strings.Join(BoundNames(e), ", "))
		}
		if errors.Is(err, accounting.ErrOrderUnsupported) {
			return nil, nil, fmt.Errorf("%w (for %s: try other --orders or another --bound)", err, e)
		}
		if err != nil {
			return nil, nil, err
		}
		return []Row{r}, nil, nil
	}
	for _, b := range route.Bounds(e) {
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
	if r, err := pldRow(req, e); err == nil {
		rows = append(rows, r)
	} else if !errors.Is(err, route.ErrNoDominatingPair) {
		skipped = append(skipped, fmt.Sprintf("%s skipped for %s: %v", route.BoundPLD, e, err))
	}
	if event.IsLDP(e.Mechanism) {
		if r, err := certifiedRow(req, e); err == nil {
			rows = append(rows, r)
		} else {
			skipped = append(skipped, fmt.Sprintf("%s skipped for %s: %v", BoundCertified, e, err))
		}
		for _, b := range Baselines() {
			r, err := extraBounds[b](req)
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

// eventRow composes e over req.Steps rounds under one bound (package route)
// and formats the statement as a row.
func eventRow(req Request, e event.Event, bound string) (Row, error) {
	var orders []float64
	if req.given("orders") {
		orders = req.Orders
	}
	events := []event.Composed{{Event: e, Count: req.Steps}}
	var (
		res  route.Result
		best route.BestResult
		err  error
	)
	if route.IsBest(bound) || bound == BoundBestNoPLD {
		// Every valid upper route, not only RDP (route.BestWith: "best",
		// or the opt-in best-conjecture).
		if bound == BoundBestNoPLD {
			var r route.Result
			if r, err = route.Account(events, accounting.BoundBest, req.Delta, orders); err == nil {
				best = route.BestOf(events, r, req.Delta, route.RouteApproxDP)
			}
		} else {
			best, err = route.BestWith(events, bound, req.Delta, orders)
		}
		res = best.Result
	} else {
		b := bound
		if b == BoundRDPBest {
			b = accounting.BoundBest // the RDP curve "best" alone
		}
		res, err = route.Account(events, b, req.Delta, orders)
	}
	if err != nil {
		return Row{}, err
	}
	row := Row{Bound: bound, Winner: res.Winner, Epsilon: res.Epsilon, Delta: res.Delta, Order: res.Order,
		Lower: res.Lower, AtGridEdge: res.AtGridEdge, Conversion: res.Conversion, Routes: best.Routes,
		Conjecture: res.Conjecture}
	switch {
	case res.Rounds == 0:
		row.Note = "no rounds: nothing spent"
	case best.Route != "" && best.Route != route.RouteRDP:
		row.Note = "(" + best.Route + " route)"
	case res.Lower:
		row.Note = accounting.RDPLowerNote
	case res.Conjecture:
		row.Note = "(" + res.Assumption + ")"
	}
	return row, nil
}

// pldRow accounts e over req.Steps rounds by PLD (route.PLD): the
// pessimistic end is the guarantee, the optimistic end is reported beside
// it (the discretisation interval of the dominating pairs).
func pldRow(req Request, e event.Event) (Row, error) {
	r, err := route.PLD([]event.Composed{{Event: e, Count: req.Steps}}, req.Delta)
	if err != nil {
		return Row{}, err
	}
	row := Row{Bound: route.BoundPLD, Epsilon: r.Upper, Delta: r.Delta, PLDOptimistic: r.Lower, PLDGrid: r.Grid}
	switch {
	case r.Rounds == 0:
		row.Note = "no rounds: nothing spent"
	default:
		row.Note = fmt.Sprintf("PLD of the dominating pair; optimistic %s (discretisation)", directed.Lower(r.Lower, directed.Digits))
	}
	return row, nil
}

// BoundCertified is the --bound value of the certified interval
// (route.CertifiedInterval): its row's epsilon is the certified lower
// bound, with the interval [lower, upper] and the ratio.
const BoundCertified = "certified"

// certifiedRow is the row of the certified interval: Epsilon the certified
// lower bound (kind certified-lower), Interval [lower, upper] with upper
// best's epsilon, and their ratio.
func certifiedRow(req Request, e event.Event) (Row, error) {
	c, err := route.CertifiedInterval([]event.Composed{{Event: e, Count: req.Steps}}, req.Delta)
	if err != nil {
		return Row{}, err
	}
	row := Row{Bound: BoundCertified, Kind: accounting.KindCertifiedLower, Epsilon: c.Lower, Delta: c.Delta,
		Interval: []float64{c.Lower, c.Upper}, UpperBound: c.UpperBound}
	if c.Rounds == 0 {
		row.Note = "no rounds: nothing spent"
		return row, nil
	}
	row.Witness = c.Witness
	iv := fmt.Sprintf("[%s, %s]", directed.Lower(c.Lower, directed.Digits), directed.Upper(c.Upper, directed.Digits))
	if c.Lower == 0 || math.IsInf(c.Ratio, 0) || math.IsNaN(c.Ratio) {
		row.Note = fmt.Sprintf("%s no ratio: the worst case lies between (upper: best, %s; lower: 0, no witness with a positive epsilon at this delta)",
			iv, c.UpperBound)
		return row, nil
	}
	ratio := c.Ratio
	row.Ratio = &ratio
	row.Note = fmt.Sprintf("%s ratio %s: the worst case lies between (upper: best, %s; lower: exact epsilon of %s)",
		iv, directed.Upper(c.Ratio, 3), c.UpperBound, c.Witness)
	return row, nil
}

// BoundRDPBest is the --bound value of the RDP route of best alone: at every
// order the smallest valid RDP upper bound, composed and converted (what
// "best" meant before it compared every route; route.Account with "best").
const BoundRDPBest = "rdp-best"

// BoundBestNoPLD is best over the RDP and approximate-DP routes only (route.BestOf
// with route.RouteApproxDP): what calibrate uses for "best", since it
// evaluates 20 to 60 parameter values and a PLD composition costs 0.05 to
// 2 s (far more at extreme parameters, such as a tiny sigma).
const BoundBestNoPLD = "best-no-pld"
