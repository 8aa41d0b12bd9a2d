//go:build amd64.v3

package model

// tanhVector is false with GOAMD64=v3 and above: the compiler may then fuse
// math.tanh's multiply-adds, which the vector kernel does not.
const tanhVector = false
