//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/shuffledp/shuffledp/calculator"
)

// serve defines globalThis.shuffledp and blocks: the functions stay
// callable for the life of the page's worker.
func serve() {
	call := func(method string, withSteps bool) js.Func {
		return js.FuncOf(func(_ js.Value, args []js.Value) any {
			query, steps := "", int64(0)
			switch {
			case method == calculator.MethodSchema:
			case len(args) < 1, withSteps && len(args) < 2:
				return `{"error":"missing argument"}`
			default:
				query = args[0].String()
				if withSteps {
					steps = int64(args[1].Int())
				}
			}
			return calculator.Call(method, query, steps)
		})
	}
	api := js.Global().Get("Object").New()
	api.Set("schema", call(calculator.MethodSchema, false))
	api.Set("compute", call(calculator.MethodCompute, false))
	api.Set("curveSteps", call(calculator.MethodCurveSteps, false))
	api.Set("point", call(calculator.MethodPoint, true))
	api.Set("preview", call(calculator.MethodPreview, false))
	js.Global().Set("shuffledp", api)
	select {}
}
