package data

import (
	"strings"
	"testing"
)

// TestLoad: synthetic sizes, the validation split replacing the test set,
// the evaluation set cut to TestSize, and errors naming the flag.
func TestLoad(t *testing.T) {
	cases := []struct {
		name             string
		spec             Spec
		trainN, testN    int
		errMatch         string
		validationIsTest bool
	}{
		{"synthetic", Spec{Name: "synthetic", Clients: 30, Seed: 1}, 30, 2000, "", false},
		{"test size", Spec{Name: "synthetic", Clients: 30, TestSize: 7, Seed: 1}, 30, 7, "", false},
		{"test size above", Spec{Name: "synthetic", Clients: 30, TestSize: 5000, Seed: 1}, 30, 2000, "", false},
		{"validation", Spec{Name: "synthetic", Clients: 30, Validation: 10, Seed: 1}, 30, 10, "", true},
		{"no mnist dir", Spec{Name: "mnist"}, 0, 0, "data-dir is required", false},
		{"unknown", Spec{Name: "cifar"}, 0, 0, "dataset must be mnist or synthetic", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			train, test, err := Load(c.spec)
			if c.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), c.errMatch) {
					t.Fatalf("error %v, want %q", err, c.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if train.N != c.trainN || test.N != c.testN || len(test.Y) != test.N || len(test.X) != test.N*test.Dim {
				t.Fatalf("train %d, test %d (%d labels, %d values); want %d and %d", train.N, test.N, len(test.Y), len(test.X), c.trainN, c.testN)
			}
			if c.validationIsTest {
				whole := Synthetic(c.spec.Clients+c.spec.Validation, c.spec.Seed)
				_, val, _ := whole.HoldOut(c.spec.Validation, DefaultHoldOutSeed)
				if val.Y[0] != test.Y[0] || val.X[3] != test.X[3] {
					t.Error("the evaluation set is not the held-out split")
				}
			}
		})
	}
}

// TestLoadTransform: Spec.Transform maps the training set before the
// validation hold-out (the held-out examples are transformed) and the test
// set after --test-size cuts it (only the kept examples are transformed).
func TestLoadTransform(t *testing.T) {
	var seen []int
	double := func(d *Dataset) (*Dataset, error) {
		seen = append(seen, d.N)
		out := *d
		out.X = make([]float64, len(d.X))
		for i, v := range d.X {
			out.X[i] = 2 * v
		}
		return &out, nil
	}
	train, test, err := Load(Spec{Name: "synthetic", Clients: 30, TestSize: 7, Seed: 3, Transform: double})
	if err != nil {
		t.Fatal(err)
	}
	rawTrain, rawTest := Synthetic(30, 3), Synthetic(2000, 4)
	if train.X[5] != 2*rawTrain.X[5] || test.N != 7 || test.X[9] != 2*rawTest.X[9] {
		t.Fatalf("transform not applied: train %v vs %v, test n %d", train.X[5], rawTrain.X[5], test.N)
	}
	if len(seen) != 2 || seen[0] != 30 || seen[1] != 7 {
		t.Fatalf("transformed sets of sizes %v, want [30 7]", seen)
	}
	seen = nil
	_, val, err := Load(Spec{Name: "synthetic", Clients: 20, Validation: 10, Seed: 3, Transform: double})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != 30 || val.N != 10 {
		t.Fatalf("with validation: transformed %v (want [30]), validation has %d", seen, val.N)
	}
}
