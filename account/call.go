package account

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
)

// Methods lists the methods of Call, sorted.
func Methods() []string {
	return []string{"account", "bounds", "calibrate", "certified", "delta", "epsilon", "event", "mechanisms"}
}

// Call is the whole accountant behind one JSON-in, JSON-out function, for
// callers in other languages (the C shared library of the Python package,
// cmd/libshuffledp; a WebAssembly page). It returns {"result": R} or
// {"error": "message"}, where the message is the one the Go function (and
// the command) gives. The methods and their requests:
//
//	account     the parameters of `shuffledp account`, keyed by flag name (ParseRequest)
//	            R: the object `shuffledp account --json` prints (Answer.Output)
//	calibrate   the same plus "solve" (sigma|steps|eps0|k|rate) and "epsilon" (the target)
//	            R: the object `shuffledp calibrate --json` prints (Calibrate)
//	epsilon     {"events": [{"event": E, "count": c}, ...], "bound": b, "delta": d, "orders": [...]}
//	            R: a Statement (EpsilonOf)
//	delta       {"events": [...], "bound": b, "epsilon": x, "orders": [...]}
//	            R: a Statement (DeltaOf)
//	certified   {"events": [...], "delta": d}
//	            R: an Interval (CertifiedOf)
//	event       an event E as JSON (event.Parse: unknown fields refused, validated)
//	            R: the event as Go writes it
//	bounds      an event E: R is the list of Request.Bound values for its mechanism (BoundNames)
//	mechanisms  anything: R is event.Mechanisms()
//
// A panic in the accountant is returned as an error naming it, never
// propagated to the caller's runtime.
func Call(method string, request []byte) (response []byte) {
	defer func() {
		if p := recover(); p != nil {
			response = errorJSON(fmt.Errorf("internal error in %s: %v", method, p))
		}
	}()
	result, err := call(method, request)
	if err != nil {
		return errorJSON(err)
	}
	out, err := json.Marshal(struct {
		Result any `json:"result"`
	}{result})
	if err != nil {
		return errorJSON(fmt.Errorf("internal error: %w", err))
	}
	return out
}

func errorJSON(err error) []byte {
	out, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{err.Error()})
	return out
}

// composedRequest is the request of the methods epsilon, delta and
// certified.
type composedRequest struct {
	Events  []event.Composed `json:"events"`
	Bound   string           `json:"bound"`
	Delta   float64          `json:"delta"`
	Epsilon float64          `json:"epsilon"`
	Orders  []float64        `json:"orders"`
}

func call(method string, request []byte) (any, error) {
	switch method {
	case "account":
		req, err := ParseRequest(request)
		if err != nil {
			return nil, err
		}
		a, err := Evaluate(req)
		if err != nil {
			return nil, err
		}
		return a.Output(), nil
	case "calibrate":
		return callCalibrate(request)
	case "epsilon", "delta", "certified":
		var r composedRequest
		if err := strictDecode(request, &r); err != nil {
			return nil, fmt.Errorf("%s request: %w", method, err)
		}
		if len(r.Orders) > 0 {
			if _, err := accounting.NewAccountant(r.Orders); err != nil {
				return nil, fmt.Errorf("--orders: %w", err)
			}
		}
		switch method {
		case "epsilon":
			return EpsilonOf(r.Events, r.Bound, r.Delta, r.Orders)
		case "delta":
			return DeltaOf(r.Events, r.Bound, r.Epsilon, r.Orders)
		}
		return CertifiedOf(r.Events, r.Delta)
	case "event":
		return event.Parse(request)
	case "bounds":
		e, err := event.Parse(request)
		if err != nil {
			return nil, err
		}
		return BoundNames(e), nil
	case "mechanisms":
		return event.Mechanisms(), nil
	}
	return nil, fmt.Errorf("unknown method %q: the methods are %s", method, strings.Join(Methods(), ", "))
}

// callCalibrate reads the account parameters plus "solve" and "epsilon".
func callCalibrate(request []byte) (any, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(request, &raw); err != nil || raw == nil {
		return nil, fmt.Errorf("request is not a JSON object")
	}
	var solve string
	var target float64
	v, ok := raw["epsilon"]
	if !ok {
		return nil, fmt.Errorf("--epsilon (the target) is required")
	}
	if err := json.Unmarshal(v, &target); err != nil {
		return nil, fmt.Errorf("--epsilon: %w", err)
	}
	if !(target > 0) || math.IsInf(target, 0) {
		return nil, fmt.Errorf("--epsilon must be positive and finite, got %g", target)
	}
	v, ok = raw["solve"]
	if !ok {
		return nil, fmt.Errorf("--solve is required: one of sigma, steps, eps0, k, rate")
	}
	if err := json.Unmarshal(v, &solve); err != nil {
		return nil, fmt.Errorf("--solve: %w", err)
	}
	delete(raw, "solve")
	delete(raw, "epsilon")
	rest, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	req, err := ParseRequest(rest)
	if err != nil {
		return nil, err
	}
	if req.Bound == BoundAll {
		return nil, fmt.Errorf("--bound all is not one bound; calibrate to one bound (default %s)", accounting.BoundBest)
	}
	return Calibrate(req, solve, target)
}

// strictDecode decodes one JSON object into v, refusing unknown fields.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON object")
	}
	return nil
}
