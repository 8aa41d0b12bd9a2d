//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

func serve() {
	fmt.Fprintln(os.Stderr, "shuffledp-wasm runs in a browser: build it with GOOS=js GOARCH=wasm (shuffledp calculator does)")
	os.Exit(2)
}
