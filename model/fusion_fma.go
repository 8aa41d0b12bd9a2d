//go:build !amd64 || amd64.v3

package model

// noFMAFusion is false where the Go compiler may fuse x*y + z into one
// rounding (GOAMD64=v3 and above, arm64, ppc64, s390x, riscv64, ...): Go
// code's roundings then depend on the compiler's choices, which the
// one-element kernel forms cannot follow. See fusion_none.go.
const noFMAFusion = false
