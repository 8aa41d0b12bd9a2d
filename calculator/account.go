package calculator

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/shuffledp/shuffledp/account"
)

// accountJSON returns what `shuffledp account --json --bound bound` prints
// for q's flags: the bytes of account.EvaluateJSON, the function the
// command itself calls. Each value is handed over as the flag's parser
// reads its text (an integer as an integer, delta a/b as the quotient
// string), so that the page and the command answer the same question.
func accountJSON(q Query, bound string) ([]byte, error) {
	b, err := requestJSON(q, bound)
	if err != nil {
		return nil, err
	}
	return account.EvaluateJSON(b)
}

// requestJSON is the JSON request (account.ParseRequest's input) of q's
// flags with --bound bound.
func requestJSON(q Query, bound string) ([]byte, error) {
	req := map[string]any{ParamMechanism: q.Mechanism, "bound": bound}
	for key, s := range q.Values {
		switch key {
		case ParamN, ParamK, ParamSteps:
			n, err := ParseCount(s)
			if err != nil {
				return nil, err
			}
			req[key] = n
		case ParamDelta:
			if strings.Contains(s, "/") {
				req[key] = s
				continue
			}
			fallthrough
		case ParamEps0, ParamSigma, ParamRate:
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, err
			}
			req[key] = x
		default:
			req[key] = s
		}
	}
	return json.Marshal(req)
}
