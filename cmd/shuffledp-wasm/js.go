//go:build js && wasm

package main

import "syscall/js"

// serve defines globalThis.shuffledp and blocks: the functions stay
// callable for the life of the page's worker.
func serve() {
	str := func(f func(string) string) js.Func {
		return js.FuncOf(func(_ js.Value, args []js.Value) any {
			if len(args) < 1 {
				return reply(nil, errMissingArgument)
			}
			return f(args[0].String())
		})
	}
	api := js.Global().Get("Object").New()
	api.Set("schema", js.FuncOf(func(js.Value, []js.Value) any { return schema() }))
	api.Set("compute", str(compute))
	api.Set("curveSteps", str(curveSteps))
	api.Set("point", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) < 2 {
			return reply(nil, errMissingArgument)
		}
		return point(args[0].String(), int64(args[1].Int()))
	}))
	js.Global().Set("shuffledp", api)
	select {}
}
