package account

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/cliflag"
)

// Parameters lists the keys of a JSON request (ParseRequest): the flag
// names of `shuffledp account`, sorted.
func Parameters() []string {
	return []string{"adjacency", "bound", "client-sigma", "delta", "eps0", "k", "mechanism", "n", "orders", "rate", "sigma", "steps"}
}

// ParseRequest reads a request from a JSON object keyed by the flag names
// of `shuffledp account` (Parameters), for example
// {"mechanism": "shuffle", "n": 1000, "eps0": 1, "steps": 10, "delta": 1e-6}.
// An absent key (or null) keeps its value of Defaults and is not given; a
// present key is given, as the flag would be. n, k and steps are integers
// (exact float notation such as 1e6 is accepted); delta is a number or a
// quotient string such as "1/60000"; orders is the --orders string ("lo:hi"
// or a comma list) or an array of numbers. An unknown key is an error
// naming it.
func ParseRequest(data []byte) (Request, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return Request{}, fmt.Errorf("request is not a JSON object: %w", err)
	}
	if raw == nil {
		return Request{}, fmt.Errorf("request is not a JSON object: %s", strings.TrimSpace(string(data)))
	}
	if _, err := dec.Token(); err != io.EOF {
		return Request{}, fmt.Errorf("request: trailing data after the JSON object")
	}
	req := Defaults()
	given := map[string]bool{}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		v := raw[key]
		if string(bytes.TrimSpace(v)) == "null" {
			continue
		}
		if err := req.set(key, v); err != nil {
			return Request{}, err
		}
		given[key] = true
	}
	req.Given = func(flag string) bool { return given[flag] }
	return req, nil
}

// set sets the parameter of flag name key from its JSON value.
func (r *Request) set(key string, v json.RawMessage) error {
	var err error
	switch key {
	case "mechanism":
		err = json.Unmarshal(v, &r.Mechanism)
	case "bound":
		err = json.Unmarshal(v, &r.Bound)
	case "adjacency":
		err = json.Unmarshal(v, &r.Adjacency)
	case "n":
		r.N, err = parseCount(v)
	case "k":
		r.K, err = parseCount(v)
	case "steps":
		r.Steps, err = parseCount(v)
	case "rate":
		err = json.Unmarshal(v, &r.Rate)
	case "eps0":
		err = json.Unmarshal(v, &r.Eps0)
	case "sigma":
		err = json.Unmarshal(v, &r.Sigma)
	case "client-sigma":
		err = json.Unmarshal(v, &r.ClientSigma)
	case "delta":
		r.Delta, err = parseDelta(v)
	case "orders":
		r.Orders, err = parseOrders(v)
		if err != nil {
			return fmt.Errorf("--orders: %w", err)
		}
	default:
		return fmt.Errorf("unknown parameter %q: the parameters are %s", key, strings.Join(Parameters(), ", "))
	}
	if err != nil {
		return fmt.Errorf("--%s: %w", key, err)
	}
	return nil
}

// parseCount reads an integer, also in exact float notation (1e6).
func parseCount(v json.RawMessage) (int64, error) {
	var x float64
	if err := json.Unmarshal(v, &x); err != nil {
		return 0, fmt.Errorf("%s is not an integer", v)
	}
	if i, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64); err == nil {
		return i, nil
	}
	if x != math.Trunc(x) || math.Abs(x) > 1<<62 {
		return 0, fmt.Errorf("%s is not an integer", v)
	}
	return int64(x), nil
}

// parseDelta reads a number or a quotient string "a/b".
func parseDelta(v json.RawMessage) (float64, error) {
	var x float64
	if err := json.Unmarshal(v, &x); err == nil {
		return x, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return 0, fmt.Errorf("%s is not a number or a quotient a/b", v)
	}
	return ParseFraction(s)
}

// ParseFraction parses a number or a quotient "a/b" (b nonzero), as
// --delta accepts it: delta = 1/n is common, and 1/60000 is exact to the
// last bit only as a quotient. The CLI's flags, the JSON requests and the
// calculator's URL parameters all parse delta through it.
func ParseFraction(s string) (float64, error) { return cliflag.ParseFraction(s) }

// parseOrders reads an --orders string or an array of orders, both checked
// by accounting.ParseOrders.
func parseOrders(v json.RawMessage) ([]float64, error) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return accounting.ParseOrders(s)
	}
	var a []float64
	if err := json.Unmarshal(v, &a); err != nil {
		return nil, fmt.Errorf("%s is neither an orders string nor an array of numbers", v)
	}
	parts := make([]string, len(a))
	for i, x := range a {
		parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return accounting.ParseOrders(strings.Join(parts, ","))
}

// EvaluateJSON answers a JSON request (ParseRequest) with the bytes
// `shuffledp account --json` prints for the same flags.
func EvaluateJSON(request []byte) ([]byte, error) {
	req, err := ParseRequest(request)
	if err != nil {
		return nil, err
	}
	a, err := Evaluate(req)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := a.WriteJSON(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
