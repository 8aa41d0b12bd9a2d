//go:build !amd64.v3

package model

// tanhVector enables the vectorized rational branch of tanhSlice. It
// reproduces math.Tanh bit for bit only while the Go compiler fuses no
// multiply-add in math.tanh, which holds on amd64 below GOAMD64=v3.
const tanhVector = true
