package calculator_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/calculator"
)

// A page state is a query string keyed by the flags of `shuffledp account`;
// Compute answers it with every bound the command reports.
func ExampleCompute() {
	q, err := calculator.ParseQuery("mechanism=shuffle-gaussian&n=10000&sigma=5&steps=100&delta=1e-8")
	if err != nil {
		panic(err)
	}
	res, err := calculator.Compute(q)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Command)
	fmt.Printf("epsilon <= %s (%s)\n", res.Best.Text, res.Best.Winner)
	// Output:
	// shuffledp account --json --bound all --mechanism shuffle-gaussian --n 10000 --sigma 5 --steps 100 --delta 1e-8
	// epsilon <= 29.8269 (pld)
}
