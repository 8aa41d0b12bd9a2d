package training_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/training"
)

// The privacy event each round of a Gaussian run debits: shuffled check-in
// at rate 0.1 of 60,000 clients (ICLR'23 Fig. 1b) under the default
// replace-one adjacency, the same under zero-out (the paper's convention),
// and the central-DP baseline of Fig. 1a at sigma_CDP = sqrt(60) x 0.86
// under its default add-remove adjacency.
func ExampleConfig_RoundEvent() {
	lr, _ := training.ParseLRSchedule("4")
	checkIn := training.Config{Clients: 60000, Randomizer: training.RandomizerGaussian,
		Participation: training.ParticipationCheckIn, Rate: 0.1, Sigma: 5, Clip: 0.01,
		Delta: 1e-5, Epochs: 554, LR: lr}
	if err := checkIn.Validate(); err != nil {
		panic(err)
	}
	fmt.Println(checkIn.RoundEvent(), "expected batch", checkIn.Sample, "rounds", checkIn.TotalRounds())
	paper := checkIn
	paper.Adjacency = event.AdjacencyZeroOut
	if err := paper.Validate(); err != nil {
		panic(err)
	}
	fmt.Println(paper.RoundEvent())

	central := training.Config{Clients: 60000, Sample: 60, Randomizer: training.RandomizerCentralGaussian,
		Sigma: 6.661531355476758, Clip: 0.05, Delta: 1e-5, Epochs: 10, LR: lr}
	if err := central.Validate(); err != nil {
		panic(err)
	}
	fmt.Println(central.RoundEvent())
	// Output:
	// checkin-gaussian(n=60000, rate=0.1, sigma=5, adjacency=replace-one) expected batch 6000 rounds 5540
	// checkin-gaussian(n=60000, rate=0.1, sigma=5, adjacency=zero-out)
	// sampled-gaussian(n=60000, rate=0.001, sigma=6.661531355476758, adjacency=add-remove)
}
