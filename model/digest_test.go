package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// updateDigests rewrites testdata/cnn-digests.json for this build's kernel
// set. The committed values were generated at commit 4a9a1ab (before any
// change to the CNN's forward pass or Gradient for speed) with
//
//	go test ./model -run TestCNNDigests -update-digests
//	go test ./model -tags purego -run TestCNNDigests -update-digests
//
// so that later speed work on the kernels, the pools or tanh is pinned to
// the earlier results bit for bit.
var updateDigests = flag.Bool("update-digests", false, "rewrite testdata/cnn-digests.json for this build's kernels")

const digestPath = "testdata/cnn-digests.json"

// digestKernels names the kernel set of this build (the AVX2/FMA assembly
// rounds a multiply-add once, the portable Go code twice).
func digestKernels() string {
	switch {
	case !noFMAFusion:
		return "go-fused" // the compiler's fusions decide the roundings; none committed
	case useAVX2:
		return "avx2fma"
	}
	return "go"
}

// cnnDigest hashes, for 40 MNIST-shaped inputs at perturbed parameters,
// the logits (Logits), the loss and the full gradient (Gradient) as
// float64 bits.
func cnnDigest(t *testing.T, name string) string {
	m, err := New(name, 784, 10)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(51, 52))
	perturbParams(rng, m.Params(), 0.05)
	xs := coordTestImages(rng, 40, 28, 28)
	w := m.NewWorker()
	h := sha256.New()
	var b [8]byte
	put := func(v float64) {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	logits := make([]float64, m.NumClasses())
	grad := make([]float64, m.NumParams())
	for i, x := range xs {
		w.Logits(x, logits)
		for _, v := range logits {
			put(v)
		}
		put(w.Gradient(x, i%10, grad))
		for _, v := range grad {
			put(v)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestCNNDigests pins the CNNs' logits, losses and per-example gradients
// bit for bit to the committed digests of this build's kernel set.
func TestCNNDigests(t *testing.T) {
	all := map[string]map[string]string{}
	if raw, err := os.ReadFile(digestPath); err == nil {
		if err := json.Unmarshal(raw, &all); err != nil {
			t.Fatal(err)
		}
	} else if !*updateDigests {
		t.Fatal(err)
	}
	kernels := digestKernels()
	got := map[string]string{}
	for _, name := range []string{"cnn", "cnn-tanh"} {
		got[name] = cnnDigest(t, name)
	}
	if *updateDigests {
		all[kernels] = got
		raw, err := json.MarshalIndent(all, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(digestPath, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, ok := all[kernels]
	if !ok {
		t.Skipf("no digests for kernel set %s", kernels)
	}
	for name, d := range got {
		if want[name] != d {
			t.Errorf("%s (%s kernels): digest %s, committed %s", name, kernels, d, want[name])
		}
	}
}
