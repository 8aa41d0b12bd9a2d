// Command shuffledp-wasm is the accountant of the in-browser privacy
// calculator: built with GOOS=js GOARCH=wasm (package calculator builds it
// and serves it beside its page), it defines globalThis.shuffledp with the
// functions the page's worker calls, each taking and returning JSON text:
//
//	schema()             the form: mechanisms, their parameters, defaults
//	compute(query)       every bound for a page state (calculator.Compute)
//	point(query, steps)  best's epsilon after steps rounds (calculator.Point)
//	curveSteps(query)    the round counts of the curve (calculator.CurveSteps)
//	preview(query)       the fast rows, shown first (calculator.Preview)
//
// Every answer is {"result": ...} or {"error": "..."}: calculator.Call, the
// same function a natively served calculator answers the page with. This
// command only binds it to JavaScript. Built for any other platform it
// prints how to build it and exits 2.
package main

func main() { serve() }
