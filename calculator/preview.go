package calculator

import (
	"encoding/json"
	"slices"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/route"
)

// Preview is what the page shows at once, before Compute's answer: the rows
// of the mechanism's RDP bounds (each a curve over orders, composed and
// converted: milliseconds), in the order of `account --bound all`, each
// exactly the row `account --json --bound B` prints. It leaves out what
// takes longer — best, the PLD route, the certified interval and the
// approximate-DP baselines — which Compute's answer adds. A bound that
// does not apply at these parameters is left out, as "all" skips it.
func Preview(q Query) ([]Row, error) {
	b, err := requestJSON(q, account.BoundAll)
	if err != nil {
		return nil, err
	}
	req, err := account.ParseRequest(b)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	slow := append([]string{accounting.BoundBest, route.BoundBestConjecture, route.BoundPLD, account.BoundCertified,
		account.BoundRDPBest, account.BoundBestNoPLD, account.BoundAll}, account.Baselines()...)
	rows := []Row{}
	for _, name := range account.BoundNames(req.Event()) {
		if slices.Contains(slow, name) {
			continue
		}
		raw, err := accountJSON(q, name)
		if err != nil {
			continue // as "all" skips a bound it cannot evaluate here
		}
		var out accountOutput
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, err
		}
		if err := checkEpsilon(out.Row); err != nil {
			return nil, err
		}
		out.Row.Text = FormatKind(out.Row.Epsilon, out.Row.Kind)
		rows = append(rows, out.Row)
	}
	return rows, nil
}
