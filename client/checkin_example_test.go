package client_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/client"
	"github.com/shuffledp/shuffledp/randomizer"
)

// A client's check-in decision for a round of shuffled check-in at rate
// 0.1, from its own randomness: a seeded stream here (SIMULATION ONLY; a
// deployment passes randomizer.NewCryptoSource()). Over 100,000 rounds it
// takes part in about a tenth.
func ExampleCheckIn() {
	src := randomizer.NewSeededSource(7)
	in := 0
	for range 100000 {
		ok, err := client.CheckIn(0.1, src)
		if err != nil {
			panic(err)
		}
		if ok {
			in++
		}
	}
	fmt.Println(in > 9700 && in < 10300)
	// Output: true
}
