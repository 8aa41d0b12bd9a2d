//go:build amd64 && !purego

package training

import "golang.org/x/sys/cpu"

// kernelSet names the model package's float kernels this build runs: its
// AVX2/FMA assembly rounds a*x+y once, the portable Go code twice, so
// golden digests are kept per kernel set.
var kernelSet = func() string {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return "avx2fma"
	}
	return "go"
}()
