package calculator

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The methods of Call: the calculator's whole interface to its page, the
// same whether the page's worker runs the accountant compiled to
// WebAssembly (cmd/shuffledp-wasm binds them to globalThis.shuffledp) or
// asks the process that serves the page (calculator/site, native mode).
const (
	MethodSchema     = "schema"     // the form: mechanisms, parameters, defaults (DefaultSchema)
	MethodCompute    = "compute"    // every bound for a page state (Compute)
	MethodCurveSteps = "curveSteps" // the round counts of the curve (CurveSteps)
	MethodPoint      = "point"      // best's epsilon after steps rounds (Point)
	MethodPreview    = "preview"    // the fast rows, shown before compute's answer (Preview)
)

// Methods lists Call's methods.
func Methods() []string {
	return []string{MethodSchema, MethodCompute, MethodCurveSteps, MethodPoint, MethodPreview}
}

// ErrUnknownMethod is Call's error for a method it does not have.
var ErrUnknownMethod = errors.New("unknown method")

// Call answers one of the page's calls as JSON text, {"result": ...} or
// {"error": "..."}: method is one of Methods, query the page state (a query
// string keyed by account's flags, ParseQuery), steps the round count of
// MethodPoint (ignored by the others).
func Call(method, query string, steps int64) string {
	switch method {
	case MethodSchema:
		return reply(DefaultSchema(), nil)
	case MethodCompute, MethodCurveSteps, MethodPoint, MethodPreview:
	default:
		return reply(nil, fmt.Errorf("%w %q (the methods: %v)", ErrUnknownMethod, method, Methods()))
	}
	q, err := ParseQuery(query)
	if err != nil {
		return reply(nil, err)
	}
	switch method {
	case MethodCompute:
		return reply(Compute(q))
	case MethodPoint:
		return reply(Point(q, steps))
	case MethodPreview:
		return reply(Preview(q))
	}
	t, err := ParseCount(q.Values[ParamSteps])
	if err != nil {
		return reply(nil, err)
	}
	ts := CurveSteps(t, CurvePoints)
	if ts == nil {
		ts = []int64{} // JSON [], not null
	}
	return reply(ts, nil)
}

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
