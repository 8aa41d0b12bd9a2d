// Command shuffledp-wasm is the accountant of the in-browser privacy
// calculator: built with GOOS=js GOARCH=wasm (package calculator builds it
// and serves it beside its page), it defines globalThis.shuffledp with the
// functions the page's worker calls, each taking and returning JSON text:
//
//	schema()             the form: mechanisms, their parameters, defaults
//	compute(query)       every bound for a page state (calculator.Compute)
//	point(query, steps)  best's epsilon after steps rounds (calculator.Point)
//	curveSteps(query)    the round counts of the curve (calculator.CurveSteps)
//
// Every answer is {"result": ...} or {"error": "..."}. The work is package
// calculator's; this command only binds it to JavaScript. Built for any
// other platform it prints how to build it and exits 2.
package main

import (
	"encoding/json"
	"errors"

	"github.com/shuffledp/shuffledp/calculator"
)

var errMissingArgument = errors.New("missing argument")

// reply is the JSON text of an answer.
func reply(v any, err error) string {
	var m map[string]any
	if err != nil {
		m = map[string]any{"error": err.Error()}
	} else {
		m = map[string]any{"result": v}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return `{"error":"internal error: encoding the answer"}`
	}
	return string(b)
}

func schema() string { return reply(calculator.DefaultSchema(), nil) }

func compute(query string) string {
	q, err := calculator.ParseQuery(query)
	if err != nil {
		return reply(nil, err)
	}
	return reply(calculator.Compute(q))
}

func point(query string, steps int64) string {
	q, err := calculator.ParseQuery(query)
	if err != nil {
		return reply(nil, err)
	}
	return reply(calculator.Point(q, steps))
}

func curveSteps(query string) string {
	q, err := calculator.ParseQuery(query)
	if err != nil {
		return reply(nil, err)
	}
	steps, err := calculator.ParseCount(q.Values[calculator.ParamSteps])
	if err != nil {
		return reply(nil, err)
	}
	ts := calculator.CurveSteps(steps, calculator.CurvePoints)
	if ts == nil {
		ts = []int64{} // JSON [], not null
	}
	return reply(ts, nil)
}

func main() { serve() }
