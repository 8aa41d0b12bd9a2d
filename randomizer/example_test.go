package randomizer_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/randomizer"
)

// One CLDP-SGD aggregation with R_inf: clip, randomize, and sum the decoded
// reports without building dense vectors. The seeded source makes the
// example reproducible; deployments use randomizer.NewCryptoSource().
func Example() {
	const d, k = 4, 3
	r, err := randomizer.New("rinf", randomizer.Config{Eps0: 2, Dim: d, Radius: 1})
	if err != nil {
		panic(err)
	}
	src := randomizer.NewSeededSource(1) // simulation only, not for deployment
	sum := make([]float64, d)
	for _, grad := range [][]float64{{0.5, 3, -2, 0}, {1, 1, 1, 1}, {-0.1, 0, 0, 0.2}} {
		randomizer.Clip(r.Norm(), grad, r.Radius())
		rep, err := r.Randomize(grad, src)
		if err != nil {
			panic(err)
		}
		if err := r.AddDecoded(rep, 1.0/k, sum); err != nil {
			panic(err)
		}
		fmt.Printf("report %x (%d bytes)\n", []byte(rep), len(rep))
	}
	fmt.Printf("mean estimate %.4f\n", sum)
	// Output:
	// report 1301 (2 bytes)
	// report 1302 (2 bytes)
	// report 1305 (2 bytes)
	// mean estimate [0.0000 0.0000 1.7507 0.0000]
}

// Audit verifies eps0-LDP and unbiasedness exactly from the output
// probabilities.
func ExampleAudit() {
	r, _ := randomizer.NewR1(1, 10, 1)
	res, err := randomizer.Audit(r)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s eps0=%g: max |log ratio| = %.12f, bias ok: %v\n", res.Randomizer, res.Eps0, res.MaxLogRatio, res.MaxRelBias < 1e-12)
	// Output:
	// r1 eps0=1: max |log ratio| = 1.000000000000, bias ok: true
}

func ExampleClipL2() {
	g := []float64{3, 4}
	orig := randomizer.ClipL2(g, 1)
	fmt.Println(orig, g)
	// Output:
	// 5 [0.6000000000000001 0.8]
}
