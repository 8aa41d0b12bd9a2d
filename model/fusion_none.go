//go:build amd64 && !amd64.v3

package model

// noFMAFusion reports that the Go compiler fuses no multiply-add in this
// build (amd64 below GOAMD64=v3), so that Go code rounds every product and
// sum as written. GradientCoordinate's one-element kernel forms and
// tanhSlice's vector branch rely on it to reproduce Gradient's and
// math.Tanh's roundings; elsewhere they fall back to the full computation.
const noFMAFusion = true
