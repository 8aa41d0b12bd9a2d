package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// OpenReader opens a ledger for reading only, as `shuffledp ledger show`
// and `check` do: exactly one of stateDir (a run's state directory, whose
// ledger is the SQLite file FileName in it) and target (OpenStore's: a
// postgres:// URL or an SQLite file) is given. It returns the store and a
// name for messages (a PostgreSQL URL without its password). Errors name
// the flags --state and --ledger.
func OpenReader(ctx context.Context, stateDir, target string) (Backend, string, error) {
	switch {
	case stateDir != "" && target != "":
		return nil, "", errors.New("--state and --ledger are exclusive: give the run's state directory or the ledger, not both")
	case stateDir == "" && target == "":
		return nil, "", errors.New("--state or --ledger is required: the run's state directory, or the ledger (a postgres:// URL or an SQLite file)")
	case target != "":
		s, err := OpenStore(ctx, target, StoreOptions{ReadOnly: true})
		if err != nil {
			return nil, "", fmt.Errorf("--ledger: %w", err)
		}
		return s, fmt.Sprint(s), nil
	}
	path := filepath.Join(stateDir, FileName)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", fmt.Errorf("--state %s: no ledger (%s does not exist)", stateDir, path)
		}
		return nil, "", fmt.Errorf("--state: %w", err)
	}
	s, err := OpenSQLite(ctx, path, SQLiteOptions{ReadOnly: true})
	if err != nil {
		return nil, "", err
	}
	return s, path, nil
}

// OnlyRun returns the store's run when it has exactly one; otherwise an
// error listing them (naming the flag --run).
func OnlyRun(ctx context.Context, store Store) (string, error) {
	runs, err := store.Runs(ctx)
	if err != nil {
		return "", err
	}
	switch len(runs) {
	case 0:
		return "", errors.New("the ledger has no runs")
	case 1:
		return runs[0], nil
	}
	return "", fmt.Errorf("the ledger has %d runs (%s): choose one with --run", len(runs), strings.Join(runs, ", "))
}

// Routes a Summary can be re-accounted by (Summary.Reaccount; `ledger show
// --accountant`).
const (
	// AccountantLedger is the run's statement as its ledger computes it
	// (Statement: what the run's metrics, dashboard and stop used): the
	// default.
	AccountantLedger = "ledger"
	// AccountantRDP is the RDP route of the run's bound alone.
	AccountantRDP = "rdp"
	// AccountantPLD is the PLD accountant's certified upper end (route.PLD).
	AccountantPLD = "pld"
	// AccountantBest is route.BestWith of the run's best bound ("best", or
	// "best-conjecture" for a run that opted in) at the run's own rounds,
	// every route evaluated there (the ledger evaluates its costly routes at
	// a checkpoint, Checkpoint): what `account --bound best` prints.
	AccountantBest = "best"
)

// Reaccount replaces s's statement by the accountant's over the same
// stored events and delta (ledger entries are events, so any route can
// re-account them): AccountantLedger (or "") leaves s as the ledger
// computed it, AccountantRDP sets the RDP route of the run's bound,
// AccountantPLD route.PLD's upper end, AccountantBest route.BestWith's
// minimum, whose routes it returns. Errors name --accountant.
func (s *Summary) Reaccount(accountant string) ([]route.RouteResult, error) {
	switch accountant {
	case AccountantLedger, "":
		return nil, nil
	case AccountantRDP:
		if s.Rounds == 0 {
			return nil, nil
		}
		r, err := route.Account(s.Events, s.Bound, s.Delta, s.Orders)
		if err != nil {
			return nil, fmt.Errorf("--accountant rdp: %w", err)
		}
		s.set(r.Guarantee, route.RouteRDP, r.Winner, r.Conjecture, r.Assumption)
		return nil, nil
	case AccountantPLD:
		if s.Rounds == 0 {
			return nil, nil
		}
		r, err := route.PLD(s.Events, s.Delta)
		if err != nil {
			return nil, fmt.Errorf("--accountant pld: %w", err)
		}
		s.set(accounting.Guarantee{Epsilon: r.Upper, Delta: s.Delta}, route.RoutePLD, route.BoundPLD, false, "")
		s.Bound = route.BoundPLD
		return nil, nil
	case AccountantBest:
		if s.Rounds == 0 {
			return nil, nil
		}
		bound := accounting.BoundBest
		if s.Bound == route.BoundBestConjecture {
			bound = s.Bound
		}
		r, err := route.BestWith(s.Events, bound, s.Delta, s.Orders)
		if err != nil {
			return nil, fmt.Errorf("--accountant best: %w", err)
		}
		s.set(r.Guarantee, r.Route, r.Winner, r.Conjecture, r.Assumption)
		s.Bound = bound
		return r.Routes, nil
	}
	return nil, fmt.Errorf("--accountant must be %s, %s, %s or %s, got %q", AccountantLedger, AccountantRDP, AccountantPLD, AccountantBest, accountant)
}

// set replaces s's statement by a route's.
func (s *Summary) set(g accounting.Guarantee, route, winner string, conjecture bool, assumption string) {
	s.Epsilon, s.Order, s.Conversion, s.AtGridEdge = g.Epsilon, g.Order, g.Conversion, g.AtGridEdge
	s.Route, s.Winner, s.Conjecture, s.Assumption, s.EvaluatedAt = route, winner, conjecture, assumption, 0
}

// Check is the result of CheckAll: the store passed its integrity check,
// and each run's statement by both routes.
type Check struct {
	Runs    int
	Entries int64
	// Accounts holds one summary per run with rounds, with the PLD route
	// beside it.
	Accounts []RunCheck
}

// RunCheck is one run of a Check: its summary re-accounted by the RDP
// route of its bound (Reaccount with AccountantRDP), the PLD route's interval over the same events
// (or why it has none), and the events that are not the event
// event.RoundEvent builds for their round kind (event.RoundOf).
type RunCheck struct {
	Summary
	PLD    route.PLDResult
	PLDErr error
	// NotRoundEvents lists the distinct stored events that no round of
	// the simulation or the shuffler debits (RoundEvent(RoundOf(e)) != e),
	// each with the reason.
	NotRoundEvents []string
}

// CheckAll runs the store's integrity check (the database's own checks,
// every entry decodes, counts agree), then re-accounts every run with
// rounds by the RDP and PLD routes and re-builds each stored event through
// event.RoundEvent (an event it does not give back is listed, not an
// error: a foreign writer may store any valid event).
func CheckAll(ctx context.Context, store Store) (Check, error) {
	var c Check
	if err := store.Check(ctx); err != nil {
		return c, err
	}
	runs, err := store.Runs(ctx)
	if err != nil {
		return c, err
	}
	c.Runs = len(runs)
	for _, r := range runs {
		info, err := store.Run(ctx, r)
		if err != nil {
			return c, err
		}
		c.Entries += info.Entries
	}
	for _, r := range runs {
		s, err := Summarize(ctx, store, r, 0, false)
		if err != nil {
			return c, err
		}
		if s.Rounds == 0 {
			continue
		}
		if _, err := s.Reaccount(AccountantRDP); err != nil { // the RDP route beside the PLD one
			return c, err
		}
		rc := RunCheck{Summary: s}
		rc.PLD, rc.PLDErr = route.PLD(s.Events, s.Delta)
		for _, ev := range s.Events {
			if err := event.CheckRoundEvent(ev.Event); err != nil {
				rc.NotRoundEvents = append(rc.NotRoundEvents, err.Error())
			}
		}
		c.Accounts = append(c.Accounts, rc)
	}
	return c, nil
}
