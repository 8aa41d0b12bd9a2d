// Package calculator is the in-browser privacy calculator: the accountant of
// `shuffledp account`, compiled to WebAssembly (cmd/shuffledp-wasm), behind a
// static page (package calculator/site) that `shuffledp calculator` serves or
// writes out for publishing.
//
// The page's state is a query string whose keys are the flags of
// `shuffledp account` (mechanism, n, k, eps0, sigma, rate, adjacency, steps,
// delta), so that a shared URL and the command line say the same thing and
// Compute answers exactly what `shuffledp account --json --bound all` prints
// for those flags (the same library function computes both).
package calculator

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/event"
)

// Parameter names: the flags of `shuffledp account` the page offers.
const (
	ParamMechanism = "mechanism"
	ParamN         = "n"
	ParamK         = "k"
	ParamEps0      = "eps0"
	ParamSigma     = "sigma"
	ParamRate      = "rate"
	ParamAdjacency = "adjacency"
	ParamSteps     = "steps"
	ParamDelta     = "delta"
)

// Field describes one input of the page's form.
type Field struct {
	Name    string `json:"name"`    // the query key and CLI flag (without --)
	Label   string `json:"label"`   // what the form shows
	Help    string `json:"help"`    // one sentence under the input
	Default string `json:"default"` // the value the form starts with
}

// Mechanism is one entry of the page's mechanism menu.
type Mechanism struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Fields      []string `json:"fields"` // the parameters it takes, in form order
	// Adjacencies are the values of adjacency it accepts, its default
	// (event.DefaultAdjacency) first; none for the eps0-LDP mechanisms.
	Adjacencies []string `json:"adjacencies,omitempty"`
}

// Schema is what the page builds its form from: every mechanism with the
// parameters it takes, and every parameter's label, help and default.
type Schema struct {
	Mechanisms []Mechanism `json:"mechanisms"`
	Fields     []Field     `json:"fields"`
	// Default is the mechanism the form starts with.
	Default string `json:"default"`
}

// mechanisms lists the parameters of each mechanism, in the order the form
// shows them; the CLI's defaults for the LDP mechanisms (the
// NeurIPS'21 Fig. 2a setting) are the form's.
var mechanisms = []Mechanism{
	{event.SubsampledShuffle, "k of n clients sampled per round, eps0-LDP reports, shuffled (NeurIPS'21)",
		[]string{ParamN, ParamK, ParamEps0, ParamSteps, ParamDelta}, nil},
	{event.Shuffle, "all n clients send an eps0-LDP report, shuffled (CCS'21)",
		[]string{ParamN, ParamEps0, ParamSteps, ParamDelta}, nil},
	{event.ShuffleGaussian, "all n clients add N(0, sigma^2 I), reports shuffled (ICLR'23 submission, Thm 1)",
		[]string{ParamN, ParamSigma, ParamAdjacency, ParamSteps, ParamDelta}, gaussianAdjacencies},
	{event.SubsampledShuffleGaussian, "k of n clients sampled per round add Gaussian noise, shuffled (ICLR'23 submission, Thm 2)",
		[]string{ParamN, ParamK, ParamSigma, ParamAdjacency, ParamSteps, ParamDelta}, gaussianAdjacencies},
	{event.CheckinGaussian, "each of n clients checks in with probability rate and adds Gaussian noise, shuffled (ICLR'23 submission, eq. 11)",
		[]string{ParamN, ParamRate, ParamSigma, ParamAdjacency, ParamSteps, ParamDelta}, gaussianAdjacencies},
	{event.SampledGaussian, "central DP-SGD: Poisson sampling at rate, the server adds N(0, sigma^2 I) (Mironov, Talwar, Zhang 2019)",
		[]string{ParamRate, ParamSigma, ParamAdjacency, ParamSteps, ParamDelta},
		[]string{event.AdjacencyAddRemove, event.AdjacencyZeroOut}},
}

// gaussianAdjacencies are the adjacencies of the shuffle Gaussian
// mechanisms, the default first.
var gaussianAdjacencies = []string{event.AdjacencyReplaceOne, event.AdjacencyZeroOut}

var fields = []Field{
	{Name: ParamN, Label: "n (clients)", Help: "the population: clients that may be sampled or report", Default: "1000000"},
	{Name: ParamK, Label: "k (clients per round)", Help: "clients sampled per round, without replacement", Default: "1000"},
	{Name: ParamEps0, Label: "eps0 (local randomizer)", Help: "each report is eps0-LDP", Default: "2"},
	{Name: ParamSigma, Label: "sigma (noise multiplier)", Help: "the Gaussian noise's standard deviation in units of the clipping norm", Default: "1"},
	{Name: ParamRate, Label: "rate (sampling probability)", Help: "each client takes part in a round with this probability", Default: "0.01"},
	{Name: ParamAdjacency, Label: "adjacency", Help: "neighbouring datasets: replace-one (2C apart), zero-out (the ICLR'23 paper's convention) or add-remove (sampled-gaussian); empty for the mechanism's default",
		Default: ""},
	{Name: ParamSteps, Label: "rounds T", Help: "the number of rounds composed", Default: "100000"},
	{Name: ParamDelta, Label: "delta", Help: "target delta in (0,1); a quotient such as 1/60000 is accepted. A training run's ledger uses 1e-5", Default: "1e-8"},
}

// DefaultSchema returns the form's schema.
func DefaultSchema() Schema {
	return Schema{Mechanisms: slices.Clone(mechanisms), Fields: slices.Clone(fields), Default: event.SubsampledShuffle}
}

// Query is a parsed, validated page state: a mechanism and the raw values of
// exactly the parameters it takes (adjacency may be absent).
type Query struct {
	Mechanism string
	// Values holds the parameters' text as given (trimmed), by name.
	Values map[string]string
}

func findMechanism(name string) (Mechanism, bool) {
	for _, m := range mechanisms {
		if m.Name == name {
			return m, true
		}
	}
	return Mechanism{}, false
}

// ParseQuery reads a page state from a URL query string such as
// "mechanism=shuffle&n=10000&eps0=1&steps=1&delta=1e-8". Every parameter
// the mechanism takes must be present (adjacency may be omitted), each at
// most once, and no other key may appear; numbers are checked as the CLI's
// flags check them (an integer may be written 1e6, delta as a quotient
// a/b). The error names the parameter.
func ParseQuery(raw string) (Query, error) {
	v, err := url.ParseQuery(strings.TrimPrefix(raw, "?"))
	if err != nil {
		return Query{}, fmt.Errorf("query string: %w", err)
	}
	mech := v.Get(ParamMechanism)
	m, ok := findMechanism(mech)
	if !ok {
		var names []string
		for _, m := range mechanisms {
			names = append(names, m.Name)
		}
		return Query{}, fmt.Errorf("mechanism %q is not one of %s", mech, strings.Join(names, ", "))
	}
	q := Query{Mechanism: mech, Values: map[string]string{}}
	for key, vals := range v {
		if key == ParamMechanism {
			if len(vals) != 1 {
				return Query{}, fmt.Errorf("mechanism is given %d times", len(vals))
			}
			continue
		}
		if !slices.Contains(m.Fields, key) {
			return Query{}, fmt.Errorf("parameter %q is not used by mechanism %s (it takes %s)", key, mech, strings.Join(m.Fields, ", "))
		}
		if len(vals) != 1 {
			return Query{}, fmt.Errorf("%s is given %d times", key, len(vals))
		}
		s := strings.TrimSpace(vals[0])
		if key == ParamAdjacency && s == "" {
			continue // the mechanism's default
		}
		if err := checkValue(key, s); err != nil {
			return Query{}, err
		}
		q.Values[key] = s
	}
	for _, f := range m.Fields {
		if _, ok := q.Values[f]; !ok && f != ParamAdjacency {
			return Query{}, fmt.Errorf("%s is missing (mechanism %s takes %s)", f, mech, strings.Join(m.Fields, ", "))
		}
	}
	return q, nil
}

// checkValue checks that s parses as the flag name's type.
func checkValue(name, s string) error {
	var err error
	switch name {
	case ParamN, ParamK, ParamSteps:
		_, err = ParseCount(s)
	case ParamDelta:
		_, err = ParseFraction(s)
	case ParamEps0, ParamSigma, ParamRate:
		var x float64
		x, err = strconv.ParseFloat(s, 64)
		if err == nil && (math.IsNaN(x) || math.IsInf(x, 0)) {
			err = fmt.Errorf("not a finite number: %q", s)
		}
	case ParamAdjacency:
		if !slices.Contains(event.Adjacencies(), s) {
			err = fmt.Errorf("%q is not one of %s", s, strings.Join(event.Adjacencies(), ", "))
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// ParseCount parses an integer as the CLI's count flags do: decimal, or an
// exact float notation such as 1e6.
func ParseCount(s string) (int64, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x != math.Trunc(x) || math.Abs(x) > 1<<62 {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return int64(x), nil
}

// ParseFraction parses a number or a quotient "a/b", as the CLI's --delta
// (account.ParseFraction).
func ParseFraction(s string) (float64, error) { return account.ParseFraction(s) }

// Args returns the query as `shuffledp account` flags, in the mechanism's
// form order: ["--mechanism", "shuffle", "--n", "10000", ...].
func (q Query) Args() []string {
	args := []string{"--" + ParamMechanism, q.Mechanism}
	m, _ := findMechanism(q.Mechanism)
	for _, f := range m.Fields {
		if s, ok := q.Values[f]; ok {
			args = append(args, "--"+f, s)
		}
	}
	return args
}

// Encode returns the query string of q, keys in the mechanism's form order
// (the page's shareable state).
func (q Query) Encode() string {
	var b strings.Builder
	b.WriteString(ParamMechanism + "=" + url.QueryEscape(q.Mechanism))
	m, _ := findMechanism(q.Mechanism)
	for _, f := range m.Fields {
		if s, ok := q.Values[f]; ok {
			b.WriteString("&" + f + "=" + url.QueryEscape(s))
		}
	}
	return b.String()
}

// WithSteps returns a copy of q with steps set to t.
func (q Query) WithSteps(t int64) Query {
	c := Query{Mechanism: q.Mechanism, Values: map[string]string{}}
	for k, v := range q.Values {
		c.Values[k] = v
	}
	c.Values[ParamSteps] = strconv.FormatInt(t, 10)
	return c
}
