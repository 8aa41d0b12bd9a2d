//go:build !amd64 || purego

package training

import "runtime"

// kernelSet names the model package's float kernels this build runs (the
// portable Go code; on arm64 and some other architectures the compiler
// fuses a*x+y, so the architecture is part of the name).
var kernelSet = "go-" + runtime.GOARCH
