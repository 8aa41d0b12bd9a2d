package account_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/account"
)

// The JSON of `shuffledp account --mechanism shuffle --n 2000 --eps0 0.5
// --steps 3 --delta 1e-6 --bound ccs21-upper2 --json`, from a JSON request.
func ExampleEvaluateJSON() {
	out, err := account.EvaluateJSON([]byte(`{"mechanism":"shuffle","n":2000,"eps0":0.5,"steps":3,"delta":1e-6,"bound":"ccs21-upper2"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.40s...\n", out)
	_, err = account.EvaluateJSON([]byte(`{"delta":2}`))
	fmt.Println(err)
	// Output:
	// {
	//   "bound": "ccs21-upper2",
	//   "epsilon"...
	// --delta must be in (0,1), got 2
}

// Evaluate of a request built in Go: the zero Given counts every non-zero
// field as given.
func ExampleEvaluate() {
	a, err := account.Evaluate(account.Request{Mechanism: "shuffle", Bound: "ccs21-upper2", N: 2000, Eps0: 0.5, Steps: 3, Delta: 1e-6})
	if err != nil {
		fmt.Println(err)
		return
	}
	o := a.Output()
	fmt.Println(o.Mechanism, o.N, o.K, o.Bound, o.Kind, o.Epsilon > 0)
	// Output: shuffle 2000 2000 ccs21-upper2 upper true
}
